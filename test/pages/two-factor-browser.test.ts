/**
 * Two-factor sign-in as a person sees it in Chromium, in English and in Persian (right to left):
 * the console's Account page sets it up (QR code, secret, first code, the ten recovery codes shown
 * once), and the sign-in page then asks for the code after the password. Screenshots, no
 * horizontal overflow, no untranslated text. The reset page of such an account says the API keys
 * stay valid and offers to revoke them; saving the new password leads to the code step (no session
 * cookie yet), and only the right code signs in and revokes the keys that were asked to go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { translate, type Locale } from '../../src/lib/i18n.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { tempDir } from '../helpers/app.js';
import { confirmedAccount, PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { fragmentToken, startSmtp } from '../helpers/smtp.js';

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

/** A wrong code in the page's code step: refused in the page's language. */
async function wrongCode(page: Page, locale: Locale, name: string): Promise<void> {
  await page.fill('#code', '000000');
  await page.click('#two-factor-step button[type="submit"]');
  await page
    .locator('#two-factor-step [data-error]')
    .filter({ hasText: translate(locale, 'page.login.two_factor_wrong') })
    .waitFor();
  await looksRight(page, name);
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
    const codesText = (await codes.innerText()).trim();
    assert.equal(codesText.split('\n').length, 10);
    // Two-factor is on: the secret and its QR code have left the page, only the codes are shown.
    assert.equal(await page.locator('[data-secret], [data-qr]').count(), 0, 'the secret is gone once confirmed');
    assert.ok(!(await page.locator('#two-factor').innerText()).includes(secret), 'the secret is not on screen');
    // The codes can be copied (all ten, one a line) and downloaded as a text file made in the page.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    const copy = page.locator('#two-factor button.copy');
    assert.equal((await copy.innerText()).trim(), translate(locale, 'console.two_factor.copy_codes'));
    await copy.click();
    await copy.filter({ hasText: translate(locale, 'page.checkout.copied') }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), codesText);
    const save = page.locator('#two-factor button[data-download-codes]');
    assert.equal((await save.innerText()).trim(), translate(locale, 'console.two_factor.download_codes'));
    const [download] = await Promise.all([page.waitForEvent('download'), save.click()]);
    assert.equal(download.suggestedFilename(), 'gatewayd-recovery-codes.txt');
    const file = await download.path();
    assert.equal(readFileSync(file, 'utf8'), codesText + '\n');
    await looksRight(page, `two-factor-recovery-${locale}`);

    await context.clearCookies();
    app.clock.advance(30_000);
    await signIn();
    const step = page.locator('#two-factor-step');
    await step.waitFor({ state: 'visible' });
    assert.ok((await step.innerText()).includes(translate(locale, 'page.login.two_factor_intro')));
    await wrongCode(page, locale, `two-factor-code-step-${locale}`);
    await page.fill('#code', code(secret));
    await page.click('#two-factor-step button[type="submit"]');
    await page.waitForURL(/\/console/);
    await page.goto(`${app.baseUrl}/console/account`);
    assert.ok((await page.locator('#two-factor').innerText()).includes(translate(locale, 'console.two_factor.disable')));
  });
}

for (const locale of ['en', 'fa'] as Locale[]) {
  test(`the reset page of a two-factor account asks for the code before signing in, in Chromium (${locale})`, async (t) => {
    const smtp = await startSmtp();
    t.after(() => smtp.close());
    const app = await startBrowserApp({ config: { email: smtp.email, rate_limits: { auth_per_ip: 0, auth_per_email: 0 } } });
    t.after(() => app.close());
    const { email, client: owner } = await confirmedAccount({ t: app, smtp, close: async () => {} }, uniqueEmail('rtfb'));
    const code = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: app.clock.now() });
    const { secret } = (await owner.post('/me/two-factor/setup')).body;
    assert.equal((await owner.post('/me/two-factor/confirm', { code: code(secret) })).status, 200);
    app.clock.advance(30_000);
    const apiKey = (await owner.post('/api-keys', { name: 'shop backend' })).body.secret;
    const keyStatus = async () => (await app.client({ origin: null }).get('/invoices', { bearer: apiKey })).status;

    const before = smtp.messages.length;
    assert.equal((await app.client().post('/auth/password/forgot', { email })).status, 202);
    const mail = await smtp.waitFor((m) => smtp.messages.indexOf(m) >= before && m.to.includes(email) && m.text.includes('#reset='));

    const browser = await openBrowser({ locale: locale === 'fa' ? 'fa-IR' : 'en-US' });
    t.after(() => browser.close());
    const { page, context } = browser;
    await page.goto(`${app.baseUrl}/reset#reset=${fragmentToken(mail, 'reset')}`);
    const holds = page.locator('[data-credentials]');
    await holds.waitFor({ state: 'visible' });
    assert.equal((await page.locator('[data-count="api_keys"]').innerText()).trim(), '1');
    assert.ok((await holds.innerText()).includes(translate(locale, 'page.reset.keys_stay')), 'the page says the API keys stay valid');
    assert.equal(await holds.locator('a[href="/console/api-keys"]').count(), 1);
    await page.fill('#password', 'a new password for this test');
    await page.check('input[name="revoke_api_keys_and_webhooks"]');
    await page.click('form[data-fragment="reset"] button[type="submit"]');

    const step = page.locator('#two-factor-step');
    await step.waitFor({ state: 'visible' });
    assert.ok((await step.innerText()).includes(translate(locale, 'page.reset.two_factor_intro')));
    assert.equal(await page.locator('form[data-fragment="reset"]').isHidden(), true);
    assert.equal((await context.cookies()).filter((c) => c.name.endsWith(SESSION_COOKIE)).length, 0, 'no session before the code');
    assert.equal(await keyStatus(), 200, 'nothing revoked before the code');
    await wrongCode(page, locale, `reset-two-factor-code-step-${locale}`);
    assert.equal((await context.cookies()).filter((c) => c.name.endsWith(SESSION_COOKIE)).length, 0);

    await page.fill('#code', code(secret));
    await page.click('#two-factor-step button[type="submit"]');
    await page.waitForURL(/\/console/);
    assert.equal((await context.cookies()).filter((c) => c.name.endsWith(SESSION_COOKIE)).length, 1);
    assert.equal(await keyStatus(), 401, 'the keys asked to go are revoked with the code');
  });
}
