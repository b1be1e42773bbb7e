import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commitScan } from '../../src/chain/chain.service.js';
import type { VerifiedTransfer } from '../../src/chain/verifier.js';
import type { AppDeps } from '../../src/deps.js';
import { startTestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, micro, newKey, payOnChain, shop } from '../helpers/shop.js';

/** Records verified transfers as the block scanner does (nothing is expired: the scan covers no window). */
const recordTransfers = async (deps: AppDeps, transfers: VerifiedTransfer[]) =>
  (await commitScan(deps, { transfers, unscanned: { scannedUntil: 0, gaps: [] } })).recorded;

const MINUTE = 60_000;

test('cancel: a pending invoice becomes expired with invoice.expired; a repeat answers 200; the amount stays reserved and a later payment is recorded against it as late', async () => {
  const t = await startTestApp();
  try {
    const s = await shop(t, ADDRESSES[0]);
    const inv = (await createInvoice(s.client, { amount: '12', wallet_id: s.walletId })).body.invoice;
    t.clock.advance(2 * MINUTE);
    const key = await newKey(s.client, { name: 'writer', scopes: ['invoices:write'] });
    // No body at all, as `{}`.
    const res = await s.client.request('POST', `/invoices/${inv.id}/cancel`, undefined, { bearer: key.secret });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.invoice.status, 'expired');
    assert.equal(res.body.invoice.cancelled_at, new Date(t.clock.now()).toISOString());
    assert.equal(res.body.invoice.expires_at, res.body.invoice.cancelled_at, 'the window closes at the cancel');
    assert.equal(res.body.invoice.reserved_until, inv.reserved_until, 'the reservation keeps its 90 days');

    const events = await t.deps.db.selectFrom('events').select(['type', 'data']).where('invoice_id', '=', inv.id).orderBy('created_at').execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['invoice.created', 'invoice.expired'],
    );
    assert.equal(JSON.parse(events[1]!.data).invoice.cancelled_at, res.body.invoice.cancelled_at);

    // Idempotent: the same answer, no second event.
    t.clock.advance(MINUTE);
    const again = await s.client.post(`/invoices/${inv.id}/cancel`, {});
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.invoice, res.body.invoice);
    assert.equal((await t.deps.db.selectFrom('events').select('id').where('invoice_id', '=', inv.id).execute()).length, 2);

    // The amount is not handed out again while reserved.
    const next = await createInvoice(s.client, { amount: '12', wallet_id: s.walletId });
    assert.notEqual(next.body.invoice.payable_amount, inv.payable_amount);

    // A transfer of that amount after the cancel: recorded against the cancelled invoice, as late; it stays expired.
    const [recorded] = await recordTransfers(t.deps, [
      {
        txHash: 'ab'.repeat(32),
        logIndex: 0,
        from: ADDRESSES[3],
        to: s.address,
        amount: micro(inv.payable_amount),
        blockNumber: 100,
        tokenContract: t.deps.config.network.usdtContract,
        blockTimestamp: t.clock.now() - 1000,
      },
    ]);
    assert.deepEqual([recorded!.kind, recorded!.invoiceId], ['late', inv.id]);
    assert.equal((await s.client.get(`/invoices/${inv.id}`)).body.invoice.status, 'expired');
  } finally {
    await t.close();
  }
});

test('cancel: confirmed, paid review and self-expired invoices are 409 invoice_not_cancellable; scope, tenancy and unknown ids', async () => {
  const t = await startTestApp();
  try {
    const s = await shop(t, ADDRESSES[0]);
    const paid = (await createInvoice(s.client, { amount: '7', wallet_id: s.walletId })).body.invoice;
    await payOnChain(t, s.address, paid.payable_amount, { txHash: 'cd'.repeat(32), blockTimestamp: t.clock.now() });
    const confirmed = await s.client.post(`/invoices/${paid.id}/cancel`, {});
    assert.equal(confirmed.status, 409);
    assert.equal(confirmed.body.error.code, 'invoice_not_cancellable');
    assert.equal((await s.client.get(`/invoices/${paid.id}`)).body.invoice.status, 'confirmed');

    // Expired by itself (the watcher's expiry, simulated by its own guarded move): not a cancel.
    const lapsed = (await createInvoice(s.client, { amount: '8', wallet_id: s.walletId })).body.invoice;
    await t.deps.db.updateTable('invoices').set({ status: 'expired' }).where('id', '=', lapsed.id).execute();
    const expired = await s.client.post(`/invoices/${lapsed.id}/cancel`, {});
    assert.equal(expired.status, 409);
    assert.equal(expired.body.error.code, 'invoice_not_cancellable');

    // A review invoice nobody paid may be cancelled; once paid, only review decides.
    const review = (await createInvoice(s.client, { amount: '9', wallet_id: s.walletId })).body.invoice;
    await t.deps.db.updateTable('invoices').set({ status: 'review' }).where('id', '=', review.id).execute();
    assert.equal((await s.client.post(`/invoices/${review.id}/cancel`, {})).status, 200);
    const paidReview = (await createInvoice(s.client, { amount: '10', wallet_id: s.walletId })).body.invoice;
    await t.deps.db
      .updateTable('invoices')
      .set({ status: 'review', tx_hash: 'ef'.repeat(32) })
      .where('id', '=', paidReview.id)
      .execute();
    assert.equal((await s.client.post(`/invoices/${paidReview.id}/cancel`, {})).body.error.code, 'invoice_not_cancellable');

    // Another tenant's invoice: 404, unchanged. A read-only key: 403. A body with fields: 400.
    const other = await shop(t, ADDRESSES[1], 'Other');
    const theirs = (await createInvoice(other.client, { amount: '11', wallet_id: other.walletId })).body.invoice;
    assert.equal((await s.client.post(`/invoices/${theirs.id}/cancel`, {})).status, 404);
    assert.equal((await other.client.get(`/invoices/${theirs.id}`)).body.invoice.status, 'pending');
    const reader = await newKey(other.client, { name: 'reader', scopes: ['invoices:read'] });
    assert.equal((await other.client.post(`/invoices/${theirs.id}/cancel`, {}, { bearer: reader.secret })).body.error.code, 'insufficient_scope');
    const withField = await other.client.post(`/invoices/${theirs.id}/cancel`, { reason: 'x' });
    assert.equal(withField.status, 400);
    assert.equal(withField.body.error.details[0].path, 'reason');
    assert.equal((await s.client.post('/invoices/inv_nope/cancel', {})).status, 404);
  } finally {
    await t.close();
  }
});

test('duplicate_order_id names the invoice holding the order id in details', async () => {
  const t = await startTestApp();
  try {
    const s = await shop(t, ADDRESSES[0]);
    const first = (await createInvoice(s.client, { amount: '5', wallet_id: s.walletId, merchant_order_id: 'dup-1' }, { key: 'k1' })).body.invoice;
    const dup = await createInvoice(s.client, { amount: '6', wallet_id: s.walletId, merchant_order_id: 'dup-1' }, { key: 'k2' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error.code, 'duplicate_order_id');
    assert.deepEqual(dup.body.error.details, [{ path: 'merchant_order_id', message: `Already used by invoice ${first.id}`, invoice_id: first.id }]);
    // Another merchant may use the same order id.
    const other = await shop(t, ADDRESSES[1], 'Other');
    assert.equal((await createInvoice(other.client, { amount: '5', wallet_id: other.walletId, merchant_order_id: 'dup-1' }, { key: 'k1' })).status, 201);
  } finally {
    await t.close();
  }
});
