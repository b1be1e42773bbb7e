import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeTransaction } from '../../src/db/database.js';
import { insertEvent } from '../../src/events/events.repo.js';
import { formatAmount, micros } from '../../src/lib/amounts.js';
import { NETWORK as TRON_NETWORK, USDT_CONTRACT } from '../helpers/tron-samples.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { sqliteOnly } from '../helpers/database.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ config: { support: { staff_emails: ['Staff@Shop.Example'] } } });
});
after(() => t.close());

let seq = 0;
/** Invoice rows as the invoices feature stores them (that feature is built in parallel). */
async function addInvoice(merchantId: string, walletId: string, status: 'pending' | 'confirmed' | 'expired' | 'review', base: number, adjustment: number) {
  seq += 1;
  const now = t.clock.now();
  await t.deps.db
    .insertInto('invoices')
    .values({
      id: `inv_test${seq}`,
      merchant_id: merchantId,
      wallet_id: walletId,
      network: TRON_NETWORK,
      token: 'USDT',
      token_contract: USDT_CONTRACT,
      wallet_address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
      merchant_order_id: `order-${seq}`,
      idempotency_key: `idem-${seq}`,
      request_fingerprint: 'f',
      base_amount: base,
      adjustment,
      payable_amount: base + adjustment,
      status,
      checkout_token: `chk-${seq}`,
      created_at: now,
      expires_at: now + 20 * 60_000,
      reserved_until: now + 90 * 86_400_000,
    })
    .execute();
}

test('GET /me: the full Dashboard shape for a new merchant', async () => {
  const { merchant, client } = await signedInMerchant(t, { name: 'Corner Shop' });
  const res = await client.get('/me');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    merchant: {
      id: merchant.id,
      name: 'Corner Shop',
      email: merchant.email,
      mode: 'live',
      support_staff: false,
      checkout_qr: 'address',
      markup_percent: '0',
      underpayment_tolerance: null,
      underpayment_auto_accept: false,
    },
    wallets: [],
    invoices: [],
    events: [],
    api_keys: [],
    webhooks: [],
    deliveries: [],
    late_payments: [],
    unmatched_transfers: [],
    stats: {
      invoice_counts: { total: 0, pending: 0, confirmed: 0, expired: 0, review: 0 },
      confirmed_totals: { base_amount: '0.000000', adjustment: '0.000000', payable_amount: '0.000000', received_amount: '0.000000' },
    },
  });
  assert.equal(res.headers.get('cache-control'), 'no-store');
});

test("stats count invoices by status and sum confirmed amounts exactly; events are the merchant's own, newest first", async () => {
  const { merchant, client } = await signedInMerchant(t);
  const other = await signedInMerchant(t);
  for (const m of [merchant, other.merchant]) {
    await t.deps.db
      .insertInto('wallets')
      .values({
        id: `wal_${m.id}`,
        merchant_id: m.id,
        label: 'Main',
        address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
        network: TRON_NETWORK,
        created_at: t.clock.now(),
      })
      .execute();
  }
  const wallet = `wal_${merchant.id}`;
  await addInvoice(merchant.id, wallet, 'confirmed', 100_000_000, 1);
  // Ten invoices at the 1 000 000 000 USDT maximum: the sum passes 2^53 micro-units.
  for (let i = 0; i < 10; i++) await addInvoice(merchant.id, wallet, 'confirmed', 1_000_000_000_000_000, 1);
  await addInvoice(merchant.id, wallet, 'pending', 5_000_000, 2);
  await addInvoice(merchant.id, wallet, 'expired', 7_000_000, 3);
  await addInvoice(merchant.id, wallet, 'review', 8_000_000, 4);
  await addInvoice(other.merchant.id, `wal_${other.merchant.id}`, 'confirmed', 1_000_000, 5);
  await writeTransaction(t.deps.db, async (_trx, tx) =>
    insertEvent(tx, { merchantId: merchant.id, type: 'invoice.created', invoiceId: 'inv_test1', data: { n: 1 } }, t.clock.now()),
  );
  t.clock.advance(1000);
  await writeTransaction(t.deps.db, async (_trx, tx) =>
    insertEvent(tx, { merchantId: merchant.id, type: 'invoice.confirmed', invoiceId: 'inv_test1', data: { n: 2 } }, t.clock.now()),
  );
  await writeTransaction(t.deps.db, async (_trx, tx) =>
    insertEvent(tx, { merchantId: other.merchant.id, type: 'invoice.created', data: { n: 3 } }, t.clock.now()),
  );

  const res = await client.get('/me');
  assert.deepEqual(res.body.stats, {
    invoice_counts: { total: 14, pending: 1, confirmed: 11, expired: 1, review: 1 },
    confirmed_totals: {
      base_amount: '10000000100.000000',
      adjustment: '0.000011',
      payable_amount: '10000000100.000011',
      received_amount: '10000000100.000011',
    },
  });
  assert.deepEqual(
    res.body.events.map((e: { data: { n: number } }) => e.data.n),
    [2, 1],
  );
  const event = res.body.events[0];
  assert.deepEqual(Object.keys(event).sort(), ['created_at', 'data', 'id', 'mode', 'type']);
  assert.equal(event.type, 'invoice.confirmed');
  assert.equal(event.mode, 'live');
  assert.match(event.id, /^evt_/);
});

