/**
 * Shutdown during a long watcher pass (a SIGTERM must not wait for a backfill of thousands of
 * paced block reads): stop() ends the pass at the next block; what was not read stays in the
 * durable gap and is read at the next start, with nothing counted twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chainWorker, createChainRuntime, runOnce } from '../../src/chain/chain.worker.js';
import { listGaps } from '../../src/chain/chain.repo.js';
import { MINUTE } from '../../src/lib/clock.js';
import { startLoop } from '../../src/lib/loop.js';
import { eventsOf, getInvoice, insertInvoice, startChainHarness, transfersOf } from '../helpers/chain-fixtures.js';
import { randomAddress } from '../helpers/tron-samples.js';

test('stopping the watcher mid-backfill ends the pass early, keeps the unread blocks in the gap, and the next start confirms the rest', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const count = 40;
    const invoices = [];
    const blocks: number[] = [];
    for (let i = 0; i < count; i++) {
      const inv = await insertInvoice(t, { address, amount: 10_000_000n + BigInt(i + 1), expiresAt: start + 30 * MINUTE });
      invoices.push(inv);
      blocks.push(tg.pay({ to: address, amount: inv.payableAmount, blockTimestamp: start + MINUTE + i * 3000 }).blockNumber);
    }
    t.clock.advance(10 * MINUTE);
    // Paced at 10 requests a second: the whole backfill would take about 25 seconds.
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 10 });
    const loop = startLoop(chainWorker(t.deps), t.deps.log);
    while ((await transfersOf(t)).length < 3) await new Promise((r) => setTimeout(r, 20));
    await loop.stop();
    const recorded = (await transfersOf(t)).length;
    assert.ok(recorded < count / 2, `the pass went on after stop(): ${recorded} of ${count} recorded`);
    const gaps = await listGaps(t.deps.db, t.config.network);
    assert.equal(gaps.length, 1);
    assert.ok(gaps[0]!.fromBlock <= blocks[recorded]!, 'the first unread payment is still in the gap');

    // The next start (a fresh runtime) picks up where the pass stopped: every payment confirms once.
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    t.clock.advance(MINUTE);
    while (await runOnce(t.deps));
    for (const inv of invoices) {
      assert.equal((await getInvoice(t, inv.id)).status, 'confirmed', inv.id);
      assert.equal((await eventsOf(t, inv.id)).length, 1);
    }
    assert.equal((await transfersOf(t)).length, count);
  } finally {
    await h.close();
  }
});
