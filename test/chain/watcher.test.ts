/**
 * The block scanner against the simulated node (real java-tron shapes, filler traffic in every
 * block): confirmation, coverage and expiry by block time, head-following with backfill,
 * restarts, the linger, request costs, and payments seen late.
 */
import { test } from 'node:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { runOnce, createChainRuntime, MAX_FOLLOW_BEHIND } from '../../src/chain/chain.worker.js';
import { listGaps, listLatePayments, listUnmatchedTransfers, loadScanState } from '../../src/chain/chain.repo.js';
import { MINUTE, SECOND, HOUR } from '../../src/lib/clock.js';
import { USDT_CONTRACT } from '../helpers/tron-samples.js';
import { eventsOf, getInvoice, insertInvoice, pass, startChainHarness, transfersOf, type ChainHarness } from '../helpers/chain-fixtures.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { startSimulatedTron } from '../../src/devnet/tron-node.js';
import { buildConfig } from '../../src/config.js';
import {
  FAKE_USDT_CONTRACTS,
  LOOKALIKE_PAYER,
  randomAddress,
  SAMPLE_AMOUNT,
  SAMPLE_BLOCK,
  SAMPLE_BLOCK_TIME,
  SAMPLE_MERCHANT,
  SAMPLE_PAYER,
  SAMPLE_TX,
} from '../helpers/tron-samples.js';

/** When block `n` of the stand-in is solidified (its time + 19 blocks). */
const solidAt = (h: ChainHarness, n: number) => h.tg.blockTime(n) + 19 * 3000;

// The real mainnet TransactionInfo of SAMPLE_TX (block 69316562), verbatim.
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

test('the real mainnet payment confirms its invoice once, with the transaction in the event; one request per block', async () => {
  const created = SAMPLE_BLOCK_TIME - 10 * MINUTE;
  const h = await startChainHarness({ now: created, config: { tron: { api_key: 'tg-key-123' } } });
  try {
    const { t, tg } = h;
    const inv = await insertInvoice(t, { address: SAMPLE_MERCHANT, amount: SAMPLE_AMOUNT, createdAt: created });
    tg.injectInfo({ info: REAL_RECEIPT, block: SAMPLE_BLOCK });
    await pass(h);
    // Payment made, solidified head not yet past it: nothing moves.
    while (t.clock.now() + 5 * SECOND < solidAt(h, SAMPLE_BLOCK)) await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'pending');
    await pass(h);
    const after = await getInvoice(t, inv.id);
    assert.equal(after.status, 'confirmed');
    assert.equal(after.txHash, SAMPLE_TX);
    assert.equal(after.confirmedAt, t.clock.now());

    const events = await eventsOf(t, inv.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['invoice.confirmed'],
    );
    const data = events[0]!.data as { invoice: { status: string; tx_hash: string; id: string }; transaction: unknown };
    assert.equal(data.invoice.status, 'confirmed');
    assert.deepEqual(data.transaction, {
      network: 'tron-mainnet',
      token: 'USDT',
      tx_hash: SAMPLE_TX,
      log_index: 0,
      from: SAMPLE_PAYER,
      to: SAMPLE_MERCHANT,
      amount: '41.677389',
      raw_amount: '41677389',
      token_contract: USDT_CONTRACT,
      block_number: SAMPLE_BLOCK,
      block_timestamp: '2025-02-03T16:51:45.000Z',
    });

    // The requests: POST {"num": n} to the solidity endpoint, with our key; every block once, but
    // for a block asked for a little early (an empty answer, then a head read, then the block).
    const reads = tg.requests.filter((r) => r.endpoint === 'blockinfo').map((r) => JSON.parse(r.body) as { num: number });
    assert.ok(tg.requests.every((r) => r.headers['tron-pro-api-key'] === 'tg-key-123'));
    assert.ok(
      tg.requests.every((r) => r.path.startsWith('/walletsolidity/') || r.endpoint === 'wallet_blockrange'),
      'only solidified data is read, and the latest blocks (for seen payments only)',
    );
    const nums = reads.map((r) => r.num);
    assert.ok(nums.filter((n) => n === SAMPLE_BLOCK).length <= 2);
    assert.ok(nums.length - new Set(nums).size <= tg.count('getblock'), 'a block is read again only after an early ask');
    const sorted = [...new Set(nums)].sort((a, b) => a - b);
    assert.deepEqual(
      sorted,
      Array.from({ length: sorted.length }, (_, i) => sorted[0]! + i),
      'no block skipped',
    );

    // Nothing is recorded twice; the scanner lingers (late payments) though nothing is open.
    await pass(h);
    await pass(h);
    assert.equal((await transfersOf(t)).length, 1);
    assert.equal((await eventsOf(t, inv.id)).length, 1);
    assert.equal(t.deps.watcherStatus.state, 'running');
  } finally {
    await h.close();
  }
});

