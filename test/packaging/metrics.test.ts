import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { freePort, startGateway } from '../helpers/process.js';
import { startMetricsServer } from '../../src/ops/prometheus.js';
import { disabledMetrics } from '../../src/ops/metrics.js';
import { createDeps } from '../../src/deps.js';
import { sqliteOnly } from '../helpers/database.js';

/** The value of one sample line, e.g. sample(text, 'gatewayd_invoices{status="pending"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A wallet and invoices in the given states, written directly (the invoice feature is elsewhere). */
async function seedInvoices(t: TestApp, statuses: string[]): Promise<void> {
  const { merchant } = await signedInMerchant(t);
  const now = t.clock.now();
  t.deps.sqlite
    .prepare(`INSERT INTO wallets (id, merchant_id, label, address, network, created_at) VALUES ('wal_m1', ?, 'main', 'TXYZ', 'tron', ?)`)
    .run(merchant.id, now);
  const insert = t.deps.sqlite.prepare(`INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address,
      merchant_order_id, idempotency_key, request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token,
      confirmed_at, created_at, expires_at, reserved_until)
    VALUES (?, ?, 'wal_m1', 'tron', 'USDT', 'TR7', 'TXYZ', ?, ?, 'fp', 1000000, 1, 1000001, ?, ?, ?, ?, ?, ?)`);
  statuses.forEach((status, i) => {
    const confirmedAt = status === 'confirmed' ? now - 1000 * (10 - i) : null;
    insert.run(`inv_${i}`, merchant.id, `order-${i}`, `idem-${i}`, status, `tok_${i}`, confirmedAt, now - 5000, now + 3_600_000, now + 3_600_000);
  });
}

test('metrics count requests by route pattern, never by raw path, and read invoice and delivery figures at scrape time', { skip: sqliteOnly }, async (t) => {
  const app = await startTestApp();
  const metrics = await startMetricsServer(app.metrics, '127.0.0.1:0', app.deps.log);
  t.after(async () => {
    await metrics.close();
    await app.close();
  });
  const client = app.client();
  for (let i = 0; i < 3; i++) assert.equal((await client.get('/api/v1/health')).status, 200);
  // A path that carries a secret-looking segment must not appear in any label.
  assert.equal((await client.get('/api/v1/nothing-here/capability-token-abc123')).status, 404);
  await seedInvoices(app, ['pending', 'pending', 'confirmed', 'expired']);
  app.deps.watcherStatus.state = 'running';
  app.deps.watcherStatus.lagSeconds = 12;

  const res = await fetch(metrics.url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await res.text();
  assert.equal(sample(text, 'gatewayd_http_requests_total{method="GET",route="/api/v1/health",status="200"}'), 3);
  assert.match(text, /gatewayd_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/health"\} 3/);
  assert.doesNotMatch(text, /capability-token-abc123/);
  assert.doesNotMatch(text, /nothing-here/);
  assert.equal(sample(text, 'gatewayd_invoices{status="pending"}'), 2);
  assert.equal(sample(text, 'gatewayd_invoices{status="confirmed"}'), 1);
  assert.equal(sample(text, 'gatewayd_invoices{status="expired"}'), 1);
  assert.equal(sample(text, 'gatewayd_invoices{status="review"}'), 0);
  assert.equal(sample(text, 'gatewayd_last_confirmation_timestamp_seconds'), (app.clock.now() - 8000) / 1000);
  assert.equal(sample(text, 'gatewayd_webhook_delivery_backlog'), 0);
  assert.equal(sample(text, 'gatewayd_watcher_state{state="running"}'), 1);
  assert.equal(sample(text, 'gatewayd_watcher_state{state="stopped"}'), 0);
  assert.equal(sample(text, 'gatewayd_watcher_lag_seconds'), 12);
  assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0);
  assert.match(text, /gatewayd_info\{version="\d+\.\d+\.\d+"\} 1/);

  // The scrape reads the database every time: a change shows up on the next scrape.
  app.deps.sqlite.prepare(`UPDATE invoices SET status = 'expired' WHERE status = 'pending'`).run();
  app.deps.watcherStatus.lagSeconds = null;
  const again = await (await fetch(metrics.url)).text();
  assert.equal(sample(again, 'gatewayd_invoices{status="pending"}'), 0);
  assert.equal(sample(again, 'gatewayd_invoices{status="expired"}'), 3);
  assert.ok(Number.isNaN(sample(again, 'gatewayd_watcher_lag_seconds')), 'NaN lag when nothing is watched');
  // The /metrics scrape itself is not an app request and the metrics listener serves nothing else.
  assert.equal((await fetch(metrics.url.replace('/metrics', '/api/v1/health'))).status, 404);
  assert.equal((await fetch(metrics.url, { method: 'POST' })).status, 404);
});

test('a feature declares its own metrics through the same registry (get-or-create)', { skip: sqliteOnly }, async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const a = app.deps.metrics.counter('gatewayd_test_things_total', 'Things', ['kind']);
  const b = app.deps.metrics.counter('gatewayd_test_things_total', 'Things', ['kind']);
  assert.equal(a, b);
  a.inc({ kind: 'x' }, 2);
  let scrapes = 0;
  app.deps.metrics.onScrape(() => {
    scrapes += 1;
    throw new Error('a broken hook must not break the scrape');
  });
  const { body } = await app.deps.metrics.render();
  assert.equal(sample(body, 'gatewayd_test_things_total{kind="x"}'), 2);
  assert.equal(scrapes, 1);
  assert.match(app.logText(), /a scrape hook failed/);
});

test('serve: /metrics is off by default and, when enabled, served on its own loopback listener only', async (t) => {
  const off = await startGateway();
  t.after(() => off.kill());
  assert.equal((await fetch(`${off.baseUrl}/metrics`)).status, 404);
  await off.stop();

  const port = await freePort();
  const on = await startGateway({ config: { metrics: { enabled: true, listen: `127.0.0.1:${port}` } } });
  t.after(() => on.kill());
  await fetch(`${on.baseUrl}/api/v1/health`);
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.ok((sample(text, 'gatewayd_http_requests_total{method="GET",route="/api/v1/health",status="200"}') ?? 0) >= 1);
  assert.equal((await fetch(`${on.baseUrl}/metrics`)).status, 404, 'never on the public listener');
  assert.equal(await on.stop(), 0);
});

test('metrics off: features declare and update their metrics on stand-ins that keep nothing; none can be read', async () => {
  const metrics = disabledMetrics();
  metrics.counter('gatewayd_test_things_total', 'Things', ['kind']).inc({ kind: 'x' }, 2);
  metrics.gauge('gatewayd_test_level', 'Level').set(3);
  metrics.histogram('gatewayd_test_seconds', 'Time', [], [1, 2]).observe(0.5);
  metrics.observeRequest('GET', '/api/v1/health', 200, 0.001);
  let scrapes = 0;
  metrics.onScrape(() => {
    scrapes += 1;
  });
  await assert.rejects(metrics.render(), /metrics are disabled/);
  assert.equal(scrapes, 0, 'no scrape hook runs (they would query the database for nobody)');
});

test('createDeps refuses metrics.enabled without the Prometheus registry (it would serve stand-ins)', async (t) => {
  const app = await startTestApp({ config: { metrics: { enabled: true } } });
  t.after(() => app.close());
  assert.throws(() => createDeps({ config: app.config, database: app.database, log: app.deps.log }), /metrics.enabled needs the Prometheus metrics/);
  assert.doesNotThrow(() => createDeps({ config: app.config, database: app.database, log: app.deps.log, metrics: app.metrics }));
});