test('support_staff comes from support.staff_emails, case-insensitively', async () => {
  const { client } = await signedInMerchant(t, { email: 'staff@shop.example' });
  assert.equal((await client.get('/me')).body.merchant.support_staff, true);
});

test('PATCH /me changes the name and answers the Dashboard; 1 to 100 characters, nothing else accepted', async () => {
  const { client } = await signedInMerchant(t);
  const res = await client.patch('/me', { name: '  Bazaar  ' });
  assert.equal(res.status, 200);
  assert.equal(res.body.merchant.name, 'Bazaar');
  assert.ok(Array.isArray(res.body.wallets) && res.body.stats.invoice_counts.total === 0);
  assert.equal((await client.get('/me')).body.merchant.name, 'Bazaar');
  for (const body of [{ name: '' }, { name: '   ' }, { name: 'n'.repeat(101) }, { name: null }, {}, { name: 'ok', email: 'x@y.z' }]) {
    const bad = await client.patch('/me', body);
    assert.equal(bad.status, 400, JSON.stringify(body));
    assert.equal(bad.body.error.code, 'validation_error');
  }
  assert.equal((await client.patch('/me', { name: 'n'.repeat(100) })).status, 200);
  assert.equal((await t.client().patch('/me', { name: 'x' })).status, 401);
});

test('a wrong method on /me is 405 with Allow, even without a session', async () => {
  const res = await t.client().delete('/me');
  assert.equal(res.status, 405);
  assert.equal(res.body.error.code, 'method_not_allowed');
  assert.match(res.headers.get('allow') ?? '', /GET.*PATCH/);
});

