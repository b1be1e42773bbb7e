/**
 * The account-security pages as a person sees them in Chromium: the confirmation page waits for a
 * click (a link from another site cannot sign the browser in: login CSRF), competing registrations
 * and a confirmation in another browser than the one that registered end confirmed without a
 * password (chosen at once on the confirmation page), the browser that registered keeps its password, the reset page shows what else the account holds and offers to
 * revoke it, and a registration that sent no mail says so. In English and in right-to-left locales,
 * with screenshots, no horizontal overflow and no untranslated text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { MINUTE } from '../../src/lib/clock.js';
import { tempDir, type TestApp } from '../helpers/app.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { fragmentToken, linksIn, startSmtp, type SmtpStub } from '../helpers/smtp.js';

const PASSWORD = 'correct horse battery staple';
const shots = tempDir('gatewayd-shots-');

async function mailLink(smtp: SmtpStub, to: string, kind: 'verify' | 'reset', after = 0): Promise<string> {
  const mail = await smtp.waitFor((m) => smtp.messages.indexOf(m) >= after && m.to.includes(to) && m.text.includes(`#${kind}=`));
  const link = linksIn(mail.text).find((l) => l.includes(`/${kind}#${kind}=`));
  assert.ok(link, mail.text);
  return link;
}

/** What a person sees: no horizontal overflow, no "undefined", no message key left untranslated; a screenshot. */
async function looksRight(page: Page, name: string): Promise<void> {
  const state = await page.evaluate(() => {
    const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number }; body: { innerText: string } } }).document;
    return { scroll: d.documentElement.scrollWidth, width: d.documentElement.clientWidth, text: d.body.innerText };
  });
  assert.ok(state.scroll <= state.width, `${name}: no horizontal overflow (${state.scroll} > ${state.width})`);
  assert.doesNotMatch(state.text, /undefined|\bpage\.[a-z_]+\.[a-z_]+|\bemail\.[a-z_]+\./, name);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

async function startApps(t: { after(fn: () => unknown): void }): Promise<{ app: TestApp; smtp: SmtpStub }> {
  const smtp = await startSmtp();
  t.after(() => smtp.close());
  const rx = await startHttpsReceiver();
  t.after(() => rx.close());
  const app = await startBrowserApp({
    config: {
      email: smtp.email,
      rate_limits: { auth_per_ip: 0, auth_per_email: 0 },
      webhooks: rx.webhookConfig({ allow_private_cidrs: ['127.0.0.0/8'], resolve: { 'hooks.example.test': '127.0.0.1' } }),
    },
  });
  t.after(() => app.close());
  (app as TestApp & { rx?: typeof rx }).rx = rx;
  return { app, smtp };
}

test('confirmation page in Chromium: a link handed over by another site confirms nothing until the person clicks', async (t) => {
  const { app, smtp } = await startApps(t);
  // The attacker registers an address of their own and hands its link to the victim.
  const attackerEmail = 'attacker@evil.example';
  assert.equal((await app.client().post('/auth/register', { email: attackerEmail, password: PASSWORD })).status, 201);
  const link = await mailLink(smtp, attackerEmail, 'verify');

  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page, context } = browser;
  await page.goto(link);
  // Wait until the page has settled: it shows either its button or an outcome, then give any
  // request it would make on its own time to land.
  await page.locator('#verify button:visible, #verify [data-state="ok"]:visible, #verify [data-state="failed"]:visible').first().waitFor();
  await page.waitForTimeout(500);
  const signedIn = async () => (await context.cookies(app.baseUrl)).some((c) => c.name === SESSION_COOKIE);
  assert.equal(await signedIn(), false, 'opening the link signs nobody in');
  const row = () => app.deps.db.selectFrom('merchants').select('email_verified_at').where('email', '=', attackerEmail).executeTakeFirstOrThrow();
  assert.equal((await row()).email_verified_at, null, 'opening the link confirms nothing');
  const button = page.getByRole('button', { name: 'Confirm my email address' });
  await button.waitFor();
  assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar');
  await looksRight(page, 'verify-ready-en');

  // A person who does mean to confirm presses the button.
  await button.click();
  // Another browser than the one that registered: confirmed and signed in, with no password kept.
  await page.locator('[data-state="ok_no_password"]', { hasText: 'Your email address is confirmed and you are signed in.' }).waitFor();
  assert.equal(await signedIn(), true);
  assert.notEqual((await row()).email_verified_at, null);
  assert.deepEqual(browser.errors, []);
});

