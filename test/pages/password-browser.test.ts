import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword } from '../../src/accounts/passwords.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { translate } from '../../src/lib/i18n.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';

const OLD = '  the old passphrase 2025 ';
const NEW = 'the new passphrase 2026';

test('Account page in Chromium (fa): a wrong current password is said and marked; the change signs other browsers out and keeps this one', async (t) => {
  const app = await startBrowserApp();
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  await app.deps.db
    .updateTable('merchants')
    .set({ password_hash: await hashPassword(OLD) })
    .where('id', '=', owner.merchant.id)
    .execute();
  const elsewhere = app.client();
  assert.equal((await elsewhere.post('/auth/login', { email: owner.merchant.email, password: OLD })).status, 200);

  const browser = await openBrowser({ locale: 'fa', viewport: { width: 390, height: 844 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  await context.addCookies([{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const fa = (key: string) => translate('fa', key);
  await page.goto(`${app.baseUrl}/console/account?lang=fa`);
  const form = page.locator('form[data-api="/api/v1/me/password"]');
  const current = form.getByLabel(fa('console.account.current_password'));
  const next = form.getByLabel(fa('console.account.new_password'));

  // Too short: the form refuses it in the page's language and sends nothing.
  await current.fill(OLD);
  await next.fill('short');
  let posts = 0;
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/me/password')) posts += 1;
  });
  await form.locator('button[type="submit"]').click();
  assert.equal(posts, 0);
  assert.ok((await next.evaluate((el) => (el as unknown as { validationMessage: string }).validationMessage)).startsWith(fa('console.account.new_password')));

  // Wrong current password: the form's own message (not "wrong email or password"), the field marked.
  await current.fill('   ' + 'not the password' + '   ');
  await next.fill(NEW);
  await form.locator('button[type="submit"]').click();
  const error = form.locator('[data-error]');
  await error.filter({ hasText: fa('console.account.wrong_password') }).waitFor();
  assert.ok(!(await error.innerText()).includes(fa('page.error.invalid_credential')));
  assert.equal(await current.getAttribute('aria-invalid'), 'true');
  assert.equal(await next.getAttribute('aria-invalid'), null);

  // Spaces are part of a password: they are sent as typed, never trimmed.
  await current.fill(OLD);
  await form.locator('button[type="submit"]').click();
  await page.locator('[data-done]', { hasText: fa('console.account.password_changed') }).waitFor();
  assert.equal(await form.isHidden(), true);
  assert.equal(posts, 2);

  await page.goto(`${app.baseUrl}/console/account?lang=fa`);
  assert.equal(new URL(page.url()).pathname, '/console/account', 'this browser stays signed in');
  assert.equal((await elsewhere.get('/me')).status, 401, 'the other session was signed out');
  assert.equal((await app.client().post('/auth/login', { email: owner.merchant.email, password: NEW })).status, 200);
  const text = await page.locator('main').innerText();
  assert.doesNotMatch(text, /undefined|null|console\.account\./);
  assert.equal(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), true, 'no horizontal overflow at 390 px');
  // The only failed response is the expected 401 of the wrong current password (reported twice: response and console).
  assert.deepEqual(
    browser.errors.filter((e) => !e.includes('/me/password') && !/status of 401/.test(e)),
    [],
  );
  assert.equal(browser.errors.filter((e) => e.startsWith('401 ')).length, 1);
});
