/**
 * The rate guards, through the real server with loopback rate sources and the injected clock: an
 * outlier is set aside while the others agree, a jump is held until a later read confirms it,
 * sources that agree on an absurd rate price nothing (the first read after a start included), and a
 * huge Retry-After silences a source for pricing.retry_after_max_seconds at most.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, shop, type Shop } from '../helpers/shop.js';
import { fetchRates, pricingConfig, startRateSources, type RateSources } from '../helpers/rates.js';
import { checkRates } from '../../src/cli/doctor-rates.js';
import { buildConfig } from '../../src/config.js';
import { formatDecimal } from '../../src/pricing/decimal.js';

let t: TestApp;
let rates: RateSources;
let s: Shop;

const START = { USD: '1.05', EUR: '0.9215', GBP: '0.787' };

before(async () => {
  rates = await startRateSources(START);
  t = await startTestApp({
    config: { pricing: pricingConfig(rates, { currencies: ['USD', 'EUR', 'GBP'], min_sources: 2 }), rate_limits: { invoices_per_merchant: 0 } },
  });
  s = await shop(t, ADDRESSES[0]);
  await fetchRates(t);
});
after(async () => {
  await t.close();
  await rates.close();
});

/** Sets every source back to the starting rates and lets the book accept them (past the jump window). */
async function reset(): Promise<void> {
  for (const [currency, rate] of Object.entries(START)) rates.setAll(currency, rate);
  for (const kind of ['coingecko', 'kraken', 'coinbase'] as const) rates.fail(kind, undefined);
  t.clock.advance(601_000);
  await fetchRates(t);
}

/** The fetcher's next pass, a minute later. */
async function nextRead(): Promise<void> {
  t.clock.advance(60_000);
  await fetchRates(t);
}

async function usd(amount: string) {
  return createInvoice(s.client, { amount, currency: 'USD', wallet_id: s.walletId });
}

async function pricingHealth() {
  const health = await t.client().get('/health');
  assert.equal(health.status, 200, health.text);
  return health.body.pricing;
}

function rateOf(pricing: { rates: Array<{ currency: string }> }, currency: string) {
  return pricing.rates.find((r) => r.currency === currency) as Record<string, unknown>;
}

test('one outlier (USD 1000 against two sources at 1.05, min_sources 2) is set aside: prices continue at 1.05, and /health, the metrics and doctor name it', async () => {
  await reset();
  rates.set('kraken', 'USD', '1000');
  await nextRead();
  const res = await usd('105.00');
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.invoice.price.rate, '1.05');
  assert.deepEqual(res.body.invoice.price.sources, ['coinbase', 'coingecko']);
  assert.equal(res.body.invoice.base_amount, '100.000000');
  let usdHealth = rateOf(await pricingHealth(), 'USD');
  assert.equal(usdHealth.rate, '1.05');
  assert.equal(usdHealth.refused, null);
  assert.deepEqual(usdHealth.set_aside, [{ source: 'kraken', rate: '1000', reason: 'out_of_bounds' }]);

  // A plausible rate that disagrees (1.2, 14 % above the others) is an outlier.
  rates.set('kraken', 'USD', '1.2');
  await nextRead();
  const again = await usd('10.50');
  assert.equal(again.status, 201, again.text);
  assert.equal(again.body.invoice.price.rate, '1.05');
  usdHealth = rateOf(await pricingHealth(), 'USD');
  assert.deepEqual(usdHealth.set_aside, [{ source: 'kraken', rate: '1.2', reason: 'outlier' }]);
  const metrics = (await t.deps.metrics.render()).body;
  assert.match(metrics, /gatewayd_rate_source_set_aside\{source="kraken",currency="USD"\} 1/);
  assert.match(metrics, /gatewayd_rate_source_set_aside\{source="coinbase",currency="USD"\} 0/);
  assert.match(metrics, /gatewayd_rate_source_rate\{source="kraken",currency="USD"\} 1\.2/);

  const findings = await checkRates(buildConfig({ pricing: pricingConfig(rates, { currencies: ['USD', 'EUR'], min_sources: 2 }) }), 2000);
  const lines = findings.map((f) => `${f.level} ${f.detail}`);
  assert.ok(lines.includes('warn USD: kraken 1.2 is set aside, outside the rates that agree within pricing.max_spread_percent (2 %)'), lines.join('\n'));
  assert.ok(lines.includes('ok median rates now: USD 1.05, EUR 0.9215'), lines.join('\n'));

  // Two sources left that disagree: no group of min_sources agrees, refused as before.
  rates.set('coinbase', 'USD', '1.1');
  await nextRead();
  const split = await usd('10');
  assert.equal(split.status, 503, split.text);
  assert.equal(split.body.error.details[0].reason, 'spread');
});

