/** The chain watcher's coverage: the durable cursor, paging, backlog, restarts, index lag, and expiry that waits until the history is covered. */
import { test } from 'node:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { runOnce, createChainRuntime, COVERAGE_MARGIN_MS, MAX_PAGES_PER_POLL } from '../../src/chain/chain.worker.js';
import { findCursor } from '../../src/chain/chain.repo.js';
import { MINUTE, SECOND, HOUR } from '../../src/lib/clock.js';
import { USDT_CONTRACT } from '../../src/lib/tron.js';
import { eventsOf, getInvoice, insertInvoice, pass, startChainHarness, transfersOf } from '../helpers/chain-fixtures.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { blockNumberAt, randomAddress } from '../helpers/tron-samples.js';

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
