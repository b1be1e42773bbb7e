import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { pass, startChainHarness, transfersOf, type ChainHarness } from '../helpers/chain-fixtures.js';
import { randomAddress } from '../helpers/tron-samples.js';
import { addWallet, ADDRESSES, createInvoice, newKey, shop } from '../helpers/shop.js';

/** The recorded transfer of one transaction (its Transfer log), as the console names it. */
async function transferOf(h: ChainHarness, txId: string) {
  const row = (await transfersOf(h.t)).find((r) => r.tx_hash === txId);
  assert.ok(row, `transfer ${txId} recorded`);
  return row;
}

test('resolve: the owner applies a wrong payment (price without the adjustment) and a late one; a transfer pays at most one invoice', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const otherWallet = await addWallet(a.client, ADDRESSES[1], 'Second');
    assert.equal((await createInvoice(a.client, { amount: '39', wallet_id: otherWallet })).status, 201);
    // B shares A's address (ownership is never verified) and has its own invoice there.
    const b = await shop(t, ADDRESSES[0], 'Shop B');
    const inv = (await createInvoice(a.client, { amount: '25', wallet_id: a.walletId, expires_in_minutes: 30 })).body.invoice;
    const spare = (await createInvoice(a.client, { amount: '40', wallet_id: a.walletId })).body.invoice;
    const ofB = (await createInvoice(b.client, { amount: '25', wallet_id: b.walletId })).body.invoice;
    assert.equal(inv.payable_amount, '25.000001');

    // The payer sends the price without the adjustment; other people's traffic around it.
    const wrong = tg.pay({ to: ADDRESSES[0], amount: 25_000_000n, blockTimestamp: t.clock.now() + 10 * SECOND });
    tg.pay({ to: randomAddress(), amount: 25_000_000n, blockTimestamp: t.clock.now() + 11 * SECOND });
    const toSecond = tg.pay({ to: ADDRESSES[1], amount: 39_990_000n, blockTimestamp: t.clock.now() + 12 * SECOND });
    const reverted = tg.pay({ to: ADDRESSES[0], amount: 25_000_000n, blockTimestamp: t.clock.now() + 13 * SECOND, receipt: 'failed' });
    await pass(h, 2 * MINUTE);
    const w = await transferOf(h, wrong.txId);
    assert.equal(w.kind, 'unmatched');
    assert.equal(
      (await transfersOf(t)).some((r) => r.tx_hash === reverted.txId),
      false,
      'a reverted call is never a transfer',
    );
    const body = { tx_hash: wrong.txId, log_index: w.log_index };

    // Session only: an API key (even with every scope) is refused; bad input changes nothing.
    const key = await newKey(a.client);
    const byKey = await a.client.post(`/invoices/${inv.id}/resolve`, body, { bearer: key.secret });
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.error.code, 'session_required');
    for (const bad of [{ tx_hash: wrong.txId.toUpperCase(), log_index: 0 }, { tx_hash: wrong.txId }, { ...body, log_index: -1 }, { ...body, extra: 1 }]) {
      const res = await a.client.post(`/invoices/${inv.id}/resolve`, bad);
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.equal(res.body.error.code, 'validation_error');
    }
    // Another tenant's invoice: 404, as if it did not exist.
    assert.equal((await a.client.post(`/invoices/${ofB.id}/resolve`, body)).status, 404);
    // A transfer that reached none of the caller's wallets: 404 (someone else's payment).
    const c = await shop(t, ADDRESSES[2], 'Shop C');
    assert.equal((await createInvoice(c.client, { amount: '9', wallet_id: c.walletId })).status, 201, 'an open invoice: the address is watched');
    const foreign = tg.pay({ to: ADDRESSES[2], amount: 1_000_000n, blockTimestamp: t.clock.now() + 5 * SECOND });
    await pass(h, 2 * MINUTE);
    const f = await transferOf(h, foreign.txId);
    assert.equal((await a.client.post(`/invoices/${inv.id}/resolve`, { tx_hash: foreign.txId, log_index: f.log_index })).status, 404);
    // A transfer to another of A's wallets cannot pay an invoice of this one.
    const s = await transferOf(h, toSecond.txId);
    const crossed = await a.client.post(`/invoices/${spare.id}/resolve`, { tx_hash: toSecond.txId, log_index: s.log_index });
    assert.equal(crossed.status, 409);
    assert.equal(crossed.body.error.code, 'invoice_not_resolvable');
    const untouched = await a.client.get(`/invoices/${spare.id}`);
    assert.equal(untouched.body.invoice.status, 'pending');

    // The owner applies it: confirmed with that transaction, the amount really received recorded.
    const done = await a.client.post(`/invoices/${inv.id}/resolve`, body);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.invoice.status, 'confirmed');
    assert.equal(done.body.invoice.tx_hash, wrong.txId);
    assert.equal(done.body.invoice.received_amount, '25.000000');
    assert.equal(done.body.invoice.payable_amount, '25.000001');
    const events = await t.deps.db.selectFrom('events').select(['type', 'data']).where('invoice_id', '=', inv.id).orderBy('created_at').execute();
    const confirmed = events.filter((e) => e.type === 'invoice.confirmed').map((e) => JSON.parse(e.data));
    assert.equal(confirmed.length, 1);
    assert.equal(confirmed[0].resolution, 'manual');
    assert.equal(confirmed[0].transaction.tx_hash, wrong.txId);
    assert.equal(confirmed[0].transaction.amount, '25.000000');
    assert.equal(confirmed[0].invoice.received_amount, '25.000000');
    // The Dashboard and the console's Overview count what was received, not what was asked.
    const totals = (await a.client.get('/me')).body.stats.confirmed_totals;
    assert.equal(totals.payable_amount, '25.000001');
    assert.equal(totals.received_amount, '25.000000');
    const overview = await a.client.get(`${t.baseUrl}/console`, { headers: { accept: 'text/html' } });
    assert.match(overview.text, /<strong class="stat-amount"><bdi dir="ltr" class="num">25\.000000<\/bdi> <span class="unit">USDT<\/span><\/strong>/);
    assert.doesNotMatch(overview.text, /25\.000001 USDT/);

    // The same transfer never pays a second invoice: not A's other one, not B's on the shared address.
    for (const [client, id] of [
      [a.client, spare.id],
      [b.client, ofB.id],
      [a.client, inv.id],
    ] as const) {
      const again = await client.post(`/invoices/${id}/resolve`, body);
      assert.equal(again.status, 409, again.text);
      assert.equal(again.body.error.code, 'transfer_already_used');
    }
    assert.equal((await b.client.get(`/invoices/${ofB.id}`)).body.invoice.status, 'pending');
    assert.equal((await t.deps.db.selectFrom('invoice_resolutions').selectAll().execute()).length, 1);

    // A late payment: the 40 USDT invoice expires, then its exact amount arrives; the owner applies it.
    t.clock.advance(25 * MINUTE);
    await pass(h, 2 * MINUTE);
    assert.equal((await a.client.get(`/invoices/${spare.id}`)).body.invoice.status, 'expired');
    // (The watcher follows addresses with an open invoice: the shop has a new one.)
    const fresh = (await createInvoice(a.client, { amount: '1', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    const late = tg.pay({ to: ADDRESSES[0], amount: 40_000_001n, blockTimestamp: t.clock.now() });
    await pass(h, 2 * MINUTE);
    const l = await transferOf(h, late.txId);
    assert.equal(l.kind, 'late');
    assert.equal(l.invoice_id, spare.id);
    // B cannot apply A's late payment, even on the shared address.
    assert.equal((await b.client.post(`/invoices/${ofB.id}/resolve`, { tx_hash: late.txId, log_index: l.log_index })).status, 404);
    const lateDone = await a.client.post(`/invoices/${spare.id}/resolve`, { tx_hash: late.txId, log_index: l.log_index });
    assert.equal(lateDone.status, 200, lateDone.text);
    assert.equal(lateDone.body.invoice.status, 'confirmed');
    assert.equal(lateDone.body.invoice.received_amount, '40.000001');
    // An invoice already paid takes no other transfer.
    const extra = tg.pay({ to: ADDRESSES[0], amount: 3_000_000n, blockTimestamp: t.clock.now() });
    await pass(h, 2 * MINUTE);
    const x = await transferOf(h, extra.txId);
    const paid = await a.client.post(`/invoices/${inv.id}/resolve`, { tx_hash: extra.txId, log_index: x.log_index });
    assert.equal(paid.status, 409);
    assert.equal(paid.body.error.code, 'invoice_not_resolvable');

    // The ledger: received_amount follows description (the fiat price columns come after it); empty while unpaid.
    const csv = await a.client.get('/ledger.csv');
    const [header, ...rows] = csv.text.trim().split('\r\n');
    const columns = header!.split(',');
    assert.deepEqual(columns.slice(15, 17), ['description', 'received_amount']);
    assert.equal(columns.length, 22);
    const cell = (id: string) =>
      rows
        .find((r) => r.startsWith(id))!
        .split(',')
        .at(16);
    assert.equal(cell(inv.id), '25.000000');
    assert.equal(cell(spare.id), '40.000001');
    assert.equal(cell(fresh.id), '');
  } finally {
    await h.close();
  }
});
