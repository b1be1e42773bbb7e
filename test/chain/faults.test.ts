/**
 * TRON API faults: each one is retried with backoff, logged once per condition, reported by
 * /health, and never confirms or expires anything; once it clears, the watcher catches up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createChainRuntime, runOnce } from '../../src/chain/chain.worker.js';
import { retryAfterMs } from '../../src/chain/trongrid.client.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { eventsOf, getInvoice, insertInvoice, startChainHarness } from '../helpers/chain-fixtures.js';
import { type Endpoint, type Fault } from '../helpers/trongrid.js';
import { randomAddress } from '../helpers/tron-samples.js';

const FAULT_MSG = 'chain: TRON API fault; nothing confirmed or expired; retrying with backoff';

interface Case {
  name: string;
  endpoint: Endpoint;
  fault: Fault;
  kind: string;
  /** The wait the provider asked for, which must be honoured. */
  waitMs?: number;
}

const cases: Case[] = [
  { name: '429 with the wait in the body', endpoint: 'trc20', fault: { status: 429, body: { Error: 'The key exceeds the frequency limit(15), and the query server is suspended for 30 s' } }, kind: 'rate_limited', waitMs: 30 * SECOND },
  { name: '429 with Retry-After', endpoint: 'trc20', fault: { status: 429, body: '', headers: { 'retry-after': '45' } }, kind: 'rate_limited', waitMs: 45 * SECOND },
  { name: '403 rate limit as the docs print it', endpoint: 'nowblock', fault: { status: 403, body: { Success: false, Error: 'The key exceeds the frequency limit(15), and the query server is suspended for 30s', StatusCode: 403 } }, kind: 'rate_limited', waitMs: 30 * SECOND },
  { name: '401 bad API key', endpoint: 'trc20', fault: { status: 401, body: { Error: 'ApiKey not exists' } }, kind: 'auth' },
  { name: '403 forbidden', endpoint: 'trc20', fault: { status: 403, body: '' }, kind: 'auth' },
  { name: '500 on the history', endpoint: 'trc20', fault: { status: 500, body: 'Internal Server Error' }, kind: 'server' },
  { name: '503 on the receipt', endpoint: 'receipt', fault: { status: 503, body: '<html>busy</html>' }, kind: 'server' },
  { name: '200 with {"Error": ...} on the receipt', endpoint: 'receipt', fault: { status: 200, body: { Error: 'class org.tron.core.services.http.JsonFormat$ParseException : 1:1: Expected "{".' } }, kind: 'bad_response' },
  { name: '200 with malformed JSON', endpoint: 'trc20', fault: { raw: '{"data":[{"transaction_id":' }, kind: 'bad_response' },
  { name: '200 with a wrong shape', endpoint: 'trc20', fault: { status: 200, body: { success: false, data: 'nope' } }, kind: 'bad_response' },
  { name: '400 with an empty body', endpoint: 'trc20', fault: { status: 400, body: '' }, kind: 'bad_response' },
  { name: 'malformed head block', endpoint: 'nowblock', fault: { raw: 'null' }, kind: 'bad_response' },
  { name: 'no confirmed event listed (index position unknown)', endpoint: 'events', fault: { status: 200, body: { data: [], success: true, meta: { at: 1, page_size: 0 } } }, kind: 'bad_response' },
  { name: 'a hang (timeout)', endpoint: 'receipt', fault: { hang: true }, kind: 'timeout' },
];

