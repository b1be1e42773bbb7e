import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, newKey, renewSession, shop } from '../helpers/shop.js';

const DAY = 86_400_000;

test('exhaustion, then reuse of the least recently used expired amount as a review invoice', async () => {
  // The pool share is off: this test is about the pool as a whole (squatting.test.ts has the share).
  const t = await startTestApp({ config: { invoices: { max_adjustment: '0.000003', shared_pool_max_percent: 100 } } });
  try {
    const a = await shop(t, ADDRESSES[0]);
    const b = await shop(t, ADDRESSES[0]);
    const first = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId });
    t.clock.advance(1000);
    const second = await createInvoice(b.client, { amount: '5', wallet_id: b.walletId });
    t.clock.advance(1000);
    const third = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId });
    assert.deepEqual(
      [first, second, third].map((r) => r.body.invoice.payable_amount),
      ['5.000001', '5.000002', '5.000003'],
    );

    // Every amount reserved, for either merchant sharing the address: 409.
    for (const s of [a, b]) {
      const full = await createInvoice(s.client, { amount: '5', wallet_id: s.walletId });
      assert.equal(full.status, 409);
      assert.equal(full.body.error.code, 'amount_pool_exhausted');
    }
    // The answer is remembered until the first reservation of the range ends (no scan per 409).
    const cursor = await t.deps.db.selectFrom('amount_cursors').selectAll().where('base_amount', '=', 5_000_000).executeTakeFirstOrThrow();
    assert.equal(cursor.reusable_from, Date.parse(first.body.invoice.reserved_until));
    assert.equal(cursor.next_adjustment, 4);
    // Another price still works.
    assert.equal((await createInvoice(a.client, { amount: '6', wallet_id: a.walletId })).status, 201);

    // One millisecond before the first reservation ends: still exhausted.
    t.clock.set(Date.parse(first.body.invoice.reserved_until) - 1);
    await renewSession(t, a);
    await renewSession(t, b);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 409);

    // At its end the oldest amount comes back, in review.
    t.clock.set(Date.parse(first.body.invoice.reserved_until));
    const reused = await createInvoice(b.client, { amount: '5', wallet_id: b.walletId, merchant_order_id: 'reuse-1' });
    assert.equal(reused.status, 201, reused.text);
    const inv = reused.body.invoice;
    assert.equal(inv.status, 'review');
    assert.equal(inv.amount_reuse_review, true);
    assert.equal(inv.payable_amount, '5.000001');
    assert.equal(inv.reserved_until, new Date(t.clock.now() + 90 * DAY).toISOString());
    const events = await t.deps.db.selectFrom('events').select(['type', 'data']).where('invoice_id', '=', inv.id).orderBy('type').execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['invoice.created', 'invoice.review'],
    );
    assert.equal(JSON.parse(events[1]!.data).invoice.status, 'review');
    const reservation = await t.deps.db.selectFrom('amount_reservations').selectAll().where('amount', '=', 5_000_001).executeTakeFirstOrThrow();
    assert.equal(reservation.invoice_id, inv.id);

    // The next one is the second oldest; then the pool is exhausted again until the third ends.
    t.clock.advance(1000);
    const next = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId });
    assert.equal(next.body.invoice.payable_amount, '5.000002');
    assert.equal(next.body.invoice.status, 'review');
    const again = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'amount_pool_exhausted');
  } finally {
    await t.close();
  }
});

test('POST /invoices/{id}/review: accept or reject a paid review invoice, session only', async () => {
  const t = await startTestApp({ config: { invoices: { max_adjustment: '0.000001' } } });
  try {
    const s = await shop(t, ADDRESSES[1]);
    const original = await createInvoice(s.client, { amount: '8', wallet_id: s.walletId });
    const pendingReview = await s.client.post(`/invoices/${original.body.invoice.id}/review`, { decision: 'accept' });
    assert.equal(pendingReview.status, 409);
    assert.equal(pendingReview.body.error.code, 'invoice_not_reviewable');

    t.clock.advance(90 * DAY);
    await renewSession(t, s);
    const r1 = (await createInvoice(s.client, { amount: '8', wallet_id: s.walletId })).body.invoice;
    assert.equal(r1.status, 'review');
    // Unpaid review invoice: nothing to decide yet.
    const unpaid = await s.client.post(`/invoices/${r1.id}/review`, { decision: 'accept' });
    assert.equal(unpaid.status, 409);
    assert.equal(unpaid.body.error.code, 'invoice_not_reviewable');

    // The chain watcher records the matching payment (tx_hash) on the review invoice.
    const txHash = 'ab'.repeat(32);
    await t.deps.db.updateTable('invoices').set({ tx_hash: txHash }).where('id', '=', r1.id).execute();

    const key = await newKey(s.client);
    const byKey = await t.client({ origin: null }).post(`/invoices/${r1.id}/review`, { decision: 'accept' }, { bearer: key.secret });
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.error.code, 'session_required');
    const other = await shop(t, ADDRESSES[2]);
    const foreign = await other.client.post(`/invoices/${r1.id}/review`, { decision: 'accept' });
    assert.equal(foreign.status, 404);
    const badDecision = await s.client.post(`/invoices/${r1.id}/review`, { decision: 'maybe' });
    assert.equal(badDecision.status, 400);

    const accepted = await s.client.post(`/invoices/${r1.id}/review`, { decision: 'accept' });
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body.invoice.status, 'confirmed');
    assert.equal(accepted.body.invoice.tx_hash, txHash);
    assert.equal(accepted.body.invoice.confirmed_at, new Date(t.clock.now()).toISOString());
    const ev = await t.deps.db.selectFrom('events').select(['type', 'data']).where('invoice_id', '=', r1.id).where('type', '=', 'invoice.confirmed').execute();
    assert.equal(ev.length, 1);
    assert.equal(JSON.parse(ev[0]!.data).invoice.status, 'confirmed');
    const twice = await s.client.post(`/invoices/${r1.id}/review`, { decision: 'reject' });
    assert.equal(twice.status, 409);

    // Reject: the next reuse (another 90 days on) is paid and rejected.
    t.clock.advance(90 * DAY);
    await renewSession(t, s);
    const r2 = (await createInvoice(s.client, { amount: '8', wallet_id: s.walletId })).body.invoice;
    assert.equal(r2.status, 'review');
    await t.deps.db
      .updateTable('invoices')
      .set({ tx_hash: 'cd'.repeat(32) })
      .where('id', '=', r2.id)
      .execute();
    const rejected = await s.client.post(`/invoices/${r2.id}/review`, { decision: 'reject' });
    assert.equal(rejected.status, 200);
    assert.equal(rejected.body.invoice.status, 'expired');
    assert.equal(rejected.body.invoice.confirmed_at, null);
    const ev2 = await t.deps.db.selectFrom('events').select('type').where('invoice_id', '=', r2.id).execute();
    assert.deepEqual(ev2.map((e) => e.type).sort(), ['invoice.created', 'invoice.expired', 'invoice.review']);
  } finally {
    await t.close();
  }
});