test('a jump of more than max_jump_percent is held (503 jump_unconfirmed) until a read 120 s later confirms it; a glitch that reverts never prices', async () => {
  await reset();
  const ok = await createInvoice(s.client, { amount: '92.15', currency: 'EUR', wallet_id: s.walletId });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.invoice.base_amount, '100.000000');

  // Every source agrees on a rate 46 % lower: held, not used.
  rates.setAll('EUR', '0.5');
  await nextRead();
  const held = await createInvoice(s.client, { amount: '100', currency: 'EUR', wallet_id: s.walletId });
  assert.equal(held.status, 503, held.text);
  assert.equal(held.body.error.code, 'rate_unavailable');
  assert.equal(held.body.error.details[0].reason, 'jump_unconfirmed');
  assert.equal(held.headers.get('retry-after'), '120');
  const eur = rateOf(await pricingHealth(), 'EUR');
  assert.equal(eur.refused, 'jump_unconfirmed');
  assert.deepEqual(eur.pending_jump, {
    rate: '0.5',
    since: new Date(t.clock.now()).toISOString(),
    confirmable_at: new Date(t.clock.now() + 120_000).toISOString(),
  });
  assert.match((await t.deps.metrics.render()).body, /gatewayd_rate_held\{currency="EUR"\} 1/);
  // A read 60 s later agrees, but it is not yet 120 s after the first.
  await nextRead();
  assert.equal((await createInvoice(s.client, { amount: '100', currency: 'EUR', wallet_id: s.walletId })).status, 503);
  // 120 s after the first: confirmed, used.
  await nextRead();
  const confirmed = await createInvoice(s.client, { amount: '100', currency: 'EUR', wallet_id: s.walletId });
  assert.equal(confirmed.status, 201, confirmed.text);
  assert.equal(confirmed.body.invoice.price.rate, '0.5');
  assert.equal(confirmed.body.invoice.base_amount, '200.000000');
  assert.equal(rateOf(await pricingHealth(), 'EUR').pending_jump, null);

  // A glitch: USD up 14 % on every source for one read, then back: held, then priced at the old rate.
  rates.setAll('USD', '1.2');
  await nextRead();
  assert.equal((await usd('10')).body.error.details[0].reason, 'jump_unconfirmed');
  rates.setAll('USD', '1.05');
  await nextRead();
  const back = await usd('10.50');
  assert.equal(back.status, 201, back.text);
  assert.equal(back.body.invoice.price.rate, '1.05');

  // Steps of 6 % each stay within the limit of the last rate, not of the window's: the second is held.
  rates.setAll('GBP', '0.834');
  await nextRead();
  assert.equal((await createInvoice(s.client, { amount: '10', currency: 'GBP', wallet_id: s.walletId })).status, 201);
  rates.setAll('GBP', '0.884');
  await nextRead();
  const creep = await createInvoice(s.client, { amount: '10', currency: 'GBP', wallet_id: s.walletId });
  assert.equal(creep.status, 503, creep.text);
  assert.equal(creep.body.error.details[0].reason, 'jump_unconfirmed');
});

test('a held jump is confirmed only by a new read: one answer of 1.2 followed by errors or 429s does not confirm itself 120 s later', async () => {
  await reset();
  rates.setAll('USD', '1.2');
  await nextRead();
  assert.equal((await usd('10')).body.error.details[0].reason, 'jump_unconfirmed');
  // Every source stops answering (one 429 with a short Retry-After, errors): their last rates, 1.2, stay fresh (max_age_seconds 300).
  rates.fail('coingecko', { status: 429, body: '{}', headers: { 'retry-after': '60' } });
  rates.fail('kraken', { status: 500, body: 'down' });
  rates.fail('coinbase', { status: 502, body: 'down' });
  await nextRead();
  await nextRead();
  await nextRead();
  const unconfirmed = await usd('10');
  assert.equal(unconfirmed.status, 503, `no read after the first agreed, yet: ${unconfirmed.text}`);
  assert.equal(unconfirmed.body.error.details[0].reason, 'jump_unconfirmed');
  assert.equal(rateOf(await pricingHealth(), 'USD').refused, 'jump_unconfirmed');
  // The sources answer again, still 1.2: that read confirms the jump.
  for (const kind of ['coingecko', 'kraken', 'coinbase'] as const) rates.fail(kind, undefined);
  await nextRead();
  const confirmed = await usd('12');
  assert.equal(confirmed.status, 201, confirmed.text);
  assert.equal(confirmed.body.invoice.price.rate, '1.2');
});

test('a rate that flips between two jumped values (USD 1.2 and 1.24 from 1.05) on every read stays held past the jump window; it is never priced', async () => {
  await reset();
  for (let read = 0; read < 14; read += 1) {
    rates.setAll('USD', read % 2 === 0 ? '1.2' : '1.24');
    await nextRead();
    const res = await usd('10');
    assert.equal(res.status, 503, `read ${read + 1} (${read % 2 === 0 ? '1.2' : '1.24'}): ${res.text}`);
    assert.equal(res.body.error.details[0].reason, 'jump_unconfirmed');
  }
  // It settles on one of them: confirmed 120 s after it first held it.
  rates.setAll('USD', '1.24');
  await nextRead();
  await nextRead();
  const confirmed = await usd('12.40');
  assert.equal(confirmed.status, 201, confirmed.text);
  assert.equal(confirmed.body.invoice.price.rate, '1.24');
});