test('competing registrations in Chromium (Arabic): the owner confirms, is signed in without a password, and sets one from the mailed link', async (t) => {
  const { app, smtp } = await startApps(t);
  const email = 'owner@shop.example';
  assert.equal((await app.client().post('/auth/register', { email, password: 'the attacker chose this' })).status, 201);
  const browser = await openBrowser({ locale: 'ar' });
  t.after(() => browser.close());
  const { page } = browser;

  // The owner registers in the browser two minutes after the attacker. A repeated registration within
  // 5 minutes answers exactly like a new one (no mail, but no hint that the address is known either):
  // the page says to check the inbox, where the attacker's registration's link already is.
  app.clock.advance(2 * MINUTE);
  await smtp.waitFor(); // the attacker's registration's mail
  const mailsBefore = smtp.messages.length;
  await page.goto(`${app.baseUrl}/register`);
  await page.locator('#email').fill(email);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('form[data-api] button[type="submit"]').click();
  await page.locator('[data-done]').waitFor();
  assert.equal(await page.locator('[data-not-sent]').isVisible(), false, 'answered like a new registration');
  assert.equal(smtp.messages.length, mailsBefore, 'no second mail within 5 minutes');
  await looksRight(page, 'register-repeated-ar');

  // The owner follows the only mail they got (the attacker's registration's).
  await page.goto(await mailLink(smtp, email, 'verify'));
  await looksRight(page, 'verify-ready-ar');
  await page.locator('#verify form[data-state="ready"] button').click();
  const done = page.locator('[data-state="ok_no_password"]');
  await done.waitFor();
  assert.match(await done.innerText(), /لا يُحتفظ بكلمة المرور المكتوبة عند التسجيل/);
  assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
  await looksRight(page, 'verify-no-password-ar');
  assert.equal((await app.client().post('/auth/login', { email, password: 'the attacker chose this' })).status, 401);

  // The mailed reset link sets the owner's own password.
  await page.goto(await mailLink(smtp, email, 'reset'));
  await page.locator('#password').fill('the owner sets this now');
  // The reset page also holds the two-factor code step (hidden without two-factor): the first form.
  await page.locator('form[data-api] button[type="submit"]').first().click();
  await page.waitForURL(`${app.baseUrl}/console`);
  assert.equal((await app.client().post('/auth/login', { email, password: 'the owner sets this now' })).status, 200);
  assert.deepEqual(browser.errors, []);
});

test('confirmation in Chromium: the browser that registered keeps its password; another device (Persian) chooses one on the confirmation page', async (t) => {
  const { app, smtp } = await startApps(t);

  // Same browser: register on the page, follow the mail's link in that browser, the password is kept.
  const same = await openBrowser({ viewport: { width: 1024, height: 800 } });
  t.after(() => same.close());
  const email = 'same-browser@shop.example';
  await same.page.goto(`${app.baseUrl}/register`);
  await same.page.locator('#email').fill(email);
  await same.page.locator('#password').fill(PASSWORD);
  await same.page.locator('form[data-api] button[type="submit"]').click();
  await same.page.locator('[data-done]').waitFor();
  const cookie = (await same.context.cookies(`${app.baseUrl}/api/v1/auth/verify-email`)).find((c) => c.name === 'gw_reg');
  assert.ok(cookie && cookie.httpOnly && cookie.sameSite === 'Lax', 'an HttpOnly, SameSite=Lax registration cookie');
  await same.page.goto(await mailLink(smtp, email, 'verify'));
  await same.page.getByRole('button', { name: 'Confirm my email address' }).click();
  await same.page.locator('[data-state="ok"]', { hasText: 'Your email address is confirmed and you are signed in.' }).waitFor();
  assert.equal((await app.client().post('/auth/login', { email, password: PASSWORD })).status, 200, 'the password typed in this browser is kept');
  assert.deepEqual(same.errors, []);

  // Another device: registered elsewhere (another client), confirmed on a phone in Persian.
  const other = 'two-devices@shop.example';
  assert.equal((await app.client().post('/auth/register', { email: other, password: PASSWORD })).status, 201);
  const phone = await openBrowser({ locale: 'fa', viewport: { width: 360, height: 740 } });
  t.after(() => phone.close());
  const { page } = phone;
  await page.goto(await mailLink(smtp, other, 'verify'));
  await page.locator('#verify form[data-state="ready"] button').click();
  const choose = page.locator('form[data-state="ok_no_password"]');
  await choose.waitFor();
  assert.match(await choose.innerText(), /اکنون گذرواژه خود را انتخاب کنید/);
  assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
  assert.equal(
    await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id),
    'password',
    'the password field has the focus',
  );
  await looksRight(page, 'verify-choose-password-fa');
  assert.equal(
    (await app.client().post('/auth/login', { email: other, password: PASSWORD })).status,
    401,
    'the password typed on the other device is not kept',
  );

  // Too short first: the browser's own check stops it; then a valid one signs in to the console.
  await page.locator('#password').fill('short');
  await choose.locator('button[type="submit"]').click();
  assert.equal(await page.url().endsWith('/console'), false);
  await page.locator('#password').fill('chosen on the phone today');
  await choose.locator('button[type="submit"]').click();
  await page.waitForURL(`${app.baseUrl}/console`);
  assert.equal((await app.client().post('/auth/login', { email: other, password: 'chosen on the phone today' })).status, 200);

  // Choosing again on the same page: refused in Persian (the account has a password now).
  await page.goto(`${app.baseUrl}/verify`);
  await page.evaluate(() => {
    const d = (globalThis as unknown as { document: { querySelector(s: string): { hidden: boolean } } }).document;
    d.querySelector('[data-state="failed"]').hidden = true;
    d.querySelector('form[data-state="ok_no_password"]').hidden = false;
  });
  await page.locator('#password').fill('yet another password here');
  await choose.locator('button[type="submit"]').click();
  const error = choose.locator('[data-error]');
  await error.waitFor();
  assert.match(await error.innerText(), /این حساب از قبل گذرواژه دارد/);
  await looksRight(page, 'verify-password-already-set-fa');
  assert.deepEqual(
    phone.errors.filter((e) => !/\b409\b/.test(e)),
    [],
    'no error but the refused second choice',
  );
});

