/**
 * TRON provider faults: each one is retried with backoff, logged once per condition, reported by
 * /health, and never confirms or expires anything; once it clears, the scanner catches up. With
 * several providers a fault fails over to the next one at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createChainRuntime, runOnce } from '../../src/chain/chain.worker.js';
import { retryAfterMs } from '../../src/chain/tron.client.js';
import { startSimulatedTron } from '../../src/devnet/tron-node.js';
import { HOUR, MINUTE, SECOND } from '../../src/lib/clock.js';
import { eventsOf, getInvoice, insertInvoice, pass, startChainHarness, transfersOf } from '../helpers/chain-fixtures.js';
import { startTestApp } from '../helpers/app.js';
import { type Endpoint, type Fault } from '../helpers/trongrid.js';
import { randomAddress } from '../helpers/tron-samples.js';

const FAULT_MSG = 'chain: every TRON provider failed; nothing confirmed or expired past the last good block; retrying with backoff';

interface Case {
  name: string;
  endpoint: Endpoint;
  fault: Fault;
  kind: string;
  /** The wait the provider asked for, which must be honoured. */
  waitMs?: number;
}

const cases: Case[] = [
  {
    name: '429 with the wait in the body',
    endpoint: 'blockinfo',
    fault: { status: 429, body: { Error: 'The key exceeds the frequency limit(15), and the query server is suspended for 30 s' } },
    kind: 'rate_limited',
    waitMs: 30 * SECOND,
  },
  {
    name: '429 with Retry-After',
    endpoint: 'blockinfo',
    fault: { status: 429, body: '', headers: { 'retry-after': '45' } },
    kind: 'rate_limited',
    waitMs: 45 * SECOND,
  },
  {
    name: '403 rate limit as the docs print it',
    endpoint: 'getblock',
    fault: {
      status: 403,
      body: { Success: false, Error: 'The key exceeds the frequency limit(15), and the query server is suspended for 30s', StatusCode: 403 },
    },
    kind: 'rate_limited',
    waitMs: 30 * SECOND,
  },
  { name: '401 bad API key', endpoint: 'blockinfo', fault: { status: 401, body: { Error: 'ApiKey not exists' } }, kind: 'auth' },
  { name: '403 forbidden', endpoint: 'getblock', fault: { status: 403, body: '' }, kind: 'auth' },
  { name: '500 on a block', endpoint: 'blockinfo', fault: { status: 500, body: 'Internal Server Error' }, kind: 'server' },
  { name: '503 HTML page on the head', endpoint: 'getblock', fault: { status: 503, body: '<html>busy</html>' }, kind: 'server' },
  { name: '200 HTML page (a proxy error)', endpoint: 'blockinfo', fault: { raw: '<html><body><h1>502 Bad Gateway</h1></body></html>' }, kind: 'bad_response' },
  {
    name: '200 with {"Error": ...}',
    endpoint: 'blockinfo',
    fault: { status: 200, body: { Error: 'class org.tron.core.services.http.JsonFormat$ParseException : 1:1: Expected "{".' } },
    kind: 'bad_response',
  },
  { name: '200 with truncated JSON', endpoint: 'blockinfo', fault: { raw: '[{"id":"0130dfde9281a483781090' }, kind: 'bad_response' },
  { name: '200 with a wrong shape', endpoint: 'blockinfo', fault: { status: 200, body: { success: false, data: 'nope' } }, kind: 'bad_response' },
  { name: '400 with an empty body', endpoint: 'blockinfo', fault: { status: 400, body: '' }, kind: 'bad_response' },
  { name: 'malformed head block', endpoint: 'getblock', fault: { raw: 'null' }, kind: 'bad_response' },
  { name: 'a hang (timeout)', endpoint: 'blockinfo', fault: { hang: true }, kind: 'timeout' },
];

