/**
 * Two-factor sign-in as a person sees it in Chromium, in English and in Persian (right to left):
 * the console's Account page sets it up (QR code, secret, first code, the ten recovery codes shown
 * once), and the sign-in page then asks for the code after the password. Screenshots, no
 * horizontal overflow, no untranslated text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { translate, type Locale } from '../../src/lib/i18n.js';
import { tempDir } from '../helpers/app.js';
import { confirmedAccount, PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { startSmtp } from '../helpers/smtp.js';

const shots = tempDir('gatewayd-shots-');

async function looksRight(page: Page, name: string): Promise<void> {
  const state = await page.evaluate(() => {
    const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number }; body: { innerText: string } } }).document;
    return { scroll: d.documentElement.scrollWidth, width: d.documentElement.clientWidth, text: d.body.innerText };
  });
  assert.ok(state.scroll <= state.width, `${name}: no horizontal overflow (${state.scroll} > ${state.width})`);
  assert.doesNotMatch(state.text, /undefined|\b(page|console)\.[a-z_]+\.[a-z_]+/, name);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

for (const locale of ['en', 'fa'] as Locale[]) {
  test(`two-factor setup in the console and the code step of sign-in, in Chromium (${locale})`, async (t) => {
    const smtp = await startSmtp();
    t.after(() => smtp.close());
    const app = await startBrowserApp({ config: { email: smtp.email, rate_limits: { auth_per_ip: 0, auth_per_email: 0 } } });
    t.after(() => app.close());
    const { email } = await confirmedAccount({ t: app, smtp, close: async () => {} }, uniqueEmail('tfb'));
    const code = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: app.clock.now() });

    const browser = await openBrowser({ locale: locale === 'fa' ? 'fa-IR' : 'en-US' });
    t.after(() => browser.close());
    const { page, context } = browser;
    const signIn = async () => {
      await page.goto(`${app.baseUrl}/login`);
      await page.fill('#email', email);
      await page.fill('#password', PASSWORD);
      await page.click('form[data-api="/api/v1/auth/login"] button[type="submit"]');
    };
    await signIn();
    await page.waitForURL(/\/console/);

    await page.goto(`${app.baseUrl}/console/account#two-factor`);
    await page.click('button[data-two-factor-start]');
    await page.locator('[data-qr] svg').waitFor();
    const secret = (await page.locator('[data-secret]').innerText()).trim();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await looksRight(page, `two-factor-setup-${locale}`);
    await page.fill('#tf-code', code(secret));
    await page.click('form[data-api="/api/v1/me/two-factor/confirm"] button[type="submit"]');
    const codes = page.locator('pre[data-field="recovery_codes"]');
    await codes.filter({ hasText: /-/ }).waitFor();
    assert.equal((await codes.innerText()).trim().split('\n').length, 10);
    await looksRight(page, `two-factor-recovery-${locale}`);

    await context.clearCookies();
    app.clock.advance(30_000);
    await signIn();
    const step = page.locator('#two-factor-step');
    await step.waitFor({ state: 'visible' });
    assert.ok((await step.innerText()).includes(translate(locale, 'page.login.two_factor_intro')));
    await page.fill('#code', '000000');
    await page.click('#two-factor-step button[type="submit"]');
    await page
      .locator('#two-factor-step [data-error]')
      .filter({ hasText: translate(locale, 'page.login.two_factor_wrong') })
      .waitFor();
    await looksRight(page, `two-factor-code-step-${locale}`);
    await page.fill('#code', code(secret));
    await page.click('#two-factor-step button[type="submit"]');
    await page.waitForURL(/\/console/);
    await page.goto(`${app.baseUrl}/console/account`);
    assert.ok((await page.locator('#two-factor').innerText()).includes(translate(locale, 'console.two_factor.disable')));
  });
}
