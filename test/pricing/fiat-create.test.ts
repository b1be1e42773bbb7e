import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, shop, type Shop } from '../helpers/shop.js';
import { fetchRates, pricingConfig, startRateSources, type RateSources } from '../helpers/rates.js';

let t: TestApp;
let rates: RateSources;
let s: Shop;

before(async () => {
  rates = await startRateSources({ USD: '1.0002', EUR: '0.9215', CNY: '7.115', JPY: '155.4', GBP: '0.787' });
  t = await startTestApp({ config: { pricing: pricingConfig(rates), rate_limits: { invoices_per_merchant: 0 } } });
  s = await shop(t, ADDRESSES[0]);
  await fetchRates(t);
});
after(async () => {
  await t.close();
  await rates.close();
});

async function countInvoices(): Promise<number> {
  const row = await t.deps.db
    .selectFrom('invoices')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

test('CNY 100.00 at 7.115 from three sources: 14.06 USDT (rounded up to 0.01), the price on the invoice and its event', async () => {
  const res = await createInvoice(s.client, { amount: '100.00', currency: 'CNY', wallet_id: s.walletId });
  assert.equal(res.status, 201, res.text);
  const inv = res.body.invoice;
  // 100 / 7.115 = 14.0548…; rounded up to 0.01
  assert.equal(inv.base_amount, '14.060000');
  assert.deepEqual(inv.price, {
    amount: '100.00',
    currency: 'CNY',
    rate: '7.115',
    markup_percent: '0',
    sources: ['coinbase', 'coingecko'],
    rate_at: new Date(t.clock.now()).toISOString(),
  });
  const event = await t.deps.db.selectFrom('events').select('data').where('invoice_id', '=', inv.id).executeTakeFirstOrThrow();
  assert.deepEqual(JSON.parse(event.data).invoice.price, inv.price);
  const usdt = await createInvoice(s.client, { amount: '5', wallet_id: s.walletId });
  assert.equal(usdt.body.invoice.price, null);
});

test('markup: the merchant default (PATCH /me) and a per-request override, applied before rounding up', async () => {
  const patched = await s.client.patch('/me', { markup_percent: '2.50' });
  assert.equal(patched.status, 200, patched.text);
  const withDefault = await createInvoice(s.client, { amount: '100', currency: 'EUR', wallet_id: s.walletId });
  assert.equal(withDefault.status, 201, withDefault.text);
  // 100 / 0.9215 * 1.025 = 111.2316…  -> 111.24
  assert.equal(withDefault.body.invoice.base_amount, '111.240000');
  assert.equal(withDefault.body.invoice.price.markup_percent, '2.5');
  // Kraken quotes EUR too: the median of three equal rates.
  assert.deepEqual(withDefault.body.invoice.price.sources, ['coinbase', 'coingecko', 'kraken']);
  const override = await createInvoice(s.client, { amount: '100', currency: 'EUR', wallet_id: s.walletId, markup_percent: '0' });
  assert.equal(override.body.invoice.base_amount, '108.520000');
  const tooMuch = await createInvoice(s.client, { amount: '100', currency: 'EUR', wallet_id: s.walletId, markup_percent: '20.01' });
  assert.equal(tooMuch.status, 400);
  assert.equal(tooMuch.body.error.details[0].path, 'markup_percent');
  const onUsdt = await createInvoice(s.client, { amount: '100', wallet_id: s.walletId, markup_percent: '1' });
  assert.equal(onUsdt.status, 400);
  await s.client.patch('/me', { markup_percent: '0' });
});

test("JPY takes no decimals; a currency's minor units bound the amount", async () => {
  const ok = await createInvoice(s.client, { amount: '1500', currency: 'JPY', wallet_id: s.walletId });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.invoice.price.amount, '1500');
  // 1500 / 155.4 = 9.6525… -> 9.66
  assert.equal(ok.body.invoice.base_amount, '9.660000');
  const bad = await createInvoice(s.client, { amount: '1500.5', currency: 'JPY', wallet_id: s.walletId });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.details[0].path, 'amount');
  const cents = await createInvoice(s.client, { amount: '10.001', currency: 'USD', wallet_id: s.walletId });
  assert.equal(cents.status, 400);
});

test('an idempotent replay returns the same price after the rate moved (and needs no rate at all)', async () => {
  const body = { merchant_order_id: 'replay-1', amount: '250', currency: 'CNY', wallet_id: s.walletId };
  const first = await createInvoice(s.client, body);
  assert.equal(first.status, 201, first.text);
  rates.setAll('CNY', '7.3');
  t.clock.advance(61_000);
  await fetchRates(t);
  const moved = await createInvoice(s.client, { amount: '250', currency: 'CNY', wallet_id: s.walletId });
  assert.notEqual(moved.body.invoice.base_amount, first.body.invoice.base_amount);
  const replay = await createInvoice(s.client, body);
  assert.equal(replay.status, 200, replay.text);
  assert.equal(replay.body.idempotent_replay, true);
  assert.deepEqual(replay.body.invoice.price, first.body.invoice.price);
  assert.equal(replay.body.invoice.base_amount, first.body.invoice.base_amount);
  // Every rate stale: a replay still answers with the stored price.
  t.clock.advance(10 * 60_000);
  const late = await createInvoice(s.client, body);
  assert.equal(late.status, 200, late.text);
  assert.deepEqual(late.body.invoice.price, first.body.invoice.price);
  rates.setAll('CNY', '7.115');
  await fetchRates(t);
});

