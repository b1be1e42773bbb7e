/**
 * The console's Account page in a merchant's words, in Chromium, in English and in Persian: with
 * every part of it showing (exchange-rate sources, two of them failing; the Telegram link code; a
 * refused password change; two-factor setup, then its recovery codes; the chat linked), what a merchant reads there
 * holds no developer's term: no API, JSON, webhook, endpoint or token, no HTTP status or system
 * error code, no event type or field name. A rate source's failure is said plainly with its time
 * (its reason is the operator's, in /api/v1/health and `gatewayd doctor`). In Persian no Latin word
 * is left but the names a merchant knows as they are (USDT, UTC, the sources, Telegram...). The
 * page stays within a phone's width in both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { translate, type Locale } from '../../src/lib/i18n.js';
import { formatDate } from '../../src/pages/render.js';
import { readUpdates } from '../../src/telegram/telegram.worker.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { fetchRates, pricingConfig, startRateSources } from '../helpers/rates.js';
import { startFakeBotApi } from '../helpers/telegram.js';
import { layoutProblems } from './showcase.js';

/** A developer's words, in the English page. */
const JARGON_EN = /\b(API|JSON|webhooks?|endpoints?|tokens?|HTTP|payload|null|undefined|fetch failed|status code|stack)\b/i;
/** System error codes (ECONNREFUSED), field names (underpayment_tolerance), event types (invoice.partially_paid). */
const IDENTIFIERS = /\bE[A-Z]{4,}\b|\b[a-z]+_[a-z_]+\b|\b(invoice|transfer|webhook)\.[a-z_]+/;
/** Latin words a Persian page may keep: units, names and file kinds a merchant reads as they are. */
const LATIN_KEPT = new Set(['USDT', 'UTC', 'CSV', 'txt', 'Telegram', 'QR', 'coinbase', 'kraken', 'coingecko']);

/** What the page's main part says, without the values shown for copying (codes, the secret). */
async function merchantText(page: Page, own: string[]): Promise<string> {
  const text = await page.evaluate(`(() => {
    const main = document.querySelector('main').cloneNode(true);
    for (const el of main.querySelectorAll('code, pre, svg, [hidden], script, template')) el.remove();
    return main.innerText;
  })()`);
  return own.reduce((s, value) => s.split(value).join(' '), String(text));
}

test('the Account page holds no developer terms, in English and in Persian, with every part of it showing', async (t) => {
  const rates = await startRateSources();
  t.after(() => rates.close());
  const bot = await startFakeBotApi({ username: 'gw_notices_bot' });
  t.after(() => bot.close());
  const app = await startBrowserApp({
    config: { pricing: pricingConfig(rates), notify: { telegram_bot_token: bot.token, telegram_api_url: bot.url } },
  });
  t.after(() => app.close());
  // One source answers a page that is not JSON, one is rate limited: each a raw error for the operator.
  rates.fail('coinbase', { status: 200, body: '<html>maintenance</html>' });
  rates.fail('kraken', { status: 429, body: '{"error":["EGeneral:Too many requests"]}', headers: { 'retry-after': '60' } });
  await fetchRates(app);
  const failing = app.deps.rates.sources.filter((s) => s.lastError !== null).map((s) => s.lastError);
  assert.ok(failing.some((e) => /JSON/.test(e!)) && failing.some((e) => /HTTP 429/.test(e!)), `the operator's reasons exist: ${failing.join('; ')}`);

  const browser = await openBrowser({ viewport: { width: 1280, height: 900 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  const found: string[] = [];
  for (const locale of ['en', 'fa'] as Locale[]) {
    const owner = await signedInMerchant(app, { name: `Corner Shop ${locale}` });
    await context.clearCookies();
    await context.addCookies([...owner.client.cookies].map(([name, value]) => ({ name, value, url: app.baseUrl })));
    const own = [owner.merchant.email, `Corner Shop ${locale}`];
    const read = async (state: string) => {
      const text = await merchantText(page, own);
      const words =
        locale === 'en'
          ? [JARGON_EN.exec(text)?.[0]]
          : (text.match(/[A-Za-z][A-Za-z0-9.-]*/g) ?? []).filter((w) => !LATIN_KEPT.has(w) && !/^[A-Z]{3}$/.test(w));
      for (const w of [...words, IDENTIFIERS.exec(text)?.[0]]) if (w) found.push(`${locale} ${state}: "${w}"`);
      return text;
    };

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${app.baseUrl}/console/account?lang=${locale}`);
    const sources = await read('rates');
    if (!sources.includes(translate(locale, 'console.rates.failed'))) found.push(`${locale}: a failing source is not said plainly`);
    if (!/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/.test(await page.locator('#rates').innerText())) found.push(`${locale}: no time of the failure`);

    // The Telegram link code.
    await Promise.all([page.waitForEvent('load'), page.locator('#telegram button[type="submit"]').click()]);
    await page.locator('#telegram-code').waitFor();
    await read('telegram code');

    // A refused password change: the error as the page words it.
    await page.fill('#p-current', 'not-the-password-1');
    await page.fill('#p-new', 'a-new-long-passphrase');
    await page.locator('form[data-api="/api/v1/me/password"] button[type="submit"]').click();
    await page.locator('form[data-api="/api/v1/me/password"] [data-error]:not([hidden])').waitFor();
    await read('password refused');

    // Two-factor: the setup (QR code and secret), then the recovery codes.
    await page.click('button[data-two-factor-start]');
    await page.locator('[data-qr] svg').waitFor();
    await read('two-factor setup');
    for (const width of [390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const problem of await layoutProblems(page)) found.push(`${locale} ${width}px: ${problem}`);
    }
    const secret = (await page.locator('[data-secret]').innerText()).trim();
    await page.fill('#tf-code', new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: app.clock.now() }));
    await page.click('form[data-api="/api/v1/me/two-factor/confirm"] button[type="submit"]');
    await page.locator('pre[data-field="recovery_codes"]').filter({ hasText: /-/ }).waitFor();
    await read('recovery codes');

    // The chat linked: since when, in the one date format, an isolated run on a right-to-left page too.
    app.deps.telegram!.pollSeconds = 0;
    bot.message(locale === 'en' ? 4001 : 4002, `/start ${(await page.locator('#telegram-code').innerText()).trim()}`);
    assert.equal(await readUpdates(app.deps), true);
    await page.goto(`${app.baseUrl}/console/account?lang=${locale}`);
    const linked = page.locator('#telegram .notice.ok time');
    assert.equal(await linked.innerText(), formatDate(app.clock.now()), `${locale}: the date of the link`);
    assert.equal(await linked.getAttribute('dir'), 'ltr');
    await read('telegram linked');
    for (const problem of await layoutProblems(page)) found.push(`${locale} linked: ${problem}`);
  }
  assert.deepEqual(found, []);
  assert.deepEqual(
    browser.errors.filter((e) => !/\b(400|401|403)\b/.test(e)),
    [],
  );
});