test("GET /me lists the merchant's wallets, invoices and API keys (never a secret), and nobody else's", async () => {
  const { client } = await signedInMerchant(t);
  const other = await signedInMerchant(t);
  const wallet = await client.post('/wallets', { label: 'Main', address: 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx' });
  assert.equal(wallet.status, 201);
  const key = await client.post('/api-keys', { name: 'shop' });
  assert.equal(key.status, 201);
  const invoice = await client.post(
    '/invoices',
    { merchant_order_id: 'o-1', amount: '10', wallet_id: wallet.body.wallet.id },
    { headers: { 'idempotency-key': 'k-1' } },
  );
  assert.equal(invoice.status, 201);
  await other.client.post('/wallets', { label: 'Other', address: 'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi' });

  const res = await client.get('/me');
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.body.wallets.map((w: any) => w.id),
    [wallet.body.wallet.id],
  );
  assert.deepEqual(
    res.body.invoices.map((i: any) => i.id),
    [invoice.body.invoice.id],
  );
  assert.equal(res.body.invoices[0].payable_amount, invoice.body.invoice.payable_amount);
  assert.deepEqual(
    res.body.api_keys.map((k: any) => k.id),
    [key.body.api_key.id],
  );
  assert.ok(!res.text.includes(key.body.secret), 'the key secret is never listed');
  assert.deepEqual(
    res.body.events.map((e: any) => e.type),
    ['invoice.created'],
  );
  assert.equal(res.body.stats.invoice_counts.pending, 1);
});

/** The stats recounted from every invoice row (exact, as BigInt), in invoice_stats' shape. */
function recount(merchantId: string) {
  const rows = t.deps.sqlite
    .prepare(
      'SELECT status, CAST(base_amount AS TEXT) AS b, CAST(adjustment AS TEXT) AS a, CAST(payable_amount AS TEXT) AS p, CAST(received_amount AS TEXT) AS r FROM invoices WHERE merchant_id = ?',
    )
    .all(merchantId) as Array<{ status: string; b: string; a: string; p: string; r: string | null }>;
  const by = new Map<string, { invoices: number; base: bigint; adjustment: bigint; payable: bigint; received: bigint }>();
  for (const r of rows) {
    const s = by.get(r.status) ?? { invoices: 0, base: 0n, adjustment: 0n, payable: 0n, received: 0n };
    // Received: the amount applied by hand when there is one, else the payable amount of a confirmed invoice.
    const received = r.r !== null ? BigInt(r.r) : r.status === 'confirmed' ? BigInt(r.p) : 0n;
    by.set(r.status, {
      invoices: s.invoices + 1,
      base: s.base + BigInt(r.b),
      adjustment: s.adjustment + BigInt(r.a),
      payable: s.payable + BigInt(r.p),
      received: s.received + received,
    });
  }
  return Object.fromEntries([...by].filter(([, s]) => s.invoices > 0).sort(([a], [b]) => a.localeCompare(b)));
}

function kept(merchantId: string) {
  const rows = t.deps.sqlite
    .prepare(
      `SELECT status, invoices, CAST(base_units AS TEXT) AS bu, CAST(base_micros AS TEXT) AS bm, CAST(adjustment AS TEXT) AS a,
         CAST(payable_units AS TEXT) AS pu, CAST(payable_micros AS TEXT) AS pm, CAST(received_units AS TEXT) AS ru, CAST(received_micros AS TEXT) AS rm
       FROM invoice_stats WHERE merchant_id = ? AND invoices > 0 ORDER BY status`,
    )
    .all(merchantId) as Array<{ status: string; invoices: number; bu: string; bm: string; a: string; pu: string; pm: string; ru: string; rm: string }>;
  return Object.fromEntries(
    rows.map((r) => [
      r.status,
      {
        invoices: r.invoices,
        base: BigInt(r.bu) * 1_000_000n + BigInt(r.bm),
        adjustment: BigInt(r.a),
        payable: BigInt(r.pu) * 1_000_000n + BigInt(r.pm),
        received: BigInt(r.ru) * 1_000_000n + BigInt(r.rm),
      },
    ]),
  );
}

test(
  'the stats rows the triggers keep equal a recount after inserts, status moves, amount edits and deletes; no overflow at 10 000 maximum-price invoices',
  { skip: sqliteOnly },
  async () => {
    const { merchant, client } = await signedInMerchant(t);
    const wallet = `wal_${merchant.id}`;
    await t.deps.db
      .insertInto('wallets')
      .values({
        id: wallet,
        merchant_id: merchant.id,
        label: 'Main',
        address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
        network: TRON_NETWORK,
        created_at: t.clock.now(),
      })
      .execute();
    const first = seq + 1;
    for (let i = 0; i < 40; i++) await addInvoice(merchant.id, wallet, 'pending', 1_000_000 * (i + 1) + i, i + 1);
    assert.deepEqual(kept(merchant.id), recount(merchant.id));
    const update = t.deps.sqlite.prepare('UPDATE invoices SET status = ? WHERE id = ?');
    // pending -> confirmed / expired / review; review -> confirmed / expired (every move the product makes).
    for (let i = 0; i < 40; i++) update.run(['confirmed', 'expired', 'review', 'confirmed'][i % 4], `inv_test${first + i}`);
    for (let i = 2; i < 40; i += 8) update.run('expired', `inv_test${first + i}`);
    assert.deepEqual(kept(merchant.id), recount(merchant.id));
    t.deps.sqlite.prepare('UPDATE invoices SET base_amount = base_amount + 7, payable_amount = payable_amount + 7 WHERE id = ?').run(`inv_test${first}`);
    t.deps.sqlite.prepare('DELETE FROM invoices WHERE id IN (?, ?)').run(`inv_test${first + 1}`, `inv_test${first + 3}`);
    assert.deepEqual(kept(merchant.id), recount(merchant.id));
    // A transfer applied by hand records what was received (less than payable here, and more there).
    const received = t.deps.sqlite.prepare('UPDATE invoices SET received_amount = ? WHERE id = ?');
    received.run(1_999_999, `inv_test${first + 8}`);
    received.run(9_000_123, `inv_test${first + 4}`);
    assert.deepEqual(kept(merchant.id), recount(merchant.id));
    assert.notEqual(recount(merchant.id).confirmed!.received, recount(merchant.id).confirmed!.payable);
    // A failed statement changes nothing: a duplicate order id rolls its row and its trigger back.
    await assert.rejects(
      addInvoice(merchant.id, wallet, 'confirmed', 5, 5).then(() =>
        t.deps.sqlite.prepare("UPDATE invoices SET merchant_order_id = 'order-dup' WHERE id IN (?, ?)").run(`inv_test${first + 4}`, `inv_test${first + 5}`),
      ),
      /UNIQUE/,
    );
    assert.deepEqual(kept(merchant.id), recount(merchant.id));

    // 10 000 confirmed invoices at the maximum price: their micro-unit sum (1e19) is past 2^63.
    const copy = t.deps.sqlite.prepare(
      `INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address, merchant_order_id, idempotency_key,
       request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token, created_at, expires_at, reserved_until)
     SELECT 'inv_max' || @i, merchant_id, wallet_id, network, token, token_contract, wallet_address, 'max-' || @i, 'max-' || @i,
       request_fingerprint, 1000000000000000, 999999, 1000000000999999, 'confirmed', 'tok-max-' || @i, created_at, expires_at, reserved_until
     FROM invoices WHERE id = @id`,
    );
    t.deps.sqlite.transaction(() => {
      for (let i = 0; i < 10_000; i++) copy.run({ i, id: `inv_test${first}` });
    })();
    assert.deepEqual(kept(merchant.id), recount(merchant.id));
    const expected = recount(merchant.id).confirmed!;
    const res = await client.get('/me');
    assert.equal(res.status, 200);
    assert.equal(res.body.stats.invoice_counts.confirmed, expected.invoices);
    assert.deepEqual(res.body.stats.confirmed_totals, {
      base_amount: formatAmount(micros(expected.base)),
      adjustment: formatAmount(micros(expected.adjustment)),
      payable_amount: formatAmount(micros(expected.payable)),
      received_amount: formatAmount(micros(expected.received)),
    });
    assert.ok(expected.payable > 2n ** 63n, 'the total is past what one SQLite integer holds');
  },
);