for (const c of cases) {
  test(`fault: ${c.name}`, async () => {
    const h = await startChainHarness({ config: { tron: { api_key: 'k' } } });
    try {
      const { t, tg } = h;
      // A short timeout only where the case is the timeout (long enough that a loaded machine's honest answers
      // still arrive within it); elsewhere a loaded machine must not turn a fault into a timeout.
      t.deps.chain = createChainRuntime(t.config, { timeoutMs: 'hang' in c.fault ? 1500 : 5000, maxRequestsPerSecond: 0 });
      const address = randomAddress();
      const start = t.clock.now();
      const paid = await insertInvoice(t, { address, amount: 12_000_001n, expiresAt: start + 5 * MINUTE });
      const unpaid = await insertInvoice(t, { address, amount: 12_000_002n, expiresAt: start + 5 * MINUTE });
      tg.pay({ to: address, amount: 12_000_001n, blockTimestamp: start + MINUTE });
      tg.fail(c.endpoint, c.fault, 3);

      t.clock.advance(20 * MINUTE);
      for (let i = 0; i < 3; i++) {
        assert.equal(await runOnce(t.deps), false);
        assert.equal((await getInvoice(t, paid.id)).status, 'pending', 'a fault never confirms');
        assert.equal((await getInvoice(t, unpaid.id)).status, 'pending', 'a fault never expires');
        assert.equal(t.deps.watcherStatus.state, 'degraded');
        const health = await t.client().get('/api/v1/health');
        assert.equal(health.body.watcher.state, 'degraded');
        assert.equal(health.body.watcher.providers[0].state, 'backing_off');
        assert.ok(!JSON.stringify(health.body).includes('"k"'), 'the key is not shown');

        // Backing off: nothing is asked before the wait is over.
        const n = tg.count();
        await runOnce(t.deps);
        assert.equal(tg.count(), n, 'no request during the backoff');
        if (c.waitMs !== undefined) {
          t.clock.advance(c.waitMs - SECOND);
          await runOnce(t.deps);
          assert.equal(tg.count(), n, 'the provider-given wait is honoured');
        }
        t.clock.advance(5 * MINUTE);
      }
      const warned = t.logs.filter((l) => l.msg === FAULT_MSG);
      assert.equal(warned.length, 1, 'logged once per condition');
      assert.equal(warned[0]!.kind, c.kind);
      assert.ok(!t.logText().includes('"k"') && !t.logText().includes('TRON-PRO-API-KEY'), 'the API key is never logged');

      while (await runOnce(t.deps));
      assert.equal((await getInvoice(t, paid.id)).status, 'confirmed');
      assert.equal((await getInvoice(t, unpaid.id)).status, 'expired');
      assert.deepEqual(
        (await eventsOf(t, paid.id)).map((e) => e.type),
        ['invoice.confirmed'],
      );
      assert.equal(t.deps.watcherStatus.state, 'running');
      assert.equal(t.logs.filter((l) => l.msg === 'chain: TRON API reachable again').length, 1);
    } finally {
      await h.close();
    }
  });
}

