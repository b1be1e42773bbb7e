/** The chain worker as serve runs it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkers } from '../../src/workers.js';
import { startTestApp } from '../helpers/app.js';

test('serve runs the chain watcher every tron.poll_interval_seconds', async () => {
  const t = await startTestApp({ config: { tron: { poll_interval_seconds: 7 } } });
  try {
    const chains = createWorkers(t.deps).filter((w) => w.name === 'chain');
    // One scanner loop, under its leader lease (a merge once left a second, unleased one beside it).
    assert.equal(chains.length, 1);
    const chain = chains[0];
    assert.equal(chain?.intervalMs, 7000);
    assert.equal(await chain!.runOnce(), false);
    assert.equal(t.deps.watcherStatus.state, 'idle');
  } finally {
    await t.close();
  }
});
