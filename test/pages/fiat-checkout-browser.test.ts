import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { ADDRESSES, addWallet, createInvoice } from '../helpers/shop.js';
import { fetchRates, pricingConfig, startRateSources } from '../helpers/rates.js';
import { DEFAULT_CURRENCIES, minorUnits } from '../../src/pricing/currencies.js';
import { DEV_RATES } from '../../src/devnet/rate-source.js';
import { convertToMicro, formatFixed, parseDecimal } from '../../src/pricing/decimal.js';
import { formatAmount, micros } from '../../src/lib/amounts.js';

/** The same layout in every currency and language: the sentence, the figures in it, nothing spilling out. */
test('every configured currency end to end: created through the API, shown on the checkout in English and Arabic (rtl)', async (t) => {
  const rates = await startRateSources();
  t.after(() => rates.close());
  const app = await startBrowserApp({ config: { pricing: pricingConfig(rates), rate_limits: { invoices_per_merchant: 0 } } });
  t.after(() => app.close());
  await fetchRates(app);
  const { client } = await signedInMerchant(app, { name: 'Corner Shop' });
  const walletId = await addWallet(client, ADDRESSES[0]);

  const invoices: Array<{ currency: string; token: string; usdt: string; rate: string; amount: string }> = [];
  for (const currency of DEFAULT_CURRENCIES) {
    const amount = minorUnits(currency) === 0 ? '1500' : '100';
    const res = await createInvoice(client, { amount, currency, wallet_id: walletId });
    assert.equal(res.status, 201, `${currency}: ${res.text}`);
    const inv = res.body.invoice;
    const expected = convertToMicro(parseDecimal(amount)!, parseDecimal(DEV_RATES[currency]!)!, parseDecimal('0')!, 10_000n);
    assert.equal(inv.base_amount, formatAmount(micros(expected)), currency);
    assert.equal(inv.price.rate_at, '2026-01-15T12:00:00.000Z');
    invoices.push({
      currency,
      token: inv.checkout_token,
      usdt: inv.base_amount.replace(/0000$/, ''),
      rate: formatFixed(parseDecimal(DEV_RATES[currency]!)!, 4),
      amount,
    });
  }

  for (const locale of ['en-US', 'ar']) {
    const browser = await openBrowser({ locale });
    t.after(() => browser.close());
    const { page } = browser;
    for (const inv of invoices) {
      await page.goto(`${app.baseUrl}/pay/${inv.token}`);
      const line = page.locator('#fiat-price');
      const text = await line.innerText();
      assert.ok(text.includes(`${inv.usdt} USDT`), `${locale} ${inv.currency}: ${text}`);
      assert.ok(text.includes(`${inv.rate} ${inv.currency}/USDT`), `${locale} ${inv.currency}: ${text}`);
      assert.ok(text.includes('12:00 UTC'), `${locale} ${inv.currency}: ${text}`);
      const digits = inv.amount === '1500' ? /1[,.\u00a0\u202f\u066c]?500(?![.,٫]\d)/ : /100[.,٫]00/;
      assert.match(text, digits, `${locale} ${inv.currency}: the amount in its own decimals: ${text}`);
      assert.ok(!/undefined|NaN|\{|\}/.test(text), `${locale} ${inv.currency}: ${text}`);
      const box = await line.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      assert.ok(box.scroll <= box.client, `${locale} ${inv.currency}: the line overflows (${box.scroll} > ${box.client})`);
    }
    // The issue's own example, word for word, in English.
    if (locale === 'en-US') {
      await page.goto(`${app.baseUrl}/pay/${invoices.find((i) => i.currency === 'CNY')!.token}`);
      assert.equal(await page.locator('#fiat-price').innerText(), '¥100.00 = 14.06 USDT at 7.1150 CNY/USDT, rate of 12:00 UTC');
    } else {
      assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    }
    assert.deepEqual(browser.errors, [], `${locale}: page errors`);
  }
});

test('the console creates an invoice priced in a fiat currency and shows the live rates and sources in the settings', async (t) => {
  const rates = await startRateSources();
  t.after(() => rates.close());
  const app = await startBrowserApp({ config: { pricing: pricingConfig(rates) } });
  t.after(() => app.close());
  await fetchRates(app);
  const owner = await signedInMerchant(app, { name: 'Corner Shop' });
  await addWallet(owner.client, ADDRESSES[1]);
  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page } = browser;
  await browser.context.addCookies([...owner.client.cookies].map(([name, value]) => ({ name, value, url: app.baseUrl })));

  await page.goto(`${app.baseUrl}/console/account`);
  await page.getByLabel('Markup on prices in other currencies (%)').fill('2');
  // The form reloads the page once saved.
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Save' }).first().click()]);
  assert.equal((await owner.client.get('/me')).body.merchant.markup_percent, '2');
  const ratesCard = page.locator('#rates');
  assert.match(await ratesCard.innerText(), /CNY\s+7\.1150 CNY\/USDT\s+coinbase, coingecko/);
  assert.match(await ratesCard.innerText(), /kraken\s+0 s ago/);

  await page.goto(`${app.baseUrl}/console/invoices/new`);
  await page.getByLabel('Order').fill('F-1');
  await page.getByLabel('Currency').selectOption('CNY');
  await page.getByLabel('Price', { exact: true }).fill('100');
  await page.getByRole('button', { name: 'Create invoice' }).click();
  await page.waitForURL(/\/console\/invoices\/inv_/);
  const detail = await page.locator('.fiat-price').innerText();
  assert.equal(detail, '¥100.00 at 7.1150 CNY/USDT, markup 2\u00a0%, rate of 2026-01-15 12:00 UTC from coinbase, coingecko');
  // 100 / 7.115 * 1.02 = 14.3359… -> 14.34
  const facts = await page.locator('dl.facts').innerText();
  assert.match(facts, /14\.340000/);
  assert.deepEqual(browser.errors, []);
});