for (const c of cases) {
  test(`fault: ${c.name}`, async () => {
    const h = await startChainHarness({ config: { tron: { api_key: 'k' } } });
    try {
      const { t, tg } = h;
      // A short timeout only where the case is the timeout: elsewhere a loaded machine must not turn a fault into a timeout.
      t.deps.chain = createChainRuntime(t.config, { timeoutMs: 'hang' in c.fault ? 300 : 5000, maxRequestsPerSecond: 0 });
      const address = randomAddress();
      const start = t.clock.now();
      const paid = await insertInvoice(t, { address, amount: 12_000_001n, expiresAt: start + 5 * MINUTE });
      const unpaid = await insertInvoice(t, { address, amount: 12_000_002n, expiresAt: start + 5 * MINUTE });
      tg.pay({ to: address, amount: 12_000_001n, blockTimestamp: start + MINUTE });
      tg.fail(c.endpoint, c.fault, 3);

      t.clock.advance(20 * MINUTE);
      for (let i = 0; i < 3; i++) {
        await runOnce(t.deps);
        assert.equal((await getInvoice(t, paid.id)).status, 'pending', 'a fault never confirms');
        assert.equal((await getInvoice(t, unpaid.id)).status, 'pending', 'a fault never expires');
        assert.equal(t.deps.watcherStatus.state, 'degraded');
        const health = await t.client().get('/api/v1/health');
        assert.equal((health.body as { watcher: { state: string } }).watcher.state, 'degraded');

        // Backing off: nothing is asked before the wait is over.
        const n = tg.count();
        t.clock.advance(4 * SECOND);
        await runOnce(t.deps);
        assert.equal(tg.count(), n, 'no request during the backoff');
        if (c.waitMs !== undefined) {
          t.clock.advance(c.waitMs - 6 * SECOND);
          await runOnce(t.deps);
          assert.equal(tg.count(), n, 'the provider-given wait is honoured');
        }
        t.clock.advance(5 * MINUTE);
      }
      const warned = t.logs.filter((l) => l.msg === FAULT_MSG);
      assert.equal(warned.length, 1, 'logged once per condition');
      assert.equal(warned[0]!.kind, c.kind);
      assert.ok(!t.logText().includes('"k"') && !t.logText().includes('TRON-PRO-API-KEY'), 'the API key is never logged');

      await runOnce(t.deps);
      assert.equal((await getInvoice(t, paid.id)).status, 'confirmed');
      assert.equal((await getInvoice(t, unpaid.id)).status, 'expired');
      assert.deepEqual((await eventsOf(t, paid.id)).map((e) => e.type), ['invoice.confirmed']);
      assert.equal(t.deps.watcherStatus.state, 'running');
      assert.equal(t.logs.filter((l) => l.msg === 'chain: TRON API reachable again').length, 1);
    } finally {
      await h.close();
    }
  });
}

test('an address the provider refuses backs off alone; the others go on confirming', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    // A bad checksum: TronGrid answers 400 "A valid account address is required." for it, every time.
    const refused = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u';
    const good = randomAddress();
    const start = t.clock.now();
    const stuck = await insertInvoice(t, { address: refused, amount: 1_000_001n, expiresAt: start + MINUTE });
    const inv = await insertInvoice(t, { address: good, amount: 1_000_002n });
    tg.pay({ to: good, amount: 1_000_002n, blockTimestamp: start + 30 * SECOND });
    t.clock.advance(5 * MINUTE);
    await runOnce(t.deps);
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, stuck.id)).status, 'pending', 'never expired while its history is unknown');
    assert.equal(t.deps.watcherStatus.state, 'degraded');
    assert.equal(t.deps.chain.perAddress.get(refused)?.failures, 1);
    assert.equal(t.deps.chain.global.until, 0);
    const warned = t.logs.filter((l) => l.msg === FAULT_MSG);
    assert.equal(warned.length, 1);
    assert.match(String(warned[0]!.detail), /A valid account address is required/);

    // The refused address's invoice is closed another way (e.g. the owner's review decision):
    // the address is no longer watched and the watcher is healthy again.
    await t.deps.db.updateTable('invoices').set({ status: 'expired' }).where('id', '=', stuck.id).execute();
    await insertInvoice(t, { address: good, amount: 1_000_003n });
    t.clock.advance(10 * SECOND);
    await runOnce(t.deps);
    assert.equal(t.deps.watcherStatus.state, 'running');
    assert.equal(t.deps.chain.perAddress.size, 0);
  } finally {
    await h.close();
  }
});

test('backoff doubles with repeated failures and is capped', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    await insertInvoice(t, { address: randomAddress(), amount: 1_000_001n });
    tg.fail('nowblock', { status: 502 }, 20);
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) {
      await runOnce(t.deps);
      waits.push(t.deps.chain.global.until - t.clock.now());
      t.clock.set(t.deps.chain.global.until);
    }
    assert.deepEqual(waits, [5, 10, 20, 40, 80, 160, 300, 300, 300].map((s) => s * SECOND));
  } finally {
    await h.close();
  }
});

test('Retry-After and "suspended for N s" are read as waits', () => {
  assert.equal(retryAfterMs('27', undefined), 27_000);
  assert.equal(retryAfterMs(null, 'The key exceeds the frequency limit(15), and the query server is suspended for 27 s'), 27_000);
  assert.equal(retryAfterMs(null, '... suspended for 30s'), 30_000);
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', undefined), undefined);
  assert.equal(retryAfterMs(null, 'ApiKey not exists'), undefined);
});