test('backoff doubles with repeated failures and is capped at 15 s (a provider that answers again is used within a poll + 15 s)', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    await insertInvoice(t, { address: randomAddress(), amount: 1_000_001n });
    tg.fail('getblock', { status: 502 }, 20);
    const waits: number[] = [];
    for (let i = 0; i < 10; i++) {
      await runOnce(t.deps);
      const p = t.deps.chain.pool.providers[0]!;
      waits.push(p.until - t.clock.now());
      t.clock.set(p.until);
    }
    assert.deepEqual(
      waits,
      [2, 4, 8, 15, 15, 15, 15, 15, 15, 15].map((s) => s * SECOND),
    );
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

test('providers: with two and cross_check "count", each block is read in full by one and counted by the other, in turns; while one fails nothing moves on the other one\'s word alone; health per provider; once it answers again the payments confirm; no auxiliary endpoint is ever asked', async () => {
  let now = Date.UTC(2026, 0, 15, 12, 0, 0);
  // Two providers serving the same chain (an own node first, TronGrid second).
  const own = await startSimulatedTron({ now: () => now });
  const grid = await startSimulatedTron({ now: () => now });
  const t = await startTestApp({
    now,
    config: {
      tron: {
        cross_check: 'count',
        providers: [
          { url: own.url, requests_per_second: 0 },
          { url: `${grid.url}/secret-token`, api_key: 'grid-key', requests_per_second: 0 },
        ],
      },
    },
  });
  try {
    t.deps.chain = createChainRuntime(t.config, { timeoutMs: 500 });
    const pass = async (ms = 5 * SECOND) => {
      t.clock.advance(ms);
      now = t.clock.now();
      while (await runOnce(t.deps));
    };
    const address = randomAddress();
    const start = t.clock.now();
    const a = await insertInvoice(t, { address, amount: 3_000_001n, expiresAt: start + 30 * MINUTE });
    const b = await insertInvoice(t, { address, amount: 3_000_002n, expiresAt: start + 30 * MINUTE });
    const pay = (amount: bigint, at: number) => {
      const p = own.transfer({ to: address, amount, at });
      grid.transfer({ to: address, amount, at, txId: p.txId });
      return p;
    };
    await pass();
    assert.ok(own.count('blockinfo') > 0 && grid.count('blockinfo') > 0, 'the heavy read takes turns');
    assert.ok(Math.abs(own.count('blockinfo') - grid.count('blockinfo')) <= 1, 'each carries half of the heavy reads');
    assert.equal(own.count('txcount'), grid.count('blockinfo'), 'each block the other read in full is counted by this one');
    assert.equal(grid.count('txcount'), own.count('blockinfo'));

    // The own node answers 500, hangs, then goes down: TronGrid alone cannot confirm.
    pay(3_000_001n, start + 30 * SECOND);
    own.fail('*', { status: 500, body: 'java.lang.OutOfMemoryError' }, 1);
    own.fail('*', { hang: true }, 1);
    await pass(MINUTE);
    own.setDown(true);
    await pass(20 * SECOND);
    assert.equal((await getInvoice(t, a.id)).status, 'pending', "never on one provider's word");
    const health = (await t.client().get('/health')).body.watcher;
    assert.equal(health.state, 'degraded');
    assert.ok(health.scan.reason);
    assert.equal(health.providers.length, 2);
    assert.equal(health.providers[0].name, own.url);
    assert.equal(health.providers[0].state, 'backing_off');
    assert.ok(health.providers[0].failures >= 2);
    assert.ok(health.providers[0].last_error);
    assert.equal(health.providers[1].name, grid.url, 'scheme and host only: no path, no query');
    assert.equal(health.providers[1].state, 'ok');
    const metrics = await t.deps.metrics.render();
    assert.ok(!metrics.body.includes('secret-token') && !JSON.stringify(health).includes('secret-token'), 'the key in the URL is never shown');
    assert.match(metrics.body, new RegExp(`gatewayd_chain_provider_up\\{provider="${own.url}"\\} 0`));
    assert.match(metrics.body, new RegExp(`gatewayd_chain_provider_up\\{provider="${grid.url}"\\} 1`));

    // The own node comes back: within a poll + 15 s (the backoff is capped) both confirm.
    own.clearFaults(); // (a hang not met during the outage is not part of the recovery)
    own.setDown(false);
    await pass(15 * SECOND);
    await pass(5 * SECOND);
    assert.equal((await getInvoice(t, a.id)).status, 'confirmed');
    own.resetCounts();
    grid.resetCounts();
    pay(3_000_002n, t.clock.now() - 55 * SECOND);
    await pass();
    assert.equal((await getInvoice(t, b.id)).status, 'confirmed');
    assert.ok(grid.requests.every((r) => r.headers['tron-pro-api-key'] === 'grid-key'));
    assert.ok(
      own.requests.every((r) => r.headers['tron-pro-api-key'] === undefined),
      'each provider gets its own key',
    );
    assert.equal((await t.client().get('/health')).body.watcher.providers[0].state, 'ok');
    // The events feed (or any account index) is never asked: only the head, the blocks' infos and counts, the
    // paying transactions by id, whole blocks to prove one empty, and the latest blocks (seen payments).
    for (const r of [...own.requests, ...grid.requests])
      assert.match(
        r.path,
        /^(\/secret-token)?(\/walletsolidity\/(getblock|gettransactioninfobyblocknum|gettransactioncountbyblocknum|gettransactioninfobyid|getblockbynum)|\/wallet\/getblockbylimitnext)$/,
      );
    assert.equal((await transfersOf(t)).length, 2);
  } finally {
    await t.close();
    await own.close();
    await grid.close();
  }
});

test('tron.api_url and tron.api_key still configure the single provider', async () => {
  const h = await startChainHarness({ config: { tron: { api_key: 'legacy-key' } } });
  try {
    await insertInvoice(h.t, { address: randomAddress(), amount: 1_000_001n });
    await runOnce(h.t.deps);
    assert.equal(h.t.deps.chain.pool.providers.length, 1);
    assert.ok(h.tg.count() > 0);
    assert.ok(h.tg.requests.every((r) => r.headers['tron-pro-api-key'] === 'legacy-key'));
  } finally {
    await h.close();
  }
});

test('recovery: after eight failures in a row (any backoff before), a payment confirms within a poll + 15 s of the provider answering again', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: 4_400_001n, expiresAt: start + HOUR });
    await pass(h);
    tg.fail('*', { status: 503, body: 'busy' }, 1000);
    for (let i = 0; i < 8; i++) await pass(h, 20 * SECOND);
    assert.ok(t.deps.chain.pool.providers[0]!.health.consecutive_failures >= 8);
    const p = tg.pay({ to: address, amount: 4_400_001n, blockTimestamp: t.clock.now() - 2 * MINUTE });
    assert.ok(tg.blockTime(p.blockNumber) + 57 * SECOND < t.clock.now(), 'the paying block is solidified already');
    tg.clearFaults();
    const back = t.clock.now();
    while ((await getInvoice(t, inv.id)).status !== 'confirmed' && t.clock.now() - back < 2 * MINUTE) await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
    assert.ok(t.clock.now() - back <= 5 * SECOND + 15 * SECOND, `confirmed ${(t.clock.now() - back) / 1000} s after the provider answered again`);
  } finally {
    await h.close();
  }
});
