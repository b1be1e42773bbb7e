import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invoicePageQueries, type InvoiceFilter } from '../../src/invoices/invoices.repo.js';
import type { PageRequest } from '../../src/db/paging.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { HttpClient } from '../helpers/http.js';
import { ADDRESSES, addWallet, createInvoice, newKey, shop } from '../helpers/shop.js';
import { sqliteOnly } from '../helpers/database.js';

interface Row {
  id: string;
  created_at: string;
  status: string;
  wallet_id: string;
  merchant_order_id: string;
}

/** The list order: newest first, then id. */
const listOrder = (a: Row, b: Row) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? -1 : 1);

/** Every page of a query, following starting_after; checks has_more on the way. */
async function walk(client: HttpClient, query: string, limit: number, bearer?: string): Promise<Row[][]> {
  const pages: Row[][] = [];
  let after: string | undefined;
  for (;;) {
    const q = `${query}${query ? '&' : ''}limit=${limit}${after ? `&starting_after=${after}` : ''}`;
    const res = await client.get(`/invoices?${q}`, bearer ? { bearer } : {});
    assert.equal(res.status, 200, res.text);
    const page = res.body.invoices as Row[];
    pages.push(page);
    assert.ok(page.length <= limit);
    if (!res.body.has_more) return pages;
    assert.equal(page.length, limit, 'a page with more behind it is full');
    after = page.at(-1)!.id;
  }
}

async function seed(t: TestApp) {
  const s = await shop(t, ADDRESSES[0]);
  const second = await addWallet(s.client, ADDRESSES[1], 'Second');
  const all: Row[] = [];
  for (let i = 0; i < 23; i++) {
    // Several invoices share a millisecond: the id orders them.
    if (i % 3 === 0) t.clock.advance(60_000);
    const res = await createInvoice(s.client, { amount: `${10 + i}`, wallet_id: i % 2 === 0 ? s.walletId : second });
    assert.equal(res.status, 201, res.text);
    all.push(res.body.invoice);
  }
  // Some cancelled (expired), so statuses differ.
  for (const inv of all.filter((_, i) => i % 4 === 1)) {
    const res = await s.client.post(`/invoices/${inv.id}/cancel`, {});
    assert.equal(res.status, 200, res.text);
    inv.status = 'expired';
  }
  all.sort(listOrder);
  return { s, second, all };
}

test('GET /invoices pages newest first by cursor, forwards and backwards, with has_more', async () => {
  const t = await startTestApp();
  try {
    const { s, all } = await seed(t);
    const whole = await s.client.get('/invoices');
    assert.equal(whole.status, 200);
    assert.deepEqual(
      whole.body.invoices.map((i: Row) => i.id),
      all.map((i) => i.id),
      'no limit: all of them (500 at most), newest first',
    );
    assert.equal(whole.body.has_more, false);

    for (const limit of [1, 4, 5, 23]) {
      const pages = await walk(s.client, '', limit);
      assert.deepEqual(
        pages.flat().map((i) => i.id),
        all.map((i) => i.id),
        `limit ${limit}: every invoice once, in order`,
      );
    }
    // Backwards from the last page: ending_before the first id of a page gives the page before it.
    const pages = await walk(s.client, '', 5);
    for (let p = pages.length - 1; p > 0; p--) {
      const res = await s.client.get(`/invoices?limit=5&ending_before=${pages[p]![0]!.id}`);
      assert.deepEqual(
        res.body.invoices.map((i: Row) => i.id),
        pages[p - 1]!.map((i) => i.id),
      );
      assert.equal(res.body.has_more, p - 1 > 0, 'has_more: newer invoices remain');
    }
    // An API key with invoices:read sees the same list.
    const key = await newKey(s.client, { name: 'reader', scopes: ['invoices:read'] });
    assert.deepEqual(
      (await walk(s.client, '', 7, key.secret)).flat().map((i) => i.id),
      all.map((i) => i.id),
    );
  } finally {
    await t.close();
  }
});

test('GET /invoices filters: status (repeatable), wallet_id, merchant_order_id, created_gte and created_lt, combined and paged', async () => {
  const t = await startTestApp();
  try {
    const { s, second, all } = await seed(t);
    const times = [...new Set(all.map((i) => i.created_at))].sort();
    const from = times[2]!;
    const to = times[5]!;
    const cases: Array<[string, (i: Row) => boolean]> = [
      ['status=expired', (i) => i.status === 'expired'],
      ['status=pending', (i) => i.status === 'pending'],
      ['status=pending&status=expired', () => true],
      ['status=confirmed', () => false],
      [`wallet_id=${second}`, (i) => i.wallet_id === second],
      [`wallet_id=${s.walletId}&status=expired`, (i) => i.wallet_id === s.walletId && i.status === 'expired'],
      [`created_gte=${from}`, (i) => i.created_at >= from],
      [`created_lt=${encodeURIComponent(to)}`, (i) => i.created_at < to],
      [
        `created_gte=${from}&created_lt=${to}&status=pending&wallet_id=${second}`,
        (i) => i.created_at >= from && i.created_at < to && i.status === 'pending' && i.wallet_id === second,
      ],
      [`merchant_order_id=${all[3]!.merchant_order_id}`, (i) => i.id === all[3]!.id],
      [`merchant_order_id=${all[3]!.merchant_order_id}&status=confirmed`, () => false],
      ['merchant_order_id=no-such-order', () => false],
      ['wallet_id=wal_unknown', () => false],
    ];
    for (const [query, keep] of cases) {
      const expected = all.filter(keep).map((i) => i.id);
      for (const limit of [2, 500]) {
        const got = (await walk(s.client, query, limit)).flat().map((i) => i.id);
        assert.deepEqual(got, expected, `${query} limit=${limit}`);
      }
    }
  } finally {
    await t.close();
  }
});

