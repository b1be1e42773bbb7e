import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser, shownSecret, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';

test('webhooks in Chromium: add one (secret shown once), send a test, retry a failed delivery, delete', async (t) => {
  const rx = await startHttpsReceiver();
  t.after(() => rx.close());
  const app = await startBrowserApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: 2 }) } });
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  const browser = await openBrowser({ viewport: { width: 1024, height: 900 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  page.on('dialog', (d) => void (d.type() === 'confirm' ? d.accept() : d.dismiss()));
  await context.addCookies([{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const main = page.locator('main');

  await page.goto(`${app.baseUrl}/console/webhooks`);
  const url = rx.url('/hooks/gateway?shop=%3Cb%3E1%3C/b%3E');
  await main.getByLabel('Endpoint URL').fill(url);
  await main.getByRole('button', { name: 'Add a webhook' }).click();
  // The field is in the page before the answer fills it: wait for the text, not the element.
  const secret = await shownSecret(main.locator('[data-done] [data-field="secret"]').first(), /^whsec_/);
  assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  // The list refreshes by itself while the secret is still on screen.
  await main.locator('#webhooks-list table').getByText('/hooks/gateway', { exact: false }).waitFor();
  assert.ok(await main.locator('[data-done] [data-field="secret"]').first().isVisible(), 'the secret stays on screen');
  await Promise.all([page.waitForEvent('load'), main.getByRole('link', { name: 'I have saved it' }).first().click()]);
  assert.ok(!(await page.content()).includes(secret), 'the signing secret is never shown again');

  // A test event, delivered on the spot and listed with its status.
  await main.getByRole('button', { name: 'Send a test' }).click();
  await main.locator('table .badge.delivered').waitFor();
  const [received] = await rx.waitFor(1);
  assert.match(String(received!.headers['x-gateway-signature']), /^sha256=[0-9a-f]{64}$/);

  // A failing receiver, then a manual retry once it is back.
  rx.answer(503);
  await main.getByRole('button', { name: 'Send a test' }).click();
  await main.getByRole('button', { name: 'Retry now' }).waitFor();
  assert.match(await main.locator('table').last().innerText(), /HTTP 503/);
  rx.answer(200);
  await Promise.all([page.waitForEvent('load'), main.getByRole('button', { name: 'Retry now' }).click()]);
  await page.waitForFunction('document.querySelectorAll("main table .badge.delivered").length === 2');

  // Delete: the endpoint is shown as deleted and offers no more actions.
  await main.getByRole('button', { name: 'Delete' }).click();
  await main.locator('table .badge.cancelled').first().waitFor();
  assert.equal(await main.getByRole('button', { name: 'Send a test' }).count(), 0);
  assert.deepEqual(browser.errors, []);
});
