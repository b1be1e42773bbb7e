import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { insertInvoice, insertWallet, WALLET_ADDRESS } from './rows.js';

test('checkout in Chromium: amount, copy buttons, server-clock countdown, escaped text, language switch to rtl', async (t) => {
  const app = await startBrowserApp();
  t.after(() => app.close());
  const { merchant } = await signedInMerchant(app, { name: '<img src=x onerror=alert(1)>Shop' });
  const walletId = await insertWallet(app.deps.db, merchant.id, app.clock.now());
  const inv = await insertInvoice(app.deps.db, {
    merchantId: merchant.id,
    walletId,
    now: app.clock.now(),
    base: 49_990_000n,
    adjustment: 12n,
    description: '<script>alert("desc")</script>',
    expiresInMinutes: 20,
  });
  // The phone's clock is irrelevant: the server says 10 minutes are left.
  app.clock.advance(10 * 60_000);

  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page } = browser;
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
  await page.goto(`${app.baseUrl}/pay/${inv.checkoutToken}`);

  assert.equal(await page.locator('#amount').innerText(), '49.990012 USDT');
  assert.equal(await page.locator('.merchant-name').innerText(), '<img src=x onerror=alert(1)>Shop');
  assert.equal(await page.locator('.description').innerText(), '<script>alert("desc")</script>');
  assert.equal(await page.locator('#address').innerText(), WALLET_ADDRESS);
  assert.ok(await page.locator('.qr svg').isVisible());
  const first = await page.locator('#countdown').innerText();
  assert.match(first, /^(10:00|09:5\d)$/);
  await page.waitForFunction(() => /^09:5[0-7]$/.test(String((globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('countdown').textContent)), undefined, { timeout: 5000 });

  await page.getByRole('button', { name: 'Copy amount' }).click();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), '49.990012');
  await page.getByRole('button', { name: 'Copy address' }).click();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), WALLET_ADDRESS);

  // The language switcher keeps the page and turns Persian right-to-left.
  await page.locator('.lang summary').click();
  await page.locator('a[hreflang="fa"]').click();
  await page.waitForURL(/lang=fa/);
  assert.equal(await page.getAttribute('html', 'dir'), 'rtl');
  assert.equal(await page.getAttribute('html', 'lang'), 'fa');
  assert.equal(await page.locator('#amount').innerText(), '49.990012 USDT');
  assert.equal(await page.locator('#amount-label').innerText(), 'دقیقاً این مبلغ را بفرستید');
  // The choice is remembered: the next page without ?lang= stays Persian.
  await page.goto(`${app.baseUrl}/login`);
  assert.equal(await page.getAttribute('html', 'lang'), 'fa');

  assert.deepEqual(dialogs, [], 'no script typed by anyone ran');
  assert.deepEqual(browser.errors, [], 'no console errors (CSP violations included)');
});

test('checkout without JavaScript: everything is shown, copy buttons stay hidden, the page refreshes itself', async (t) => {
  const app = await startBrowserApp();
  t.after(() => app.close());
  const { merchant } = await signedInMerchant(app);
  const walletId = await insertWallet(app.deps.db, merchant.id, app.clock.now());
  const inv = await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now: app.clock.now(), base: 5_000_000n, adjustment: 3n });
  const browser = await openBrowser({ javaScript: false });
  t.after(() => browser.close());
  const { page } = browser;
  await page.goto(`${app.baseUrl}/pay/${inv.checkoutToken}`);
  assert.equal(await page.locator('#amount').innerText(), '5.000003 USDT');
  assert.equal(await page.locator('#address').innerText(), WALLET_ADDRESS);
  assert.ok(await page.locator('.qr svg').isVisible());
  assert.ok(await page.locator('.warnings').isVisible());
  assert.equal(await page.getByRole('button', { name: 'Copy amount' }).count(), 0, 'no dead buttons without JavaScript');
  assert.equal(await page.locator('meta[http-equiv="refresh"]').getAttribute('content'), '15');
  assert.equal(await page.locator('#countdown').innerText(), '20:00');
});