test('sources that all agree on an absurd rate price nothing: USD at 10000 or 0.000001 (100 USD for 0.01 USDT, 1000 USD for 10^9 USDT) is out_of_bounds, even confirmed', async () => {
  await reset();
  for (const absurd of ['10000', '0.000001']) {
    rates.setAll('USD', absurd);
    for (let read = 0; read < 4; read += 1) {
      await nextRead();
      const res = await usd(absurd === '10000' ? '100' : '1000');
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.error.details[0].reason, 'out_of_bounds');
      assert.match(res.body.error.message, /outside the plausible range 0\.8 to 1\.25 USD per USDT/);
    }
    const usdHealth = rateOf(await pricingHealth(), 'USD');
    assert.equal(usdHealth.refused, 'out_of_bounds');
    assert.equal((usdHealth.set_aside as unknown[]).length, 3);
  }
});

test('the first read after a start has no accepted rate: it is bounded by the plausible range (pricing.rate_bounds replaces it)', async () => {
  const absurd = await startRateSources({ USD: '0.0001', EUR: '0.9215' });
  const apps: TestApp[] = [];
  try {
    const fresh = await startTestApp({ config: { pricing: pricingConfig(absurd, { currencies: ['USD', 'EUR'], min_sources: 2 }) } });
    apps.push(fresh);
    await fetchRates(fresh);
    const owner = await shop(fresh, ADDRESSES[1]);
    const res = await createInvoice(owner.client, { amount: '100', currency: 'USD', wallet_id: owner.walletId });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.error.details[0].reason, 'out_of_bounds');
    const eur = await createInvoice(owner.client, { amount: '92.15', currency: 'EUR', wallet_id: owner.walletId });
    assert.equal(eur.status, 201, eur.text);
    // An operator who means it sets the range: then the rate counts.
    const own = await startTestApp({
      config: { pricing: pricingConfig(absurd, { currencies: ['USD'], min_sources: 2, rate_bounds: { USD: { min: '0.00005', max: '0.0002' } } }) },
    });
    apps.push(own);
    await fetchRates(own);
    assert.equal(formatDecimal(own.deps.rates.quote('USD', own.clock.now()).rate), '0.0001');
  } finally {
    for (const app of apps) await app.close();
    await absurd.close();
  }
});

test('a 429 with a huge Retry-After pauses the source for retry_after_max_seconds (300) at most; then one request probes it', async () => {
  await reset();
  rates.fail('kraken', { status: 429, body: '{"error":["EGeneral:Too many requests"]}', headers: { 'retry-after': '86400' } });
  await nextRead();
  const asked = rates.count('kraken');
  t.clock.advance(240_000);
  await fetchRates(t);
  assert.equal(rates.count('kraken'), asked, 'still paused');
  let kraken = (await pricingHealth()).sources.find((x: { name: string }) => x.name === 'kraken');
  assert.equal(kraken.last_error, 'HTTP 429 (rate limited by the source)');
  assert.equal(kraken.paused_until, new Date(t.clock.now() + 60_000).toISOString());
  // The probe, 300 s after the 429: still limited (an HTTP-date an hour away), paused again for 300 s.
  rates.fail('kraken', { status: 429, body: '{}', headers: { 'retry-after': new Date(t.clock.now() + 3_600_000).toUTCString() } });
  await nextRead();
  assert.equal(rates.count('kraken'), asked + 1, 'probed after 300 s');
  kraken = (await pricingHealth()).sources.find((x: { name: string }) => x.name === 'kraken');
  assert.equal(kraken.paused_until, new Date(t.clock.now() + 300_000).toISOString());
  rates.fail('kraken', undefined);
  t.clock.advance(300_000);
  await fetchRates(t);
  assert.equal(rates.count('kraken'), asked + 2);
  kraken = (await pricingHealth()).sources.find((x: { name: string }) => x.name === 'kraken');
  assert.equal(kraken.paused_until, null);
  assert.equal(kraken.age_seconds, 0);
});

test('the new [pricing] keys are checked at start: a range needs min below max and a known currency, a jump limit above 0', () => {
  const refused = (pricing: Record<string, unknown>, message: RegExp) => assert.throws(() => buildConfig({ pricing }), message);
  refused({ rate_bounds: { USD: { min: '2', max: '1' } } }, /pricing\.rate_bounds\.USD: expected min below max/);
  refused({ rate_bounds: { XXX: { min: '1', max: '2' } } }, /pricing\.rate_bounds/);
  refused({ rate_bounds: { USD: { min: '0', max: '2' } } }, /expected a rate above 0/);
  refused({ max_jump_percent: 0 }, /pricing\.max_jump_percent: expected a percentage above 0/);
  refused({ retry_after_max_seconds: 86_400 }, /pricing\.retry_after_max_seconds/);
  const ok = buildConfig({ pricing: { rate_bounds: { ARS: { min: 500, max: '50000' } }, max_jump_percent: '7.5' } }).pricing;
  assert.deepEqual(ok.rate_bounds, { ARS: { min: '500', max: '50000' } });
  assert.equal(ok.max_jump_percent, '7.5');
  assert.equal(ok.retry_after_max_seconds, 300);
});
