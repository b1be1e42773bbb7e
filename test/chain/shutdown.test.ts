/**
 * Shutdown during a long watcher pass (found by the reliability suite: a SIGTERM waited for a pass
 * of thousands of paced receipt reads, over a minute, while the delivery worker had already
 * stopped). stop() ends the pass at the next record; what was not judged is read at the next start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chainWorker, createChainRuntime, runOnce } from '../../src/chain/chain.worker.js';
import { findCursor } from '../../src/chain/chain.repo.js';
import { MINUTE } from '../../src/lib/clock.js';
import { startLoop } from '../../src/lib/loop.js';
import { getInvoice, insertInvoice, startChainHarness, transfersOf } from '../helpers/chain-fixtures.js';
import { randomAddress } from '../helpers/tron-samples.js';

test('stopping the watcher mid-pass ends the pass early, keeps coverage before what was not read, and the next start confirms the rest', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const count = 40;
    const invoices = [];
    for (let i = 0; i < count; i++) {
      const inv = await insertInvoice(t, { address, amount: 10_000_000n + BigInt(i + 1), expiresAt: start + 30 * MINUTE });
      invoices.push(inv);
      tg.pay({ to: address, amount: inv.payableAmount, blockTimestamp: start + MINUTE + i * 3000 });
    }
    t.clock.advance(10 * MINUTE);
    // Paced at 10 requests a second: the whole pass would take about four seconds.
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 10 });
    const loop = startLoop(chainWorker(t.deps), t.deps.log);
    while ((await transfersOf(t)).length < 3) await new Promise((r) => setTimeout(r, 20));
    await loop.stop();
    const recorded = (await transfersOf(t)).length;
    assert.ok(recorded < count / 2, `the pass went on after stop(): ${recorded} of ${count} recorded`);
    const covered = await findCursor(t.deps.db, t.config.network, address);
    const firstUnread = start + MINUTE + recorded * 3000;
    assert.ok(covered === undefined || covered < firstUnread, `coverage ${covered} passed an unread payment at ${firstUnread}`);

    // The next start (a fresh runtime) picks up where the pass stopped: every payment confirms.
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    t.clock.advance(MINUTE);
    await runOnce(t.deps);
    for (const inv of invoices) assert.equal((await getInvoice(t, inv.id)).status, 'confirmed', inv.id);
    assert.equal((await transfersOf(t)).length, count);
  } finally {
    await h.close();
  }
});
