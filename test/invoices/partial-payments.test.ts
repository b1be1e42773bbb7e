import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { eventsOf, pass, startChainHarness, transfersOf, type ChainHarness } from '../helpers/chain-fixtures.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';

async function transferOf(h: ChainHarness, txId: string) {
  const row = (await transfersOf(h.t)).find((r) => r.tx_hash === txId);
  assert.ok(row, `transfer ${txId} recorded`);
  return row;
}

test('underpayment settings: PATCH /me takes an amount or a percentage, null turns it off; bad values are 400 and change nothing', async () => {
  const h = await startChainHarness();
  try {
    const a = await shop(h.t, ADDRESSES[0], 'Shop A');
    const before = (await a.client.get('/me')).body.merchant;
    assert.equal(before.underpayment_tolerance, null);
    assert.equal(before.underpayment_auto_accept, false);
    for (const bad of ['abc', '0', '0%', '101%', '1.5.0', '-1', '1.1234567', '1.123%', 1, true]) {
      const res = await a.client.patch('/me', { underpayment_tolerance: bad });
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
      assert.equal(res.body.error.code, 'validation_error');
    }
    assert.equal((await a.client.patch('/me', { underpayment_auto_accept: 'yes' })).status, 400);
    assert.equal((await a.client.get('/me')).body.merchant.underpayment_tolerance, null);
    const set = await a.client.patch('/me', { underpayment_tolerance: '1.5' });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.merchant.underpayment_tolerance, '1.500000');
    assert.equal(
      (await a.client.patch('/me', { underpayment_tolerance: '2.50%', underpayment_auto_accept: true })).body.merchant.underpayment_tolerance,
      '2.5%',
    );
    const me = (await a.client.get('/me')).body.merchant;
    assert.equal(me.underpayment_tolerance, '2.5%');
    assert.equal(me.underpayment_auto_accept, true);
    // The console's Account page shows both and edits them through the same PATCH /me.
    const account = (await a.client.get(`${h.t.baseUrl}/console/account`, { headers: { accept: 'text/html' } })).text;
    assert.match(account, /name="underpayment_tolerance" value="2\.5%"/);
    assert.match(account, /name="underpayment_auto_accept" data-type="bool" checked/);
    const off = await a.client.patch('/me', { underpayment_tolerance: null });
    assert.equal(off.body.merchant.underpayment_tolerance, null);
    assert.equal(off.body.merchant.underpayment_auto_accept, true, 'the other setting is kept');
  } finally {
    await h.close();
  }
});

