import { test } from 'node:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { runOnce, createChainRuntime, COVERAGE_MARGIN_MS, MAX_PAGES_PER_POLL } from '../../src/chain/chain.worker.js';
import { findCursor, latePaymentHashes, listLatePayments, listMerchantLatePayments, listUnmatchedTransfers } from '../../src/chain/chain.repo.js';
import { toChainTransferResponse } from '../../src/chain/chain.schemas.js';
import { MINUTE, SECOND, HOUR } from '../../src/lib/clock.js';
import { USDT_CONTRACT } from '../../src/lib/tron.js';
import { eventsOf, getInvoice, insertInvoice, newMerchantId, startChainHarness, transfersOf, type ChainHarness } from '../helpers/chain-fixtures.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { blockNumberAt, randomAddress, SAMPLE_AMOUNT, SAMPLE_BLOCK, SAMPLE_BLOCK_TIME, SAMPLE_MERCHANT, SAMPLE_PAYER, SAMPLE_TX, trc20Record } from '../helpers/tron-samples.js';

/** Moves the clock one poll interval on and runs one watcher pass. */
async function pass(h: ChainHarness, ms = 5 * SECOND): Promise<void> {
  h.t.clock.advance(ms);
  await runOnce(h.t.deps);
}

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

test('polls resume from the durable cursor, read each receipt once and poll each address once per interval', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const a = await insertInvoice(t, { address, amount: 10_000_001n });
    const b = await insertInvoice(t, { address, amount: 10_000_002n });
    tg.pay({ to: address, amount: 10_000_001n, blockTimestamp: start + 30 * SECOND });

    await pass(h, 3 * MINUTE);
    assert.equal((await getInvoice(t, a.id)).status, 'confirmed');
    const covered = await findCursor(t.deps.db, address);
    assert.equal(covered, tg.currentSolidHead().timestamp - COVERAGE_MARGIN_MS);

    // Same instant again: the interval has not passed, no request at all.
    const n = tg.count();
    await runOnce(t.deps);
    assert.equal(tg.count(), n);

    await pass(h);
    const trc20 = tg.requests.filter((r) => r.endpoint === 'trc20');
    assert.equal(trc20.at(-1)!.query.get('min_timestamp'), String(covered! + 1));
    assert.equal(tg.count('receipt'), 1, 'the recorded transaction is not read again');

    // A restart loses the in-memory state only: the next pass asks from the cursor, so a payment
    // made while the process was down is found, and the old one is not counted again.
    tg.pay({ to: address, amount: 10_000_002n, blockTimestamp: t.clock.now() - 30 * SECOND });
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    const coveredBeforeRestart = (await findCursor(t.deps.db, address))!;
    await pass(h, 2 * MINUTE);
    assert.equal(tg.requests.filter((r) => r.endpoint === 'trc20').at(-1)!.query.get('min_timestamp'), String(coveredBeforeRestart + 1));
    assert.equal((await getInvoice(t, b.id)).status, 'confirmed');
    assert.equal((await transfersOf(t)).length, 2);
    assert.equal((await eventsOf(t, a.id)).length, 1);
    assert.equal((await eventsOf(t, b.id)).length, 1);
  } finally {
    await h.close();
  }
});

test('expiry waits until the confirmed history is covered past expires_at; a payment seen late still confirms', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 5_000_123n, expiresAt: start + 10 * MINUTE });

    // The solidity node (and so TronGrid's confirmed feed) is stuck before the payment.
    tg.solidHead = { number: blockNumberAt(start + MINUTE), timestamp: start + MINUTE };
    await pass(h, 20 * MINUTE);
    assert.equal((await getInvoice(t, inv.id)).status, 'pending', 'past expires_at but not covered: still pending');
    assert.ok((await findCursor(t.deps.db, address)) === undefined || (await findCursor(t.deps.db, address))! < start + 10 * MINUTE);

    // Paid at 9:57 into the window; it becomes visible long after expires_at.
    tg.pay({ to: address, amount: 5_000_123n, blockTimestamp: start + 9 * MINUTE + 57 * SECOND });
    tg.solidHead = undefined;
    await pass(h, 10 * MINUTE);
    const after = await getInvoice(t, inv.id);
    assert.equal(after.status, 'confirmed');
    assert.deepEqual((await eventsOf(t, inv.id)).map((e) => e.type), ['invoice.confirmed']);
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