test('400 spam transfers before a payment: the payment confirms in the first pass after its block solidifies; spam never confirms', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 25_000_123n, expiresAt: start + HOUR });
    await pass(h);
    // 400 spam transfers in the next blocks: zero-value lookalikes, fake USDT tokens with the exact
    // amount, failed calls with the exact amount, near amounts.
    for (let i = 0; i < 400; i++) {
      const at = start + 10 * SECOND + Math.floor(i / 20) * 3000;
      const kind = i % 4;
      if (kind === 0) tg.transfer({ to: address, amount: 0n, from: LOOKALIKE_PAYER, at });
      else if (kind === 1) tg.transfer({ to: address, amount: 25_000_123n, contract: FAKE_USDT_CONTRACTS[i % 3]!, at });
      else if (kind === 2) tg.transfer({ to: address, amount: 25_000_123n, result: i % 8 === 2 ? 'FAILED' : 'REVERT', at });
      else tg.transfer({ to: address, amount: 1000n + BigInt(i), from: LOOKALIKE_PAYER, at });
    }
    const paid = tg.transfer({ to: address, amount: 25_000_123n, at: start + 75 * SECOND });
    const solid = solidAt(h, paid.blockNumber);
    while (t.clock.now() + 5 * SECOND < solid) await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'pending');
    await pass(h);
    assert.ok(t.clock.now() - solid < 5 * SECOND);
    const after = await getInvoice(t, inv.id);
    assert.equal(after.status, 'confirmed', 'confirmed by the first pass after its block solidified');
    assert.equal(after.txHash, paid.txId);
    // The dust and near amounts are recorded (unmatched), the fake tokens and failed calls are not.
    const rows = await transfersOf(t);
    assert.equal(rows.filter((r) => r.kind === 'unmatched').length, 200);
    assert.equal(rows.filter((r) => r.kind === 'confirmed').length, 1);
    assert.ok(rows.every((r) => r.token_contract === USDT_CONTRACT));
  } finally {
    await h.close();
  }
});

test('200 watched addresses: requests per minute stay near blocks per minute', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const start = t.clock.now();
    const addresses = Array.from({ length: 200 }, () => randomAddress());
    const invoices = [];
    for (const [i, address] of addresses.entries())
      invoices.push(await insertInvoice(t, { address, amount: 10_000_000n + BigInt(i), expiresAt: start + HOUR }));
    await pass(h);
    // Half of them pay over the next minutes.
    for (let i = 0; i < 100; i++) tg.transfer({ to: addresses[i]!, amount: 10_000_000n + BigInt(i), at: start + 10 * SECOND + i * 3000 });
    tg.resetCounts();
    const from = t.clock.now();
    for (let i = 0; i < 10 * 12; i++) await pass(h); // 10 minutes of 5 s polls
    const minutes = (t.clock.now() - from) / MINUTE;
    const blocksPerMinute = 20;
    const perMinute = tg.count() / minutes;
    // Besides the blocks, one read of the latest blocks every 5 s while invoices are open (seen payments): 12 a minute.
    assert.ok(perMinute <= blocksPerMinute * 1.6 + 12, `${perMinute} requests a minute for ${blocksPerMinute} blocks a minute`);
    // One request a block, and a head read every 100 s; and at most one read of the latest blocks a 5 s poll.
    const solidPerMinute = (tg.count() - tg.count('wallet_blockrange')) / minutes;
    assert.ok(solidPerMinute <= blocksPerMinute + 1, `${solidPerMinute} solidified requests a minute`);
    assert.ok(tg.count('wallet_blockrange') / minutes <= 12, `${tg.count('wallet_blockrange') / minutes} latest reads a minute`);
    assert.ok(tg.count('nowblock') <= 8, `${tg.count('nowblock')} head reads`);
    for (let i = 0; i < 100; i++) assert.equal((await getInvoice(t, invoices[i]!.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, invoices[150]!.id)).status, 'pending');
  } finally {
    await h.close();
  }
});