test('fee-deducted payments: recorded as partial only when short within tolerance, with the invoice digits, and unambiguous', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const off = await shop(t, ADDRESSES[1], 'Shop Off');
    assert.equal((await a.client.patch('/me', { underpayment_tolerance: '1.00' })).status, 200);
    const create = (client: typeof a.client, walletId: string, amount: string, minutes = 60) =>
      createInvoice(client, { amount, wallet_id: walletId, expires_in_minutes: minutes }).then((r) => r.body.invoice);
    const inv = await create(a.client, a.walletId, '25');
    const twoA = await create(a.client, a.walletId, '50');
    const twoB = await create(a.client, a.walletId, '50.5');
    const over = await create(a.client, a.walletId, '70');
    const late = await create(a.client, a.walletId, '60', 10);
    const offInv = await create(off.client, off.walletId, '25');
    assert.equal(inv.payable_amount, '25.000001');
    assert.equal(twoB.payable_amount, '50.500001');

    const now = t.clock.now();
    const partial = tg.pay({ to: ADDRESSES[0], amount: 24_000_001n, blockTimestamp: now + 10 * SECOND });
    const tooShort = tg.pay({ to: ADDRESSES[0], amount: 23_900_001n, blockTimestamp: now + 11 * SECOND }); // 1.1 short
    const wrongDigits = tg.pay({ to: ADDRESSES[0], amount: 24_000_002n, blockTimestamp: now + 12 * SECOND });
    const otherDigits = tg.pay({ to: ADDRESSES[0], amount: 49_600_001n, blockTimestamp: now + 13 * SECOND }); // 0.4 short of 50.000001, other decimals
    const overpaid = tg.pay({ to: ADDRESSES[0], amount: 71_000_001n, blockTimestamp: now + 15 * SECOND });
    const offShort = tg.pay({ to: ADDRESSES[1], amount: 24_000_001n, blockTimestamp: now + 16 * SECOND });
    await pass(h, 2 * MINUTE);

    // The fee-deducted payment: recorded against its invoice, which stays pending and shows what arrived.
    const p = await transferOf(h, partial.txId);
    assert.equal(p.kind, 'unmatched');
    assert.equal(p.invoice_id, inv.id);
    const after = (await a.client.get(`/invoices/${inv.id}`)).body.invoice;
    assert.equal(after.status, 'pending');
    assert.equal(after.amount_received, '24.000001');
    assert.equal(after.resolution, null);
    const partialEvents = (await eventsOf(t, inv.id)).filter((e) => e.type === 'invoice.partially_paid');
    assert.equal(partialEvents.length, 1);
    assert.equal((partialEvents[0]!.data.transaction as { amount: string }).amount, '24.000001');
    assert.equal((partialEvents[0]!.data.invoice as { amount_received: string }).amount_received, '24.000001');
    // Anything else stays unmatched: too short, other digits, overpaid, a merchant with the tolerance off.
    for (const x of [tooShort, wrongDigits, otherDigits, overpaid, offShort]) {
      const r = await transferOf(h, x.txId);
      assert.equal(r.kind, 'unmatched');
      assert.equal(r.invoice_id, null, x.txId);
    }
    assert.equal((await a.client.get(`/invoices/${over.id}`)).body.invoice.amount_received, '0.000000');
    assert.equal((await off.client.get(`/invoices/${offInv.id}`)).body.invoice.amount_received, '0.000000');
    // Integrators see it: GET /transfers with the invoice, and the events.
    const listed = await a.client.get(`/transfers?invoice_id=${inv.id}`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.transfers.map((x: { tx_hash: string; kind: string; invoice_id: string }) => [x.tx_hash, x.kind, x.invoice_id]),
      [[partial.txId, 'unmatched', inv.id]],
    );
    const unmatchedEvents = (await a.client.get('/events?type=transfer.unmatched')).body.events;
    assert.deepEqual(
      unmatchedEvents.map((e: { data: { transfer: { tx_hash: string } } }) => e.data.transfer.tx_hash).sort(),
      [tooShort.txId, wrongDigits.txId, otherDigits.txId, overpaid.txId].sort(),
      'one transfer.unmatched per wrong payment to the address, none for the partial one',
    );

    // Two candidates: with a 2 USDT tolerance, 49.000001 is short of 50.000001 by 1 and of 51.000001
    // by 2, both with its decimals: ambiguous, so unmatched.
    assert.equal((await a.client.patch('/me', { underpayment_tolerance: '2' })).status, 200);
    const fiftyOne = await create(a.client, a.walletId, '51');
    assert.equal(fiftyOne.payable_amount, '51.000001');
    const twoCandidates = tg.pay({ to: ADDRESSES[0], amount: 49_000_001n, blockTimestamp: t.clock.now() + 5 * SECOND });
    await pass(h, 2 * MINUTE);
    const tc = await transferOf(h, twoCandidates.txId);
    assert.equal(tc.invoice_id, null, 'two open invoices match: stays unmatched');
    assert.equal((await a.client.get(`/invoices/${twoA.id}`)).body.invoice.amount_received, '0.000000');

    // An exact payment after the partial one confirms as usual; amount_received counts both.
    const exact = tg.pay({ to: ADDRESSES[0], amount: 25_000_001n, blockTimestamp: t.clock.now() + 5 * SECOND });
    // A partial payment after the invoice's window is no partial payment.
    t.clock.advance(15 * MINUTE);
    const afterExpiry = tg.pay({ to: ADDRESSES[0], amount: 59_000_001n, blockTimestamp: t.clock.now() });
    await pass(h, 2 * MINUTE);
    const paid = (await a.client.get(`/invoices/${inv.id}`)).body.invoice;
    assert.equal(paid.status, 'confirmed');
    assert.equal(paid.tx_hash, exact.txId);
    assert.equal(paid.received_amount, '25.000001');
    assert.equal(paid.amount_received, '49.000002');
    assert.equal(paid.resolution, null);
    const ae = await transferOf(h, afterExpiry.txId);
    assert.equal(ae.kind, 'unmatched');
    assert.equal(ae.invoice_id, null);
    assert.equal((await a.client.get(`/invoices/${late.id}`)).body.invoice.status, 'expired');
  } finally {
    await h.close();
  }
});

test('fee-deducted payments: auto-accept confirms with resolution "tolerance", up to the tolerance and no further', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    assert.equal((await a.client.patch('/me', { underpayment_tolerance: '1%', underpayment_auto_accept: true })).status, 200);
    const inv = (await createInvoice(a.client, { amount: '100', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    // Exactly 1% (1.000000) short, with the invoice's last six decimals.
    const fee = tg.pay({ to: ADDRESSES[0], amount: 99_000_001n, blockTimestamp: t.clock.now() + 10 * SECOND });
    await pass(h, 2 * MINUTE);
    const r = await transferOf(h, fee.txId);
    assert.equal(r.kind, 'confirmed');
    assert.equal(r.invoice_id, inv.id);
    const got = (await a.client.get(`/invoices/${inv.id}`)).body.invoice;
    assert.equal(got.status, 'confirmed');
    assert.equal(got.resolution, 'tolerance');
    assert.equal(got.received_amount, '99.000001');
    assert.equal(got.amount_received, '99.000001');
    // Both in the transaction that records the transfer (the same created_at).
    const events = await eventsOf(t, inv.id);
    assert.deepEqual(events.map((e) => e.type).sort(), ['invoice.confirmed', 'invoice.created', 'invoice.partially_paid']);
    const confirmed = events.find((e) => e.type === 'invoice.confirmed')!;
    assert.equal(confirmed.data.resolution, 'tolerance');
    assert.equal((confirmed.data.transaction as { amount: string }).amount, '99.000001');
    // 1% of 100.000002 is 1.000000: 2.000000 short is outside it.
    const inv2 = (await createInvoice(a.client, { amount: '100', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    assert.equal(inv2.payable_amount, '100.000002');
    const short = tg.pay({ to: ADDRESSES[0], amount: 98_000_002n, blockTimestamp: t.clock.now() + 10 * SECOND });
    await pass(h, 2 * MINUTE);
    assert.equal((await transferOf(h, short.txId)).invoice_id, null);
    assert.equal((await a.client.get(`/invoices/${inv2.id}`)).body.invoice.status, 'pending');
  } finally {
    await h.close();
  }
});