test('stale rates: 503 rate_unavailable with Retry-After, nothing created', async () => {
  t.clock.advance(301_000);
  const before = await countInvoices();
  const res = await createInvoice(s.client, { amount: '100', currency: 'CNY', wallet_id: s.walletId });
  assert.equal(res.status, 503, res.text);
  assert.equal(res.body.error.code, 'rate_unavailable');
  assert.equal(res.body.error.details[0].reason, 'stale');
  assert.equal(res.headers.get('retry-after'), '60');
  assert.equal(await countInvoices(), before);
  await fetchRates(t);
  const after = await createInvoice(s.client, { amount: '100', currency: 'CNY', wallet_id: s.walletId });
  assert.equal(after.status, 201, after.text);
});

test('rates further apart than max_spread_percent: 503, nothing created; the median of the fresh ones otherwise', async () => {
  rates.set('coinbase', 'CNY', '7.3'); // 2.6 % above 7.115
  await fetchRates(t);
  const before = await countInvoices();
  const res = await createInvoice(s.client, { amount: '100', currency: 'CNY', wallet_id: s.walletId });
  assert.equal(res.status, 503, res.text);
  assert.equal(res.body.error.details[0].reason, 'spread');
  assert.equal(await countInvoices(), before);
  // Three sources within 2 %: their median (7.12), not their mean.
  rates.set('coinbase', 'GBP', '0.79');
  rates.set('kraken', 'GBP', '0.78');
  rates.set('coingecko', 'GBP', '0.787');
  rates.set('coinbase', 'CNY', '7.115');
  await fetchRates(t);
  const gbp = await createInvoice(s.client, { amount: '78.7', currency: 'GBP', wallet_id: s.walletId });
  assert.equal(gbp.status, 201, gbp.text);
  assert.equal(gbp.body.invoice.price.rate, '0.787');
  assert.equal(gbp.body.invoice.base_amount, '100.000000');
});

test('a failing source is not counted: with min_sources above the fresh ones, 503; its error is on /health', async () => {
  const strict = await startTestApp({ config: { pricing: pricingConfig(rates, { min_sources: 2 }, ['coingecko', 'coinbase']) } });
  try {
    const owner = await shop(strict, ADDRESSES[1]);
    rates.fail('coinbase', { status: 500, body: '{"errors":[{"id":"internal_server_error"}]}' });
    await fetchRates(strict);
    const res = await createInvoice(owner.client, { amount: '100', currency: 'CNY', wallet_id: owner.walletId });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.error.code, 'rate_unavailable');
    const count = await strict.deps.db
      .selectFrom('invoices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
    const status = strict.deps.rates.status(strict.clock.now());
    assert.equal(status.find((x) => x.name === 'coinbase')?.last_error, 'HTTP 500');
    assert.equal(status.find((x) => x.name === 'coingecko')?.rates.CNY, '7.115');
    rates.fail('coinbase', undefined);
    await fetchRates(strict);
    const ok = await createInvoice(owner.client, { amount: '100', currency: 'CNY', wallet_id: owner.walletId });
    assert.equal(ok.status, 201, ok.text);
  } finally {
    await strict.close();
  }
});

test('a currency that is not configured: 400 validation_error naming the accepted ones (not a retryable 503); a malformed code: 400', async () => {
  for (const currency of ['CHF', 'XYZ']) {
    const res = await createInvoice(s.client, { amount: '100', currency, wallet_id: s.walletId });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'validation_error');
    assert.equal(res.body.error.details[0].path, 'currency');
    assert.match(res.body.error.details[0].message, /^expected one of USDT, /);
    assert.equal(res.headers.get('retry-after'), null);
  }
  const bad = await createInvoice(s.client, { amount: '100', currency: 'eur', wallet_id: s.walletId });
  assert.equal(bad.status, 400);
});

test('no [[pricing.sources]]: a fiat price is refused (503 no_sources), a USDT one is not', async () => {
  const plain = await startTestApp();
  try {
    const owner = await shop(plain, ADDRESSES[3]);
    const res = await createInvoice(owner.client, { amount: '100', currency: 'EUR', wallet_id: owner.walletId });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.error.details[0].reason, 'no_sources');
    assert.equal(res.headers.get('retry-after'), null);
    const usdt = await createInvoice(owner.client, { amount: '100', wallet_id: owner.walletId });
    assert.equal(usdt.status, 201, usdt.text);
  } finally {
    await plain.close();
  }
});