test('expiry waits until the scanned blocks pass expires_at; an unpaid invoice then expires; later payments are late, other amounts unmatched', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const paid = await insertInvoice(t, { address, amount: 7_000_001n, expiresAt: start + 5 * MINUTE });
    const unpaid = await insertInvoice(t, { address, amount: 7_000_002n, expiresAt: start + 5 * MINUTE });
    // Paid in the last block of its window.
    const last = tg.blockAt(start + 5 * MINUTE);
    assert.equal(last.timestamp, start + 5 * MINUTE);
    tg.transfer({ to: address, amount: 7_000_001n, block: last.number });
    // The clock is past expires_at but the solidified blocks are not: nothing expires.
    while (t.clock.now() < start + 5 * MINUTE + 50 * SECOND) await pass(h);
    assert.equal((await getInvoice(t, unpaid.id)).status, 'pending');
    assert.equal((await getInvoice(t, paid.id)).status, 'pending');
    await pass(h, 10 * SECOND);
    assert.equal((await getInvoice(t, paid.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, unpaid.id)).status, 'expired');
    assert.deepEqual(
      (await eventsOf(t, unpaid.id)).map((e) => e.type),
      ['invoice.expired'],
    );

    const late = tg.transfer({ to: address, amount: 7_000_002n, at: t.clock.now() });
    const other = tg.transfer({ to: address, amount: 7_000_003n, at: t.clock.now() });
    await pass(h, 2 * MINUTE);
    assert.deepEqual(
      (await listLatePayments(t.deps.db, unpaid.id)).map((x) => x.txHash),
      [late.txId],
    );
    assert.deepEqual(
      (await listUnmatchedTransfers(t.deps.db, t.config.network, paid.merchantId)).map((x) => x.txHash),
      [other.txId],
    );
    assert.equal((await getInvoice(t, unpaid.id)).status, 'expired');
  } finally {
    await h.close();
  }
});

test('an expired invoice is confirmed by an in-window transfer seen late (expired -> confirmed, invoice.confirmed)', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    // Expired already (for example by the account-history watcher of an earlier version, whose
    // coverage trusted a lagging index) while its payment, made in time, is in a block not read yet.
    const keep = await insertInvoice(t, { address, amount: 8_000_001n, createdAt: start - 10 * MINUTE, expiresAt: start + HOUR });
    const inv = await insertInvoice(t, { address, amount: 8_000_002n, createdAt: start - 5 * MINUTE, expiresAt: start - MINUTE, status: 'expired' });
    const p = tg.transfer({ to: address, amount: 8_000_002n, at: start - 3 * MINUTE });
    await pass(h, 2 * MINUTE);
    const after = await getInvoice(t, inv.id);
    assert.equal(after.status, 'confirmed');
    assert.equal(after.txHash, p.txId);
    const events = await eventsOf(t, inv.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['invoice.confirmed'],
    );
    assert.equal((events[0]!.data.transaction as { tx_hash: string }).tx_hash, p.txId);
    assert.equal((await getInvoice(t, keep.id)).status, 'pending');
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
    assert.deepEqual(
      events.map((e) => e.type),
      ['invoice.review'],
    );
    assert.equal((events[0]!.data.transaction as { tx_hash: string }).tx_hash, p.txId);

    // A second payment of the same amount is recorded late, not as a second review payment.
    const again = tg.pay({ to: address, amount: 3_000_077n, blockTimestamp: start + 6 * MINUTE });
    await pass(h, 20 * MINUTE);
    assert.deepEqual(
      (await listLatePayments(t.deps.db, inv.id)).map((x) => x.txHash),
      [again.txId],
    );
    assert.equal((await getInvoice(t, inv.id)).status, 'review', 'paid review waits for the owner');
    assert.equal((await getInvoice(t, unpaid.id)).status, 'expired', 'unpaid review expires like pending');
  } finally {
    await h.close();
  }
});

