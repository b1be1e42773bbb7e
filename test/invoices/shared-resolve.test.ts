import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { pass, startChainHarness, transfersOf, type ChainHarness } from '../helpers/chain-fixtures.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';

async function transferOf(h: ChainHarness, txId: string) {
  const row = (await transfersOf(h.t)).find((r) => r.tx_hash === txId);
  assert.ok(row, `transfer ${txId} recorded`);
  return row;
}

async function page(client: { get(url: string, o?: object): Promise<{ status: number; text: string }> }, url: string): Promise<string> {
  const res = await client.get(url, { headers: { accept: 'text/html' } });
  assert.equal(res.status, 200, url);
  return res.text;
}

test("shared address: another merchant cannot take the owner's customer's wrong payment (audit case)", async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    // B registers the same address (ownership is never verified) and has invoices there.
    const b = await shop(t, ADDRESSES[0], 'Shop B');
    const ofA = (await createInvoice(a.client, { amount: '25', wallet_id: a.walletId, expires_in_minutes: 30 })).body.invoice;
    const ofB = (await createInvoice(b.client, { amount: '25', wallet_id: b.walletId, expires_in_minutes: 30 })).body.invoice;
    const bigOfB = (await createInvoice(b.client, { amount: '30', wallet_id: b.walletId, expires_in_minutes: 30 })).body.invoice;
    assert.equal(ofA.payable_amount, '25.000001');
    assert.equal(ofB.payable_amount, '25.000002');
    assert.equal(bigOfB.payable_amount, '30.000001');

    // A's customer pays from an exchange that deducts a 1 USDT fee: 24.000001 (A's last six decimals).
    const feeCut = tg.pay({ to: ADDRESSES[0], amount: 24_000_001n, blockTimestamp: t.clock.now() + 10 * SECOND });
    // Someone sends 4.5 USDT: nobody's plausible payment on a shared address.
    const stray = tg.pay({ to: ADDRESSES[0], amount: 4_500_000n, blockTimestamp: t.clock.now() + 11 * SECOND });
    await pass(h, 2 * MINUTE);
    const f = await transferOf(h, feeCut.txId);
    const s = await transferOf(h, stray.txId);
    assert.equal(f.kind, 'unmatched');
    assert.equal(s.kind, 'unmatched');

    // The audit's case: B applies A's customer's transfer to B's own invoice. Refused now (200 before).
    for (const id of [ofB.id, bigOfB.id]) {
      const taken = await b.client.post(`/invoices/${id}/resolve`, { tx_hash: feeCut.txId, log_index: f.log_index });
      assert.equal(taken.status, 409, taken.text);
      assert.equal(taken.body.error.code, 'invoice_not_resolvable');
      assert.equal(taken.body.error.details[0].path, 'tx_hash');
    }
    const byB = await b.client.post(`/invoices/${ofB.id}/resolve`, { tx_hash: feeCut.txId, log_index: f.log_index });
    assert.equal(byB.body.error.details[0].reason, 'stronger_claim_of_another', "A 1-short digits claim beats B's in-window one");
    const bigByB = await b.client.post(`/invoices/${bigOfB.id}/resolve`, { tx_hash: feeCut.txId, log_index: f.log_index });
    assert.equal(bigByB.body.error.details[0].reason, 'no_plausible_claim', 'matching decimals 6 USDT away are no claim');
    // Nothing changed: both of B's invoices are still unpaid, nothing applied.
    assert.equal((await b.client.get(`/invoices/${ofB.id}`)).body.invoice.status, 'pending');
    assert.equal((await t.deps.db.selectFrom('invoice_resolutions').selectAll().execute()).length, 0);
    // Nor can anyone on the shared address apply the stray 4.5 USDT to a 25 USDT invoice.
    const strayByA = await a.client.post(`/invoices/${ofA.id}/resolve`, { tx_hash: stray.txId, log_index: s.log_index });
    assert.equal(strayByA.status, 409);
    assert.equal(strayByA.body.error.details[0].reason, 'no_plausible_claim');

    // The console offers B nothing for it, and offers A its invoice (no preselection).
    const transfersB = await page(b.client, `${t.baseUrl}/console/transfers`);
    assert.doesNotMatch(transfersB, new RegExp(`value="${ofB.id}"`));
    const transfersA = await page(a.client, `${t.baseUrl}/console/transfers`);
    assert.match(transfersA, new RegExp(`type="radio" name="invoice" value="${ofA.id}" required`));
    assert.doesNotMatch(transfersA, /<select|checked/);
    assert.match(transfersA, /24\.000001 received for an invoice of 25\.000001: 1\.000000 short/);
    // A's invoice page lists it as a payment that may be for it.
    const invoicePageA = await page(a.client, `${t.baseUrl}/console/invoices/${ofA.id}`);
    assert.match(invoicePageA, /Payments to this address that may be for this invoice/);
    assert.match(invoicePageA, new RegExp(`name="tx_hash" value="${feeCut.txId}"`));
    assert.doesNotMatch(invoicePageA, new RegExp(`name="tx_hash" value="${stray.txId}"`));

    // A, whose customer it was, applies it.
    const byA = await a.client.post(`/invoices/${ofA.id}/resolve`, { tx_hash: feeCut.txId, log_index: f.log_index });
    assert.equal(byA.status, 200, byA.text);
    assert.equal(byA.body.invoice.received_amount, '24.000001');

    // B sees who applied it and may contest it; A may not contest its own; a repeat changes nothing.
    const listB = await b.client.get('/transfers?kind=unmatched');
    assert.equal(listB.status, 200, listB.text);
    const seen = listB.body.transfers.find((x: { tx_hash: string }) => x.tx_hash === feeCut.txId);
    assert.deepEqual(seen.applied, { by_you: false, merchant_name: 'Shop A', invoice_id: null, applied_at: seen.applied.applied_at, contested_by: [] });
    assert.equal(seen.invoice_id, null, "B never learns A's invoice id");
    assert.match(await page(b.client, `${t.baseUrl}/console/transfers`), /Applied by another merchant of this address: Shop A\./);
    const own = await a.client.post(`/transfers/${seen.id}/contest`, {});
    assert.equal(own.status, 409);
    assert.equal(own.body.error.code, 'transfer_not_contestable');
    for (let i = 0; i < 2; i++) {
      const contest = await b.client.post(`/transfers/${seen.id}/contest`, {});
      assert.equal(contest.status, 200, contest.text);
      assert.deepEqual(contest.body.transfer.applied.contested_by, ['Shop B']);
    }
    const listA = (await a.client.get('/transfers')).body.transfers.find((x: { id: string }) => x.id === seen.id);
    assert.deepEqual(listA.applied.contested_by, ['Shop B']);
    assert.equal(listA.applied.by_you, true);
    assert.equal(listA.invoice_id, ofA.id);
    assert.match(await page(a.client, `${t.baseUrl}/console/transfers`), /Contested by Shop B\./);
    // A transfer nobody applied cannot be contested; one B cannot see is 404.
    const strayId = (await b.client.get('/transfers')).body.transfers.find((x: { tx_hash: string }) => x.tx_hash === stray.txId).id;
    assert.equal((await b.client.post(`/transfers/${strayId}/contest`, {})).body.error.code, 'transfer_not_contestable');
    const c = await shop(t, ADDRESSES[1], 'Shop C');
    assert.equal((await c.client.post(`/transfers/${seen.id}/contest`, {})).status, 404);
  } finally {
    await h.close();
  }
});