test('pages are followed by fingerprint on our own base URL; duplicates across pages count once', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    tg.pageSize = 2;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 9_000_009n });
    for (let i = 0; i < 4; i++) tg.pay({ to: address, amount: 1_000_000n + BigInt(i), blockTimestamp: start + (i + 1) * 3 * SECOND });
    const paid = tg.pay({ to: address, amount: 9_000_009n, blockTimestamp: start + 30 * SECOND });
    tg.addRecord(address, paid.record); // the same record again, on the next page
    await pass(h, 3 * MINUTE);
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
    const pages = tg.requests.filter((r) => r.endpoint === 'trc20');
    assert.equal(pages.length, 3);
    assert.equal(pages[0]!.query.get('fingerprint'), null);
    assert.ok(pages[1]!.query.get('fingerprint'));
    for (const p of pages.slice(1)) assert.equal(p.query.get('min_timestamp'), pages[0]!.query.get('min_timestamp'));
    assert.equal(tg.count('receipt'), 5, 'one receipt read per transaction');
    assert.equal((await transfersOf(t)).filter((x) => x.tx_hash === paid.txId).length, 1);
    assert.equal((await eventsOf(t, inv.id)).length, 1);
    assert.equal((await transfersOf(t)).filter((x) => x.kind === 'unmatched').length, 4);
  } finally {
    await h.close();
  }
});

test('only addresses with open invoices are polled; /health reports the watcher state and lag', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const watched = randomAddress();
    const closed = randomAddress();
    await insertInvoice(t, { address: closed, amount: 1_000_001n, status: 'confirmed' });
    await insertInvoice(t, { address: closed, amount: 1_000_002n, status: 'expired' });
    await pass(h);
    assert.equal(tg.count(), 0);
    let health = await t.client().get('/api/v1/health');
    assert.deepEqual((health.body as { watcher: unknown }).watcher, { state: 'idle', lag_seconds: null });

    await insertInvoice(t, { address: watched, amount: 1_000_003n });
    await pass(h, 3 * MINUTE);
    assert.deepEqual([...new Set(tg.requests.filter((r) => r.endpoint === 'trc20').map((r) => r.path))], [`/v1/accounts/${watched}/transactions/trc20`]);
    health = await t.client().get('/api/v1/health');
    const w = (health.body as { watcher: { state: string; lag_seconds: number } }).watcher;
    assert.equal(w.state, 'running');
    // Lag = solidification (~57 s) + the coverage margin, rounded to the 3 s block grid.
    const expected = Math.round((t.clock.now() - (tg.currentSolidHead().timestamp - COVERAGE_MARGIN_MS)) / 1000);
    assert.equal(w.lag_seconds, expected);
    assert.ok(w.lag_seconds >= 117 && w.lag_seconds < 125);
  } finally {
    await h.close();
  }
});

test('a backlog longer than one pass reads is continued next pass, covering only whole blocks', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    tg.pageSize = 1;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 8_000_008n });
    const times: number[] = [];
    for (let i = 0; i < MAX_PAGES_PER_POLL + 2; i++) times.push(start + (i + 1) * 3 * SECOND);
    times.slice(0, -1).forEach((at, i) => tg.pay({ to: address, amount: 1_000_000n + BigInt(i), blockTimestamp: at }));
    tg.pay({ to: address, amount: 8_000_008n, blockTimestamp: times.at(-1)! });
    await pass(h, 5 * MINUTE);
    assert.equal(tg.count('trc20'), MAX_PAGES_PER_POLL);
    assert.equal((await getInvoice(t, inv.id)).status, 'pending');
    assert.equal(await findCursor(t.deps.db, address), times[MAX_PAGES_PER_POLL - 1]! - 1, 'the last block reached may continue on the next page');
    await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
    assert.equal((await transfersOf(t)).length, MAX_PAGES_PER_POLL + 2, 'the boundary block is listed twice but recorded once');
  } finally {
    await h.close();
  }
});