test('a two-hour gap is backfilled while a new payment confirms promptly; expiry waits for the gap', async () => {
  const h = await startChainHarness({ config: { tron: { poll_interval_seconds: 0.5 } } });
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    // Their windows end late in the outage (115 of 120 minutes, about 2 300 blocks in): the first
    // pass reads the gap oldest first for 0.8 of the 0.5 s poll interval, far from reaching it on
    // loopback (about 730 blocks here), so "no expiry while its window is unread" does not
    // hang on how fast this machine reads.
    const old = await insertInvoice(t, { address, amount: 9_000_001n, expiresAt: start + 115 * MINUTE });
    const oldUnpaid = await insertInvoice(t, { address, amount: 9_000_002n, expiresAt: start + 115 * MINUTE });
    t.clock.advance(5 * SECOND);
    await runOnce(t.deps);
    // Down for two hours; the old invoice is paid meanwhile.
    tg.transfer({ to: address, amount: 9_000_001n, at: start + 100 * MINUTE });
    t.clock.advance(2 * HOUR);
    // Back: a new invoice, paid in the next block.
    const fresh = await insertInvoice(t, { address, amount: 9_000_003n, expiresAt: t.clock.now() + HOUR });
    const p = tg.transfer({ to: address, amount: 9_000_003n, at: t.clock.now() });
    t.clock.set(solidAt(h, p.blockNumber));
    assert.equal(await runOnce(t.deps), true, 'more backfill to do');
    assert.equal((await getInvoice(t, fresh.id)).status, 'confirmed', 'the new payment did not wait for the backfill');
    const gaps = await listGaps(t.deps.db, t.config.network);
    assert.equal(gaps.length, 1);
    assert.ok(gaps[0]!.toBlock - gaps[0]!.fromBlock > 100, 'the gap is still being read');
    assert.equal((await getInvoice(t, oldUnpaid.id)).status, 'pending', 'no expiry while its window is unread');
    const health = await t.client().get('/health');
    assert.ok(health.body.watcher.scan.gap_blocks > 100);
    assert.equal(health.body.watcher.scan.behind_blocks, 0);
    // The backfill completes.
    while (await runOnce(t.deps));
    assert.deepEqual(await listGaps(t.deps.db, t.config.network), []);
    assert.equal((await getInvoice(t, old.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, oldUnpaid.id)).status, 'expired');
    assert.equal((await t.client().get('/health')).body.watcher.scan.gap_blocks, 0);
  } finally {
    await h.close();
  }
});

test('a real restart mid-backfill (database closed and reopened) resumes with no gap and no double count', async () => {
  const start = Date.UTC(2026, 0, 15, 12, 0, 0);
  let now = start;
  const tg = await startTronGrid({ now: () => now });
  const dir = tempDir();
  const path = join(dir, 'gateway.db');
  const config = { tron: { api_url: tg.url, poll_interval_seconds: 0.05 }, database: { path } };
  const address = randomAddress();
  try {
    let t = await startTestApp({ now: start, config });
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    const invoices = [];
    for (let i = 0; i < 30; i++) {
      invoices.push(await insertInvoice(t, { address, amount: 4_000_001n + BigInt(i), expiresAt: start + HOUR }));
      tg.transfer({ to: address, amount: 4_000_001n + BigInt(i), at: start + MINUTE + i * 20 * SECOND });
    }
    now = start + 30 * MINUTE;
    t.clock.set(now);
    // One short pass: the follower jumps to the head, part of the gap is read.
    assert.equal(await runOnce(t.deps), true);
    const partly = (await transfersOf(t)).length;
    assert.ok(partly < 30, `${partly} recorded in the first pass`);
    await t.close();

    t = await startTestApp({ now: start + 31 * MINUTE, config });
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    now = t.clock.now();
    while (await runOnce(t.deps));
    for (const inv of invoices) assert.equal((await getInvoice(t, inv.id)).status, 'confirmed', inv.id);
    const rows = await transfersOf(t);
    assert.equal(rows.length, 30, 'each payment recorded once');
    for (const inv of invoices) assert.equal((await eventsOf(t, inv.id)).length, 1);
    assert.deepEqual(await listGaps(t.deps.db, t.config.network), []);
    await t.close();
  } finally {
    await tg.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('two providers disagreeing about a paying block, also by id: logged loudly, held as disputed (nothing recorded, live payments still on), confirmed once both agree; the second provider reads every block', async () => {
  const h = await startChainHarness();
  const second = await startSimulatedTron({ now: () => h.t.clock.now() });
  try {
    const { t, tg } = h;
    t.config = buildConfig({ tron: { providers: [{ url: tg.url }, { url: second.url }] } });
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 6_000_001n, expiresAt: start + HOUR });
    const p = tg.transfer({ to: address, amount: 6_000_001n, at: start + 30 * SECOND });
    second.transfer({ to: address, amount: 6_000_001n, at: start + 30 * SECOND, txId: p.txId });
    while (t.clock.now() + 5 * SECOND < solidAt(h, p.blockNumber)) await pass(h);
    // The second provider's copy of the paying block comes back altered (the amount + 1), every time.
    second.fail('blockinfo', { inconsistent: true }, 1000);
    second.fail('txinfo', { inconsistent: true }, 1000);
    await pass(h);
    await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'pending');
    assert.deepEqual(await transfersOf(t), [], 'nothing from that block is recorded');
    const loud = t.logs.find((l) => String(l.msg).includes('BLOCK READ INCONSISTENTLY'));
    assert.ok(loud, 'logged');
    assert.equal(loud.level, 'error');
    assert.equal(loud.block, p.blockNumber);
    assert.equal(t.deps.watcherStatus.state, 'running', 'a dispute holds the invoices of its block, not the watcher');
    const health = await t.client().get('/health');
    assert.ok(health.body.watcher.scan.inconsistent_blocks >= 1);
    assert.equal(health.body.watcher.scan.disputed_blocks, 1);
    assert.equal(health.body.watcher.disputes[0].block, p.blockNumber);
    assert.equal(health.body.live_payments_enabled, true);
    assert.ok(health.body.watcher.providers[0].inconsistent_blocks >= 1);
    assert.ok(health.body.watcher.providers[1].inconsistent_blocks >= 1);
    assert.match(await t.deps.metrics.render().then((m) => m.body), /gatewayd_chain_disputed_blocks 1/);
    second.clearFaults();
    await pass(h);
    await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
    assert.equal((await transfersOf(t)).length, 1);
    assert.equal((await t.client().get('/health')).body.watcher.scan.disputed_blocks, 0);
    assert.ok(second.count('blockinfo') > 10, 'the second provider reads every block (coverage)');
  } finally {
    await h.close();
    await second.close();
  }
});

