/**
 * The webhook controls of the console (issue 30, item 8) used as a person would in Chromium: pause
 * and resume, choose the event types, roll the signing secret (shown once, with the time the old one
 * keeps signing). Each click is checked on the page and in what the API then does: which events are
 * delivered, and with which signatures. Then the same page right to left, controls open, with no
 * overflow, clipping or untranslated key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { findWebhook } from '../../src/webhooks/webhooks.repo.js';
import { EVENT_TYPES } from '../../src/events/events.repo.js';
import { openBrowser, shownSecret, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { startHttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js';
import { deliveriesOf, registerWebhook, storeEvent } from '../webhooks/support.js';
import { layoutProblems } from './showcase.js';
import { formatDate } from '../../src/pages/render.js';

function signatureOf(req: ReceivedRequest, secret: string): string {
  return `sha256=${createHmac('sha256', secret)
    .update(`${String(req.headers['x-gateway-timestamp'])}.${req.rawBody}`)
    .digest('hex')}`;
}

test('webhook controls in Chromium: pause and resume, choose event types, roll the secret; the API follows each; right to left without overflow', async (t) => {
  const rx = await startHttpsReceiver();
  t.after(() => rx.close());
  const app = await startBrowserApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: 2 }) } });
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  const hook = await registerWebhook(owner.client, rx.url('/hooks/controls'));
  const browser = await openBrowser({ viewport: { width: 1024, height: 900 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
  await context.addCookies([{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const main = page.locator('main');
  const row = main.locator('#webhooks-list tbody tr').first();
  const delivered = async (type: 'invoice.created' | 'invoice.confirmed') =>
    (await deliveriesOf(app, (await storeEvent(app, owner.merchant.id, type)).id)).some((d) => d.webhookId === hook.id);

  await page.goto(`${app.baseUrl}/console/webhooks?lang=en`);
  assert.match(await row.innerText(), /Active[\s\S]*Event types: all, also types added later/);

  // Pause: the page says so and offers Resume; new events are no longer delivered to it.
  await Promise.all([page.waitForEvent('load'), row.getByRole('button', { name: 'Pause' }).click()]);
  await row.locator('.badge', { hasText: 'Paused' }).waitFor();
  assert.equal((await findWebhook(app.deps.db, owner.merchant.id, hook.id))!.paused, true);
  assert.equal(await delivered('invoice.confirmed'), false, 'a paused webhook gets no delivery');
  await Promise.all([page.waitForEvent('load'), row.getByRole('button', { name: 'Resume' }).click()]);
  await row.locator('.badge', { hasText: 'Active' }).waitFor();
  assert.equal(await delivered('invoice.confirmed'), true, 'resumed, it is delivered to again');

  // Event types: every box is ticked (all types); untick invoice.created and save.
  await row.getByText('Choose event types').click();
  const boxes = row.locator('input[name="enabled_events"]');
  assert.equal(await boxes.count(), EVENT_TYPES.length - 1, 'every type but webhook.test');
  assert.equal(await row.locator('input[name="enabled_events"]:checked').count(), EVENT_TYPES.length - 1);
  await row.getByLabel('invoice.created').uncheck();
  await Promise.all([page.waitForEvent('load'), row.getByRole('button', { name: 'Save event types' }).click()]);
  assert.doesNotMatch(await row.innerText(), /all, also types added later/);
  assert.match(await row.innerText(), /Event types: invoice\.confirmed/);
  const limited = (await findWebhook(app.deps.db, owner.merchant.id, hook.id))!.enabledEvents;
  assert.equal(limited?.length, EVENT_TYPES.length - 2);
  assert.ok(!limited!.includes('invoice.created'));
  assert.equal(await delivered('invoice.created'), false, 'an unchosen type is not delivered');
  assert.equal(await delivered('invoice.confirmed'), true, 'a chosen type is');

  // No box ticked is refused by the API and said on the page; nothing changes.
  await row.getByText('Choose event types').click();
  for (let i = 0; i < (await boxes.count()); i++) await boxes.nth(i).uncheck();
  await row.getByRole('button', { name: 'Save event types' }).click();
  await row.locator('form [data-error]:not([hidden])').waitFor();
  assert.match(await row.locator('form [data-error]:not([hidden])').innerText(), /Event types|enabled_events/);
  assert.equal((await findWebhook(app.deps.db, owner.merchant.id, hook.id))!.enabledEvents?.length, EVENT_TYPES.length - 2, 'unchanged');

  // Every box ticked again: null, every type (also later ones).
  for (let i = 0; i < (await boxes.count()); i++) await boxes.nth(i).check();
  await Promise.all([page.waitForEvent('load'), row.getByRole('button', { name: 'Save event types' }).click()]);
  assert.match(await row.innerText(), /Event types: all, also types added later/);
  assert.equal((await findWebhook(app.deps.db, owner.merchant.id, hook.id))!.enabledEvents, null);

  // Roll the secret: confirmed first, the new secret shown once with the end of the overlap.
  await row.getByRole('button', { name: 'Roll secret' }).click();
  const secret = await shownSecret(row.locator('[data-done] [data-field="secret"]'), /^whsec_/);
  assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  assert.notEqual(secret, hook.secret);
  assert.match(dialogs.at(-1)!, /24 hours/);
  const until = row.locator('[data-done] time[data-field="webhook.previous_secret_expires_at"]');
  assert.equal(Date.parse((await until.getAttribute('datetime'))!), app.clock.now() + 24 * 3_600_000, 'the old secret signs for 24 hours');
  assert.equal(await until.innerText(), formatDate(app.clock.now() + 24 * 3_600_000), 'in the format of every other date, not raw ISO');
  assert.match(await row.locator('div[data-done]').innerText(), /keeps signing beside the new one/);
  await Promise.all([page.waitForEvent('load'), row.getByRole('link', { name: 'I have saved it' }).click()]);
  assert.ok(!(await page.content()).includes(secret), 'the new secret is never shown again');
  assert.match(await row.locator('[data-rolling]').innerText(), /Old secret signs too until/);

  // A test event now carries both signatures: the new secret's first, then the old one's.
  rx.requests.length = 0;
  await Promise.all([page.waitForEvent('load'), row.getByRole('button', { name: 'Send a test' }).click()]);
  const [received] = await rx.waitFor(1);
  assert.equal(String(received!.headers['x-gateway-signature']), `${signatureOf(received!, secret)},${signatureOf(received!, hook.secret)}`);
  // The refused save is the only failed response (Chromium logs it twice).
  assert.deepEqual(
    browser.errors.filter((e) => !e.startsWith('400 ') && !e.includes('status of 400')),
    [],
  );

  // Right to left (Arabic and Persian), at desktop and phone width, every control open.
  const out = mkdtempSync(join(tmpdir(), 'gatewayd-webhook-controls-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const failures: string[] = [];
  for (const lang of ['ar', 'fa']) {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${app.baseUrl}/console/webhooks?lang=${lang}`);
      assert.equal(await page.getAttribute('html', 'dir'), 'rtl');
      await page.evaluate('document.querySelectorAll("details").forEach((d) => { d.open = true; })');
      for (const problem of await layoutProblems(page)) failures.push(`${lang} ${width}px: ${problem}`);
      await page.screenshot({ path: join(out, `webhooks-${lang}-${width}.png`), fullPage: true });
    }
  }
  assert.deepEqual(failures, []);
});
