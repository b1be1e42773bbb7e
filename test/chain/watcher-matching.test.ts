/** The chain watcher matching transfers to invoices: exact payments confirm once, late and stray money is recorded, review invoices wait for the owner. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { latePaymentHashes, listLatePayments, listMerchantLatePayments, listUnmatchedTransfers } from '../../src/chain/chain.repo.js';
import { toChainTransferResponse } from '../../src/chain/chain.model.js';
import { MINUTE, SECOND, HOUR } from '../../src/lib/clock.js';
import { USDT_CONTRACT } from '../../src/lib/tron.js';
import { eventsOf, getInvoice, insertInvoice, newMerchantId, pass, startChainHarness, transfersOf } from '../helpers/chain-fixtures.js';
import { blockNumberAt, randomAddress, SAMPLE_AMOUNT, SAMPLE_BLOCK, SAMPLE_BLOCK_TIME, SAMPLE_MERCHANT, SAMPLE_PAYER, SAMPLE_TX, trc20Record } from '../helpers/tron-samples.js';

// The real mainnet receipt of SAMPLE_TX (tron-notes.md section 2.1), verbatim.
const REAL_RECEIPT = {
  id: '0130dfde9281a48378109039ef512229d5359fbee2a8adbb17ad73aebc67ea99',
  fee: 26420100,
  blockNumber: 69316562,
  blockTimeStamp: 1738601505000,
  contractResult: ['0000000000000000000000000000000000000000000000000000000000000000'],
  contract_address: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
  receipt: { energy_usage: 4475, energy_fee: 26420100, energy_usage_total: 130285, net_usage: 345, result: 'SUCCESS', energy_penalty_total: 100635 },
  log: [
    {
      address: 'a614f803b6fd780986a42c78ec9c7f77e6ded13c',
      topics: [
        'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
        '0000000000000000000000006e3b44b96104b26f84057974a1f0c9880f7c9b13',
        '000000000000000000000000ec20315a879c48f5e3a6a1c9826d5225f8b658b8',
      ],
      data: '00000000000000000000000000000000000000000000000000000000027bf24d',
    },
  ],
};

test('the real mainnet payment confirms its invoice once, with the transaction in the event', async () => {
  const created = SAMPLE_BLOCK_TIME - 10 * MINUTE;
  const h = await startChainHarness({ now: created, config: { tron: { api_key: 'tg-key-123' } } });
  try {
    const { t, tg } = h;
    const inv = await insertInvoice(t, { address: SAMPLE_MERCHANT, amount: SAMPLE_AMOUNT, createdAt: created });
    tg.addRecord(SAMPLE_MERCHANT, trc20Record({ txId: SAMPLE_TX, from: SAMPLE_PAYER, to: SAMPLE_MERCHANT, amount: '41677389', blockTimestamp: SAMPLE_BLOCK_TIME }));
    tg.receipts.set(SAMPLE_TX, REAL_RECEIPT);

    // Payment made, solidified head not yet past it: nothing moves.
    await pass(h, 10 * MINUTE);
    assert.equal((await getInvoice(t, inv.id)).status, 'pending');

    await pass(h, 2 * MINUTE);
    const after = await getInvoice(t, inv.id);
    assert.equal(after.status, 'confirmed');
    assert.equal(after.txHash, SAMPLE_TX);
    assert.equal(after.confirmedAt, t.clock.now());

    const events = await eventsOf(t, inv.id);
    assert.deepEqual(events.map((e) => e.type), ['invoice.confirmed']);
    const data = events[0]!.data as { invoice: { status: string; tx_hash: string; id: string }; transaction: unknown };
    assert.equal(data.invoice.id, inv.id);
    assert.equal(data.invoice.status, 'confirmed');
    assert.equal(data.invoice.tx_hash, SAMPLE_TX);
    assert.deepEqual(data.transaction, {
      tx_hash: SAMPLE_TX,
      log_index: 0,
      from: SAMPLE_PAYER,
      to: SAMPLE_MERCHANT,
      amount: '41.677389',
      token_contract: USDT_CONTRACT,
      block_number: SAMPLE_BLOCK,
      block_timestamp: '2025-02-03T16:51:45.000Z',
    });

    // The requests: the documented history query with our key, never links.next.
    const first = tg.requests.find((r) => r.endpoint === 'trc20')!;
    assert.equal(first.path, `/v1/accounts/${SAMPLE_MERCHANT}/transactions/trc20`);
    assert.equal(first.query.get('only_confirmed'), 'true');
    assert.equal(first.query.get('only_to'), 'true');
    assert.equal(first.query.get('contract_address'), USDT_CONTRACT);
    assert.equal(first.query.get('order_by'), 'block_timestamp,asc');
    assert.equal(first.query.get('limit'), '200');
    assert.equal(first.query.get('min_timestamp'), String(created));
    assert.ok(tg.requests.every((r) => r.headers['tron-pro-api-key'] === 'tg-key-123'));
    const receiptReq = tg.requests.find((r) => r.endpoint === 'receipt')!;
    assert.equal(receiptReq.method, 'POST');
    assert.deepEqual(JSON.parse(receiptReq.body), { value: SAMPLE_TX });

    // The address has no open invoice any more: it is not polled again, and nothing is recorded twice.
    const before = tg.count();
    await pass(h);
    await pass(h);
    assert.equal(tg.count(), before);
    assert.equal((await transfersOf(t)).length, 1);
    assert.equal((await eventsOf(t, inv.id)).length, 1);
    assert.equal(t.deps.watcherStatus.state, 'idle');
  } finally {
    await h.close();
  }
});

test('an unpaid invoice expires once covered; a later payment of its amount is recorded late; other amounts unmatched', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const merchantId = await newMerchantId(t);
    const otherMerchant = await newMerchantId(t);
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 7_000_001n, merchantId, expiresAt: start + 10 * MINUTE });
    // Keeps the address watched after the first invoice closes.
    const open = await insertInvoice(t, { address, amount: 7_000_002n, merchantId, expiresAt: start + 10 * HOUR });

    // Covered up to expires_at exactly? Not yet: the margin keeps coverage behind the head.
    tg.solidHead = { number: blockNumberAt(start + 10 * MINUTE), timestamp: start + 10 * MINUTE };
    await pass(h, 15 * MINUTE);
    assert.equal((await getInvoice(t, inv.id)).status, 'pending');
    tg.solidHead = { number: blockNumberAt(start + 11 * MINUTE), timestamp: start + 11 * MINUTE + 3 * SECOND };
    await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'expired');
    const events = await eventsOf(t, inv.id);
    assert.deepEqual(events.map((e) => e.type), ['invoice.expired']);
    assert.equal((events[0]!.data.invoice as { status: string }).status, 'expired');
    assert.equal((await getInvoice(t, open.id)).status, 'pending');

    tg.solidHead = undefined;
    const late = tg.pay({ to: address, amount: 7_000_001n, blockTimestamp: start + 20 * MINUTE });
    const stray = tg.pay({ to: address, amount: 123_456_789n, blockTimestamp: start + 21 * MINUTE });
    await pass(h, 10 * MINUTE);
    assert.equal((await getInvoice(t, inv.id)).status, 'expired', 'a late payment never revives an invoice');
    assert.equal((await getInvoice(t, open.id)).status, 'pending');

    const latePayments = await listLatePayments(t.deps.db, inv.id);
    assert.deepEqual(latePayments.map((p) => [p.txHash, p.amount, p.kind]), [[late.txId, 7_000_001n, 'late']]);
    assert.deepEqual((await latePaymentHashes(t.deps.db, [inv.id, open.id])).get(inv.id), [late.txId]);
    assert.equal((await latePaymentHashes(t.deps.db, [inv.id, open.id])).get(open.id), undefined);
    assert.deepEqual((await listMerchantLatePayments(t.deps.db, merchantId)).map((p) => [p.txHash, p.invoiceId]), [[late.txId, inv.id]]);
    assert.deepEqual(await listMerchantLatePayments(t.deps.db, otherMerchant), []);

    const unmatched = await listUnmatchedTransfers(t.deps.db, merchantId);
    assert.deepEqual(unmatched.map((u) => u.txHash), [stray.txId]);
    assert.deepEqual(toChainTransferResponse(unmatched[0]!), {
      id: unmatched[0]!.id,
      kind: 'unmatched',
      invoice_id: null,
      tx_hash: stray.txId,
      log_index: 0,
      from: unmatched[0]!.from,
      to: address,
      amount: '123.456789',
      token_contract: USDT_CONTRACT,
      block_number: blockNumberAt(start + 21 * MINUTE),
      block_timestamp: new Date(start + 21 * MINUTE).toISOString(),
      recorded_at: new Date(t.clock.now()).toISOString(),
    });
    assert.deepEqual(await listUnmatchedTransfers(t.deps.db, otherMerchant), [], 'another merchant never sees them');
    assert.deepEqual((await eventsOf(t, inv.id)).map((e) => e.type), ['invoice.expired'], 'no event for late money');
  } finally {
    await h.close();
  }
});

test('a paid review invoice keeps its status, records tx_hash, emits invoice.review again and never expires', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 3_000_077n, status: 'review', expiresAt: start + 10 * MINUTE });
    const unpaid = await insertInvoice(t, { address, amount: 3_000_078n, status: 'review', expiresAt: start + 10 * MINUTE });
    const p = tg.pay({ to: address, amount: 3_000_077n, blockTimestamp: start + 2 * MINUTE });
    await pass(h, 5 * MINUTE);
    const after = await getInvoice(t, inv.id);
    assert.equal(after.status, 'review');
    assert.equal(after.txHash, p.txId);
    assert.equal(after.confirmedAt, null);
    const events = await eventsOf(t, inv.id);
    assert.deepEqual(events.map((e) => e.type), ['invoice.review']);
    assert.equal((events[0]!.data.transaction as { tx_hash: string }).tx_hash, p.txId);

    // A second payment of the same amount is recorded late, not as a second review payment.
    const again = tg.pay({ to: address, amount: 3_000_077n, blockTimestamp: start + 6 * MINUTE });
    await pass(h, 20 * MINUTE);
    assert.deepEqual((await listLatePayments(t.deps.db, inv.id)).map((x) => x.txHash), [again.txId]);
    assert.equal((await getInvoice(t, inv.id)).status, 'review', 'paid review waits for the owner');
    assert.equal((await getInvoice(t, unpaid.id)).status, 'expired', 'unpaid review expires like pending');
  } finally {
    await h.close();
  }
});

test('the owner accepts a paid review invoice: invoice.confirmed carries the paying transaction; the ledger lists late payments', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const { createSession, SESSION_COOKIE } = await import('../../src/accounts/sessions.repo.js');
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 4_000_011n, status: 'review', expiresAt: start + 10 * MINUTE });
    const p = tg.pay({ to: address, amount: 4_000_011n, blockTimestamp: start + 2 * MINUTE });
    await pass(h, 5 * MINUTE);
    const late = tg.pay({ to: address, amount: 4_000_011n, blockTimestamp: start + 12 * MINUTE });
    await pass(h, 20 * MINUTE);

    const owner = t.client();
    owner.cookies.set(SESSION_COOKIE, (await createSession(t.deps.db, inv.merchantId, t.clock.now())).token);
    const res = await owner.post(`/api/v1/invoices/${inv.id}/review`, { decision: 'accept' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.invoice.status, 'confirmed');
    const confirmed = (await eventsOf(t, inv.id)).filter((e) => e.type === 'invoice.confirmed');
    assert.equal(confirmed.length, 1);
    const tx = confirmed[0]!.data.transaction as Record<string, unknown>;
    assert.equal(tx.tx_hash, p.txId);
    assert.equal(tx.amount, '4.000011');
    assert.equal(tx.to, address);

    const csv = await owner.get('/api/v1/ledger.csv');
    assert.equal(csv.status, 200);
    const row = csv.text.split('\r\n').find((l) => l.startsWith(inv.id));
    assert.ok(row, 'the invoice is in the ledger');
    assert.ok(row.includes(late.txId), 'its late payment hash is in the late_payments column');
  } finally {
    await h.close();
  }
});