test('strict query strings: an unknown or malformed parameter is 400 validation_error naming it; a foreign cursor is 400 too', async () => {
  const t = await startTestApp();
  try {
    const { s, all } = await seed(t);
    const other = await shop(t, ADDRESSES[2], 'Other');
    const theirs = (await createInvoice(other.client, { amount: '3', wallet_id: other.walletId })).body.invoice.id as string;
    const bad: Array<[string, string]> = [
      ['/invoices?limit=0', 'query.limit'],
      ['/invoices?limit=501', 'query.limit'],
      ['/invoices?limit=5x', 'query.limit'],
      ['/invoices?limit=', 'query.limit'],
      ['/invoices?limit=1e2', 'query.limit'],
      ['/invoices?limit=1&limit=2', 'query.limit'],
      ['/invoices?status=paid', 'query.status.0'],
      ['/invoices?status=pending&status=bogus', 'query.status.1'],
      ['/invoices?created_gte=yesterday', 'query.created_gte'],
      ['/invoices?created_lt=2026-13-01T00:00:00Z', 'query.created_lt'],
      ['/invoices?stauts=pending', 'query.stauts'],
      ['/invoices?starting_after=inv_nope', 'query.starting_after'],
      [`/invoices?ending_before=${theirs}`, 'query.ending_before'],
      [`/invoices?starting_after=${all[0]!.id}&ending_before=${all[3]!.id}`, 'query.ending_before'],
      // Operations without query parameters take none.
      [`/invoices/${all[0]!.id}?expand=wallet`, 'query.expand'],
      ['/wallets?page=2', 'query.page'],
      ['/events?limit=9999', 'query.limit'],
      ['/events?type=invoice.paid', 'query.type.0'],
    ];
    for (const [path, param] of bad) {
      const res = await s.client.get(path);
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'validation_error', path);
      assert.ok(
        res.body.error.details.some((d: { path: string }) => d.path === param),
        `${path} names ${param}: ${JSON.stringify(res.body.error.details)}`,
      );
    }
    // Bodies and query strings alike: a POST with an unknown query parameter changes nothing.
    const before = (await s.client.get('/invoices')).body.invoices.length;
    const res = await s.client.post(
      '/invoices?dry_run=1',
      { merchant_order_id: 'q-1', amount: '1', wallet_id: s.walletId },
      { headers: { 'idempotency-key': 'q-1' } },
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details[0].path, 'query.dry_run');
    assert.equal((await s.client.get('/invoices')).body.invoices.length, before);
  } finally {
    await t.close();
  }
});

test('each filtered page is one index range read: no table scan and no sort, whatever the filter', { skip: sqliteOnly }, async () => {
  const t = await startTestApp();
  try {
    const { s, second } = await seed(t);
    const explain = (q: { sql: string; parameters: readonly unknown[] }) =>
      (t.deps.sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.parameters) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    const cursor = { createdAt: t.clock.now() - 60_000, id: 'inv_x' };
    const filters: InvoiceFilter[] = [
      {},
      { statuses: ['pending'] },
      { statuses: ['pending', 'expired', 'review'] },
      { walletId: second },
      { walletId: second, statuses: ['expired'] },
    ];
    const pages: PageRequest[] = [
      { limit: 100 },
      { limit: 100, startingAfter: cursor },
      { limit: 100, endingBefore: cursor },
      { limit: 100, createdGte: 0, createdLt: t.clock.now() },
    ];
    for (const filter of filters) {
      for (const page of pages) {
        for (const q of invoicePageQueries(t.deps.db, s.merchant.id, filter, page)) {
          const plan = explain(q);
          assert.match(
            plan,
            /^SEARCH invoices USING (COVERING )?INDEX invoices_merchant_(created|status_created|wallet_created)_idx/,
            `${JSON.stringify(filter)} ${JSON.stringify(page)}: ${plan}`,
          );
          assert.doesNotMatch(plan, /TEMP B-TREE|SCAN/, `${JSON.stringify(filter)}: ${plan}`);
        }
      }
    }
    const [byOrder] = invoicePageQueries(t.deps.db, s.merchant.id, { merchantOrderId: 'order-1' }, { limit: 100 });
    assert.match(explain(byOrder!), /USING INDEX invoices_order_uq/);
    // A search (q=): each of its ranges an index look-up, the invoices a transaction names by their ids.
    const search = { orderId: '25', amount: 25_000_000n, invoiceIds: ['inv_a', 'inv_b'], walletIds: [second] };
    for (const statuses of [undefined, ['pending' as const]]) {
      const plans = invoicePageQueries(t.deps.db, s.merchant.id, { search, statuses }, { limit: 100, startingAfter: cursor }).map(explain);
      assert.match(plans[0]!, /^SEARCH invoices USING INDEX invoices_order_uq/);
      assert.match(plans[1]!, /^SEARCH invoices USING INDEX invoices_merchant_payable_created_idx/);
      assert.match(plans[2]!, /^SEARCH invoices USING INDEX invoices_merchant_base_created_idx/);
      for (const plan of plans.slice(3, 5)) assert.match(plan, /^SEARCH invoices USING INDEX sqlite_autoindex_invoices_1 \(id=\?\)/);
      for (const plan of plans.slice(5)) assert.match(plan, /^SEARCH invoices USING INDEX invoices_merchant_wallet_created_idx/);
      for (const plan of plans) assert.doesNotMatch(plan, /SCAN|TEMP B-TREE/, plan);
    }
  } finally {
    await t.close();
  }
});