test('shared address: equal claims go to whoever applies first; a sole owner may apply any amount after a stated difference', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const b = await shop(t, ADDRESSES[0], 'Shop B');
    const ofA = (await createInvoice(a.client, { amount: '10', wallet_id: a.walletId, expires_in_minutes: 30 })).body.invoice;
    const ofB = (await createInvoice(b.client, { amount: '10', wallet_id: b.walletId, expires_in_minutes: 30 })).body.invoice;
    // 10.0000015 cannot exist; 9.9 is 0.100001 from A's and 0.100002 from B's: A's claim is stronger.
    const near = tg.pay({ to: ADDRESSES[0], amount: 9_900_000n, blockTimestamp: t.clock.now() + 10 * SECOND });
    await pass(h, 2 * MINUTE);
    const n = await transferOf(h, near.txId);
    const byB = await b.client.post(`/invoices/${ofB.id}/resolve`, { tx_hash: near.txId, log_index: n.log_index });
    assert.equal(byB.status, 409);
    assert.equal(byB.body.error.details[0].reason, 'stronger_claim_of_another');
    assert.equal((await a.client.post(`/invoices/${ofA.id}/resolve`, { tx_hash: near.txId, log_index: n.log_index })).status, 200);

    // A sole owner (address 1 is A's alone) may apply even 4.5 USDT to a 30 USDT invoice; the console says how short it is.
    const solo = await shop(t, ADDRESSES[1], 'Solo');
    const inv = (await createInvoice(solo.client, { amount: '30', wallet_id: solo.walletId, expires_in_minutes: 30 })).body.invoice;
    const other = (await createInvoice(solo.client, { amount: '4', wallet_id: solo.walletId, expires_in_minutes: 30 })).body.invoice;
    const small = tg.pay({ to: ADDRESSES[1], amount: 4_500_000n, blockTimestamp: t.clock.now() + 10 * SECOND });
    await pass(h, 2 * MINUTE);
    const html = await page(solo.client, `${t.baseUrl}/console/transfers`);
    // Ranked: the 4 USDT invoice (0.499999 over) before the 30 USDT one (25.500001 short); neither preselected.
    const first = html.indexOf(`value="${other.id}"`);
    const second = html.indexOf(`value="${inv.id}"`);
    assert.ok(first > 0 && second > first, 'the closer invoice ranks first');
    assert.match(html, /4\.500000 received for an invoice of 30\.000001: 25\.500001 short/);
    assert.doesNotMatch(html, / checked/);
    const m = await transferOf(h, small.txId);
    const done = await solo.client.post(`/invoices/${inv.id}/resolve`, { tx_hash: small.txId, log_index: m.log_index });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.invoice.received_amount, '4.500000');
  } finally {
    await h.close();
  }
});