test('reset page in Chromium (English and Persian): shows how many API keys and webhooks exist and revokes them when the box is ticked', async (t) => {
  const { app, smtp } = await startApps(t);
  const rx = (app as TestApp & { rx: Awaited<ReturnType<typeof startHttpsReceiver>> }).rx;
  const email = 'merchant@shop.example';
  const api = app.client();
  assert.equal((await api.post('/auth/register', { email, password: PASSWORD })).status, 201);
  const token = fragmentToken(await smtp.waitFor((m) => m.to.includes(email)), 'verify');
  assert.equal((await api.post('/auth/verify-email', { token })).status, 200);
  const { secret } = (await api.post('/api-keys', { name: 'server' })).body;
  assert.equal((await api.post('/api-keys', { name: 'second' })).status, 201);
  assert.equal((await api.post('/webhooks', { url: rx.url('/hook', 'hooks.example.test') })).status, 201);

  // Persian first: the counts and the offer, right to left; leave the box unticked.
  let mails = smtp.messages.length;
  assert.equal((await app.client().post('/auth/password/forgot', { email })).status, 202);
  const browser = await openBrowser({ locale: 'fa' });
  t.after(() => browser.close());
  const { page } = browser;
  await page.goto(await mailLink(smtp, email, 'reset', mails));
  await page.locator('[data-credentials]').waitFor();
  assert.equal(await page.locator('[data-count="api_keys"]').innerText(), '2');
  assert.equal(await page.locator('[data-count="webhooks"]').innerText(), '1');
  assert.match(await page.locator('[data-credentials]').innerText(), /کلیدهای API فعال/);
  await looksRight(page, 'reset-counts-fa');
  await browser.context.close().catch(() => undefined);

  // English: tick the box and reset.
  app.clock.advance(5 * MINUTE);
  mails = smtp.messages.length;
  assert.equal((await app.client().post('/auth/password/forgot', { email })).status, 202);
  const en = await openBrowser({ viewport: { width: 1024, height: 800 } });
  t.after(() => en.close());
  await en.page.goto(await mailLink(smtp, email, 'reset', mails));
  const box = en.page.locator('main').getByText('Active API keys');
  await box.waitFor();
  assert.match(await en.page.locator('[data-credentials]').innerText(), /Active API keys: 2\s+Active webhooks: 1/);
  await looksRight(en.page, 'reset-counts-en');
  await en.page.locator('main').getByLabel('New password').fill('a brand new long passphrase');
  await en.page.getByRole('checkbox', { name: /Also revoke every API key/ }).check();
  await en.page.getByRole('button', { name: 'Save and sign in' }).click();
  await en.page.waitForURL(`${app.baseUrl}/console`);
  assert.equal((await app.client({ origin: null }).get('/invoices', { bearer: secret })).status, 401, 'the key is revoked');
  const active = await app.deps.db.selectFrom('webhooks').select('active').execute();
  assert.deepEqual(
    active.map((w) => w.active),
    [0],
  );
  assert.deepEqual(en.errors, []);
});
