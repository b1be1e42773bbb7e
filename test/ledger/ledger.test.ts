import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { writeTransaction } from '../../src/db/database.js';
import { createInvoiceOrThrow } from '../../src/invoices/invoices.service.js';
import { csvLines, neutralizeCell } from '../../src/ledger/ledger.service.js';
import { ADDRESSES, createInvoice, newKey, shop } from '../helpers/shop.js';

const HEADER =
  'invoice_id,merchant_order_id,status,created_at,expires_at,confirmed_at,network,token,token_contract,wallet_address,base_amount,adjustment,payable_amount,tx_hash,late_payments,description,received_amount,price_amount,price_currency,price_rate,price_markup_percent,price_rate_at';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

/** A minimal RFC 4180 parser for assertions. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  assert.equal(cell, '');
  assert.equal(row.length, 0, 'the file ends with CRLF');
  return rows;
}

test('GET /ledger.csv: header, one row per invoice with separate base, adjustment and payable columns', async () => {
  const s = await shop(t, ADDRESSES[0]);
  const a = (await createInvoice(s.client, { amount: '10', wallet_id: s.walletId, merchant_order_id: 'L-1', description: 'plain' })).body.invoice;
  t.clock.advance(1000);
  const b = (await createInvoice(s.client, { amount: '10', wallet_id: s.walletId, merchant_order_id: 'L-2' })).body.invoice;
  const res = await s.client.get('/ledger.csv');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/csv; charset=utf-8/);
  assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="ledger-\d{4}-\d{2}-\d{2}\.csv"$/);
  const rows = parseCsv(res.text);
  assert.equal(rows[0]!.join(','), HEADER);
  assert.equal(rows.length, 3);
  assert.deepEqual(rows[1], [
    b.id,
    'L-2',
    'pending',
    b.created_at,
    b.expires_at,
    '',
    'tron-mainnet',
    'USDT',
    b.token_contract,
    ADDRESSES[0],
    '10.000000',
    '0.000002',
    '10.000002',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
  ]);
  assert.deepEqual(rows[2], [
    a.id,
    'L-1',
    'pending',
    a.created_at,
    a.expires_at,
    '',
    'tron-mainnet',
    'USDT',
    a.token_contract,
    ADDRESSES[0],
    '10.000000',
    '0.000001',
    '10.000001',
    '',
    '',
    'plain',
    '',
    '',
    '',
    '',
    '',
    '',
  ]);
});

test('GET /ledger.csv?created_gte&created_lt: a range of creation times (dates are midnight UTC), bad values are a 400 naming them', async () => {
  const s = await shop(t, ADDRESSES[0]);
  const day = (iso: string) => iso.slice(0, 10);
  const before = (await createInvoice(s.client, { amount: '4', wallet_id: s.walletId, merchant_order_id: 'R-0' })).body.invoice;
  t.clock.advance(86_400_000);
  const inside = (await createInvoice(s.client, { amount: '4', wallet_id: s.walletId, merchant_order_id: 'R-1' })).body.invoice;
  t.clock.advance(86_400_000);
  const after = (await createInvoice(s.client, { amount: '4', wallet_id: s.walletId, merchant_order_id: 'R-2' })).body.invoice;
  const from = day(inside.created_at);
  const to = day(after.created_at);
  const res = await s.client.get(`/ledger.csv?created_gte=${from}&created_lt=${to}`);
  assert.equal(res.status, 200, res.text);
  const ids = parseCsv(res.text)
    .slice(1)
    .map((r) => r[0]);
  assert.ok(ids.includes(inside.id));
  assert.ok(!ids.includes(before.id) && !ids.includes(after.id), 'the range leaves out the day before and the end day');
  assert.match(res.headers.get('content-disposition') ?? '', new RegExp(`filename="ledger-${from}_${to}\\.csv"`));
  const exact = await s.client.get(`/ledger.csv?created_gte=${encodeURIComponent(after.created_at)}`);
  assert.deepEqual(
    parseCsv(exact.text)
      .slice(1)
      .map((r) => r[0])
      .filter((id) => [before.id, inside.id, after.id].includes(id!)),
    [after.id],
  );
  // The console's form leaves empty fields empty: no bound.
  const all = await s.client.get('/ledger.csv?created_gte=&created_lt=');
  assert.equal(all.status, 200, all.text);
  assert.ok([before.id, inside.id, after.id].every((id) => all.text.includes(id)));
  for (const bad of ['created_gte=yesterday', 'created_lt=2026-13-45', 'from=2026-01-01']) {
    const refused = await s.client.get(`/ledger.csv?${bad}`);
    assert.equal(refused.status, 400, bad);
    assert.equal(refused.body.error.details[0].path, `query.${bad.split('=')[0]}`);
  }
});

test('escaping: quotes, commas, line breaks and formula prefixes', async () => {
  const s = await shop(t, ADDRESSES[1]);
  const cases = ['=HYPERLINK("http://x")', '+1', '-2', '@SUM(A1)', '\tTab', 'a,b', 'say "hi"', 'two\nlines', 'ok'];
  for (const [i, description] of cases.entries()) {
    await createInvoice(s.client, { amount: '1', wallet_id: s.walletId, merchant_order_id: i === 0 ? '=cmd|x' : `E-${i}`, description });
    t.clock.advance(1000);
  }
  const res = await s.client.get('/ledger.csv');
  const rows = parseCsv(res.text).slice(1).reverse();
  assert.deepEqual(
    rows.map((r) => r[15]),
    ['\'=HYPERLINK("http://x")', "'+1", "'-2", "'@SUM(A1)", "'\tTab", 'a,b', 'say "hi"', 'two\nlines', 'ok'],
  );
  assert.equal(rows[0]![1], "'=cmd|x");
  assert.ok(res.text.includes('"say ""hi"""'));
  assert.ok(res.text.includes('"a,b"'));
  assert.equal(neutralizeCell('\rx'), "'\rx");
  assert.equal(neutralizeCell('x=1'), 'x=1');
  assert.equal(csvLines([['a', 'b"c']]), 'a,"b""c"\r\n');
});

test('only the caller’s invoices; ledger:read for keys; session or key', async () => {
  const s = await shop(t, ADDRESSES[2]);
  await createInvoice(s.client, { amount: '2', wallet_id: s.walletId, merchant_order_id: 'mine' });
  const other = await signedInMerchant(t);
  const theirs = await other.client.get('/ledger.csv');
  assert.equal(theirs.status, 200);
  assert.equal(theirs.text, `${HEADER}\r\n`);
  const ledgerKey = await newKey(s.client, { name: 'books', scopes: ['ledger:read'] });
  const invoiceKey = await newKey(s.client, { name: 'shop', scopes: ['invoices:read', 'invoices:write'] });
  const api = t.client({ origin: null });
  const ok = await api.get('/ledger.csv', { bearer: ledgerKey.secret });
  assert.equal(ok.status, 200);
  assert.ok(ok.text.includes(',mine,'));
  const denied = await api.get('/ledger.csv', { bearer: invoiceKey.secret });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error.code, 'insufficient_scope');
  assert.equal((await api.get('/ledger.csv')).status, 401);
});

test('many invoices stream page by page: every row exactly once, in order', async () => {
  const s = await shop(t, ADDRESSES[3]);
  // 2 500 invoices over many pages, many sharing a created_at (ties are ordered by id).
  const ids = new Set<string>();
  // Seeded through the real creation code in a few transactions (HTTP adds nothing here).
  for (let batch = 0; batch < 25; batch++) {
    await writeTransaction(t.deps.db, async (_trx, tx) => {
      for (let i = 0; i < 100; i++) {
        const n = batch * 100 + i;
        const body = { merchant_order_id: `S-${n}`, amount: '3', wallet_id: s.walletId, expires_in_minutes: 20 };
        ids.add((await createInvoiceOrThrow(tx, t.deps, { merchantId: s.merchant.id, idempotencyKey: `S-${n}`, body })).invoice.id);
      }
    });
    if (batch % 3 === 0) t.clock.advance(1000);
  }
  // SQLite calls are synchronous: seeding never yielded to I/O, so let the client see any pooled
  // keep-alive connection the server closed meanwhile before reusing it.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const res = await s.client.get('/ledger.csv');
  const rows = parseCsv(res.text).slice(1);
  assert.equal(rows.length, 2500);
  assert.deepEqual(new Set(rows.map((r) => r[0])), ids);
  for (let i = 1; i < rows.length; i++) {
    const [prev, cur] = [rows[i - 1]!, rows[i]!];
    assert.ok(prev[3]! > cur[3]! || (prev[3] === cur[3] && prev[0]! < cur[0]!), `order at row ${i}`);
  }
});
