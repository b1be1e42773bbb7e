import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { linksIn, startSmtp } from '../helpers/smtp.js';

const XSS = '<img src=x onerror=alert(1)>';
const PASSWORD = 'correct horse battery staple';

test('sign-in pages in Chromium: register, confirm through the mailed link, sign out, sign in, reset the password, rename', async (t) => {
  const smtp = await startSmtp();
  t.after(() => smtp.close());
  const app = await startBrowserApp({ config: { email: smtp.email, rate_limits: { auth_per_ip: 0, auth_per_email: 0 } } });
  t.after(() => app.close());
  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page } = browser;
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const email = 'new.owner@shop.example';
  const linkFrom = async (kind: 'verify' | 'reset', after: number) => {
    const mail = await smtp.waitFor((m) => smtp.messages.indexOf(m) >= after && m.to.includes(email));
    const link = linksIn(mail.text).find((l) => l.includes(`/${kind}#${kind}=`));
    assert.ok(link, mail.text);
    // Mail links use server.public_url, which the browser app set to its own address.
    assert.ok(link.startsWith(app.baseUrl), link);
    return link;
  };

  // Registration: a name with markup, shown as text later.
  await page.goto(`${app.baseUrl}/register`);
  await page.locator('main').getByLabel('Business name (optional)').fill(`Tea ${XSS} & Co`);
  await page.locator('main').getByLabel('Email').fill(email);
  await page.locator('main').getByLabel('Password').fill(PASSWORD);
  let mails = smtp.messages.length;
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText('Check your inbox').waitFor();

  // The confirmation link leaves no token in the address bar, and signs in once the person confirms.
  await page.goto(await linkFrom('verify', mails));
  await page.getByRole('button', { name: 'Confirm my email address' }).click();
  await page.locator('[data-state="ok"]', { hasText: 'Your email address is confirmed' }).waitFor();
  assert.equal(new URL(page.url()).hash, '');
  await page.getByRole('link', { name: 'Open the console' }).click();
  await page.waitForURL(`${app.baseUrl}/console`);
  assert.equal(await page.locator('main h1').innerText(), `Tea ${XSS} & Co`);

  // Sign out (a plain form, Origin-checked), then a wrong and a right password.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/login$/);
  assert.equal((await page.goto(`${app.baseUrl}/console/wallets`))?.url(), `${app.baseUrl}/login?next=%2Fconsole%2Fwallets`);
  await page.locator('main').getByLabel('Email').fill(email);
  await page.locator('main').getByLabel('Password').fill('wrong password here');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Wrong email or password.').waitFor();
  await page.locator('main').getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${app.baseUrl}/console/wallets`);

  // Forgot and reset: the new password works, the old one no longer does.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/login$/);
  await page.getByRole('link', { name: 'Forgot your password?' }).click();
  await page.locator('main').getByLabel('Email').fill(email);
  mails = smtp.messages.length;
  await page.getByRole('button', { name: 'Send the link' }).click();
  await page.getByText('If an account exists').waitFor();
  await page.goto(await linkFrom('reset', mails));
  assert.equal(new URL(page.url()).hash, '');
  await page.locator('main').getByLabel('New password').fill('a brand new long passphrase');
  await page.getByRole('button', { name: 'Save and sign in' }).click();
  await page.waitForURL(`${app.baseUrl}/console`);

  // Account name, through PATCH /me from the console form.
  await page.goto(`${app.baseUrl}/console/account`);
  await page.locator('main').getByLabel('Business name').fill('Tea House <b>');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.locator('.who', { hasText: 'Tea House <b>' }).waitFor();
  await page.goto(`${app.baseUrl}/console`);
  assert.equal(await page.locator('main h1').innerText(), 'Tea House <b>');

  assert.deepEqual(dialogs, []);
  // The wrong password answered 401; nothing else failed.
  assert.deepEqual(
    browser.errors.filter((e) => !/\b401\b/.test(e)),
    [],
  );
});
