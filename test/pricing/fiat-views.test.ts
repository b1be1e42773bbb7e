import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, shop, type Shop } from '../helpers/shop.js';
import { fetchRates, pricingConfig, startRateSources, type RateSources } from '../helpers/rates.js';
import { checkRates } from '../../src/cli/doctor-rates.js';
import { buildConfig } from '../../src/config.js';

let t: TestApp;
let rates: RateSources;
let s: Shop;

before(async () => {
  rates = await startRateSources();
  t = await startTestApp({ config: { pricing: pricingConfig(rates, { currencies: ['CNY', 'EUR', 'JPY'] }) } });
  s = await shop(t, ADDRESSES[2]);
  await fetchRates(t);
});
after(async () => {
  await t.close();
  await rates.close();
});

test("/health and the metrics show each source's last rates, their age and its last error", async () => {
  rates.fail('kraken', { status: 429, body: '{"error":["EGeneral:Too many requests"]}', headers: { 'retry-after': '120' } });
  t.clock.advance(60_000);
  await fetchRates(t);
  const health = await t.client().get('/health');
  assert.equal(health.status, 200);
  const pricing = health.body.pricing;
  assert.deepEqual(pricing.currencies, ['CNY', 'EUR', 'JPY']);
  const byName = Object.fromEntries(pricing.sources.map((x: { name: string }) => [x.name, x]));
  assert.deepEqual(byName.coingecko.rates, { CNY: '7.115', EUR: '0.9215', JPY: '155.4' });
  assert.equal(byName.coingecko.age_seconds, 0);
  assert.equal(byName.coingecko.last_error, null);
  // Kraken quotes EUR and JPY only (no CNY pair); its rates from the first pass are 60 s old now.
  assert.deepEqual(byName.kraken.rates, { EUR: '0.9215', JPY: '155.4' });
  assert.equal(byName.kraken.age_seconds, 60);
  assert.equal(byName.kraken.last_error, 'HTTP 429 (rate limited by the source)');
  assert.ok(!JSON.stringify(pricing).includes(rates.url), 'no source URL on the public health');
  // Retry-After is honoured: no request before it passes.
  const asked = rates.count('kraken');
  t.clock.advance(60_000);
  await fetchRates(t);
  assert.equal(rates.count('kraken'), asked);
  rates.fail('kraken', undefined);
  t.clock.advance(61_000);
  await fetchRates(t);
  assert.equal(rates.count('kraken'), asked + 1);

  const metrics = await t.deps.metrics.render();
  assert.match(metrics.body, /gatewayd_rate_source_rate\{source="coinbase",currency="CNY"\} 7\.115/);
  assert.match(metrics.body, /gatewayd_rate_source_age_seconds\{source="kraken"\} 0/);
  assert.match(metrics.body, /gatewayd_rate_source_failing\{source="kraken"\} 0/);
});

test('the ledger appends the price columns after received_amount', async () => {
  await fetchRates(t);
  const inv = (await createInvoice(s.client, { amount: '100.00', currency: 'CNY', wallet_id: s.walletId, merchant_order_id: 'LED-1' })).body.invoice;
  const csv = await s.client.get('/ledger.csv');
  const [header, ...rows] = csv.text.trim().split('\r\n');
  assert.deepEqual(header!.split(',').slice(16), ['received_amount', 'price_amount', 'price_currency', 'price_rate', 'price_markup_percent', 'price_rate_at']);
  const row = rows.find((r) => r.startsWith(inv.id))!.split(',');
  assert.deepEqual(row.slice(16), ['', '100.00', 'CNY', '7.115', '0', inv.price.rate_at]);
});

test('doctor asks every source once and says which currencies would be priced or refused', async () => {
  const config = buildConfig({ pricing: pricingConfig(rates, { currencies: ['CNY', 'CHF'], min_sources: 2 }, ['coingecko', 'coinbase']) });
  rates.set('coinbase', 'CHF', undefined);
  rates.set('coingecko', 'CHF', undefined);
  const findings = await checkRates(config, 2000);
  const lines = findings.map((f) => `${f.level} ${f.detail}`);
  assert.ok(
    lines.some((l) => /^ok coingecko \(127\.0\.0\.1:\d+\): CNY 7\.115 \(age 0 s\); no rate for CHF$/.test(l)),
    lines.join('\n'),
  );
  assert.ok(lines.includes('fail these currencies would be refused now: CHF (stale)'), lines.join('\n'));
  assert.ok(lines.includes('ok median rates now: CNY 7.115'), lines.join('\n'));
  rates.fail('coinbase', { status: 503, body: 'down' });
  const failing = (await checkRates(config, 2000)).map((f) => `${f.level} ${f.detail}`);
  assert.ok(
    failing.some((l) => /^warn coinbase \(127\.0\.0\.1:\d+\): HTTP 503$/.test(l)),
    failing.join('\n'),
  );
  assert.ok(failing.includes('fail these currencies would be refused now: CNY (stale), CHF (stale)'), failing.join('\n'));
  rates.fail('coinbase', undefined);
  const off = await checkRates(buildConfig({}), 2000);
  assert.equal(off.length, 1);
  assert.match(off[0]!.detail, /no \[\[pricing\.sources\]\]/);
});