test('nothing open and the linger over: no TRON request; a new invoice resumes from its creation block, not from the old cursor', async () => {
  const h = await startChainHarness({ config: { tron: { linger_hours: 1 } } });
  try {
    const { t, tg } = h;
    const address = randomAddress();
    // Nothing was ever open: idle, no request.
    await pass(h);
    assert.equal(tg.count(), 0);
    assert.equal(t.deps.watcherStatus.state, 'idle');
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 5_000_001n, expiresAt: start + 10 * MINUTE });
    tg.transfer({ to: address, amount: 5_000_001n, at: start + MINUTE });
    await pass(h, 2 * MINUTE);
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
    // Lingering: a late payment 30 minutes later is still recorded.
    const late = tg.transfer({ to: address, amount: 5_000_001n, at: start + 30 * MINUTE });
    for (let i = 0; i < 5; i++) await pass(h, 8 * MINUTE);
    assert.deepEqual(
      (await listLatePayments(t.deps.db, inv.id)).map((x) => x.txHash),
      [late.txId],
    );
    // An hour after the last invoice closed: idle, and no request at all.
    await pass(h, HOUR);
    tg.resetCounts();
    await pass(h, HOUR);
    await pass(h);
    assert.equal(tg.count(), 0, 'no TRON request while idle');
    assert.equal(t.deps.watcherStatus.state, 'idle');
    assert.equal((await t.client().get('/health')).body.watcher.state, 'idle');
    // A new invoice: scanning resumes near its creation block; the idle hours are not read.
    const cursorBefore = (await loadScanState(t.deps.db, t.config.network))!.cursorBlock;
    const created = t.clock.now();
    const next = await insertInvoice(t, { address, amount: 5_000_002n, createdAt: created, expiresAt: created + 10 * MINUTE });
    tg.transfer({ to: address, amount: 5_000_002n, at: created + 6 * SECOND });
    await pass(h, MINUTE + 10 * SECOND);
    assert.equal((await getInvoice(t, next.id)).status, 'confirmed');
    const reads = tg.requests.filter((r) => r.endpoint === 'blockinfo').map((r) => (JSON.parse(r.body) as { num: number }).num);
    assert.ok(Math.min(...reads) > cursorBefore + 1000, 'the idle hours were skipped');
    assert.ok(Math.min(...reads) <= tg.blockAt(created).number - MAX_FOLLOW_BEHIND + 1, 'from before its creation block');
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

test('a faster chain (a dev node with 1 s blocks): the scanner learns the interval and confirms at one request a block', async () => {
  const h = await startChainHarness({ node: { blockIntervalMs: 1000, solidityLag: 2 } });
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 2_500_001n, expiresAt: start + 10 * MINUTE });
    await pass(h, 30 * SECOND);
    assert.equal(t.deps.chain.blockIntervalMs, 1000);
    const p = tg.transfer({ to: address, amount: 2_500_001n, at: t.clock.now() + 2 * SECOND });
    tg.resetCounts();
    for (let i = 0; i < 12; i++) await pass(h);
    assert.equal((await getInvoice(t, inv.id)).txHash, p.txId);
    const reads = tg.count('blockinfo');
    assert.ok(reads >= 60 && reads <= 66, `${reads} block reads for 60 blocks`);
  } finally {
    await h.close();
  }
});