test('a server clock behind the chain: a new invoice opening inside covered history is read again', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    await insertInvoice(t, { address, amount: 6_000_001n, expiresAt: start + HOUR });
    // The chain (and so the solidified head) is 10 minutes ahead of this server's clock.
    tg.solidHead = { number: blockNumberAt(start + 10 * MINUTE), timestamp: start + 10 * MINUTE };
    await pass(h);
    const covered = (await findCursor(t.deps.db, address))!;
    assert.ok(covered > t.clock.now(), 'coverage is ahead of the local clock');

    t.clock.advance(SECOND);
    const inv = await insertInvoice(t, { address, amount: 6_000_002n });
    tg.pay({ to: address, amount: 6_000_002n, blockTimestamp: t.clock.now() + 3 * MINUTE });
    await pass(h);
    assert.equal(tg.requests.filter((r) => r.endpoint === 'trc20').at(-1)!.query.get('min_timestamp'), String(inv.createdAt));
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
    // Read once: the next pass goes on from the cursor again.
    await pass(h);
    assert.equal(tg.requests.filter((r) => r.endpoint === 'trc20').at(-1)!.query.get('min_timestamp'), String(covered + 1));
  } finally {
    await h.close();
  }
});

test('a real restart (database closed and reopened) resumes from the cursor: no gap, no double count', async () => {
  const start = Date.UTC(2026, 0, 15, 12, 0, 0);
  let now = start;
  const tg = await startTronGrid({ now: () => now });
  const dir = tempDir();
  const path = join(dir, 'gateway.db');
  const config = { tron: { api_url: tg.url }, database: { path } };
  const address = randomAddress();
  try {
    let t = await startTestApp({ now: start, config });
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    const a = await insertInvoice(t, { address, amount: 4_000_001n });
    const b = await insertInvoice(t, { address, amount: 4_000_002n });
    tg.pay({ to: address, amount: 4_000_001n, blockTimestamp: start + MINUTE });
    t.clock.advance(3 * MINUTE);
    now = t.clock.now();
    await runOnce(t.deps);
    assert.equal((await getInvoice(t, a.id)).status, 'confirmed');
    const covered = (await findCursor(t.deps.db, address))!;
    await t.close();

    // While down: B is paid.
    tg.pay({ to: address, amount: 4_000_002n, blockTimestamp: start + 4 * MINUTE });
    t = await startTestApp({ now: start + 10 * MINUTE, config });
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    now = t.clock.now();
    tg.resetCounts();
    await runOnce(t.deps);
    assert.equal(tg.requests.find((r) => r.endpoint === 'trc20')!.query.get('min_timestamp'), String(covered + 1));
    assert.equal((await getInvoice(t, b.id)).status, 'confirmed');
    assert.equal(tg.count('receipt'), 1, 'only the new transaction is read');
    assert.equal((await transfersOf(t)).length, 2);
    assert.deepEqual((await eventsOf(t, a.id)).map((e) => e.type), ['invoice.confirmed']);
    await t.close();
  } finally {
    await tg.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("coverage also waits for TronGrid's confirmed index: a payment indexed late still confirms, nothing expires early", async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 5_500_001n, expiresAt: start + 10 * MINUTE });
    const unpaid = await insertInvoice(t, { address, amount: 5_500_002n, expiresAt: start + 10 * MINUTE });
    // The solidity node is at now - 57 s, but TronGrid's event index is stuck 15 minutes back.
    tg.indexedUpTo = start + 2 * MINUTE;
    await pass(h, 30 * MINUTE);
    assert.equal(await findCursor(t.deps.db, address), start + 2 * MINUTE - COVERAGE_MARGIN_MS);
    assert.equal((await getInvoice(t, unpaid.id)).status, 'pending', 'not expired while the index trails');
    // The indexer catches up and the paid transfer (made in time) appears in the feed.
    tg.pay({ to: address, amount: 5_500_001n, blockTimestamp: start + 9 * MINUTE });
    tg.indexedUpTo = undefined;
    await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, unpaid.id)).status, 'expired');
    const events = tg.requests.filter((r) => r.endpoint === 'events');
    assert.equal(events.length, 2, 'one index probe per pass');
    assert.equal(events[0]!.path, `/v1/contracts/${USDT_CONTRACT}/events`);
    assert.equal(events[0]!.query.get('only_confirmed'), 'true');
    assert.equal(events[0]!.query.get('order_by'), 'block_timestamp,desc');
    assert.equal(events[0]!.query.get('limit'), '1');
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
