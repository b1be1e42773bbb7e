import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser, shownSecret, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { addWallet, ADDRESSES } from '../helpers/shop.js';
import { layoutProblems } from './showcase.js';

test('"Connect your shop" in Chromium: connect an Epay shop (API URL, pid and key shown once), roll its key, delete it; every locale lays out at 1280 and 390 px, fa right to left', async (t) => {
  const app = await startBrowserApp();
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  await addWallet(owner.client, ADDRESSES[0], 'Main wallet');
  const out = mkdtempSync(join(tmpdir(), 'gatewayd-shops-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const browser = await openBrowser({ viewport: { width: 1280, height: 900 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  page.on('dialog', (d) => void (d.type() === 'confirm' ? d.accept() : d.dismiss()));
  await context.addCookies([{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const main = page.locator('main');

  await page.goto(`${app.baseUrl}/console/shops?lang=en`);
  assert.equal(await page.locator('.console-nav a[aria-current="page"]').innerText(), 'Shops');
  await main.getByLabel('Name', { exact: true }).fill('My V2Board');
  await main.getByLabel('Allow callbacks over plain http').check();
  await main.getByRole('button', { name: 'Connect a shop' }).click();
  const key = await shownSecret(main.locator('[data-done] [data-field="key"]').first(), /^[A-Za-z0-9]{32}$/);
  assert.equal(await main.locator('[data-done] [data-field="connection.api_url"]').first().innerText(), `${app.config.server.public_url}/epay/`);
  const pid = await main.locator('[data-done] [data-field="connection.pid"]').first().innerText();
  assert.match(pid, /^[0-9]{6}$/);
  await main.locator('#shops-list table').getByText('My V2Board').waitFor();
  assert.ok(await main.locator('#shops-list').getByText(pid).isVisible());
  await Promise.all([page.waitForEvent('load'), main.getByRole('link', { name: 'I have saved it' }).first().click()]);
  assert.ok(!(await page.content()).includes(key), 'the key is never shown again');

  // A new key, shown in the list itself.
  await main.getByRole('button', { name: 'New key' }).click();
  const rolled = await shownSecret(main.locator('#shops-list [data-done] [data-field="key"]').first(), /^[A-Za-z0-9]{32}$/);
  assert.notEqual(rolled, key);

  // Every locale at both widths: no overflow, no untranslated key, nothing undefined; fa and ar right to left.
  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of ['en', 'fa', 'ar', 'zh', 'ru', 'es', 'fr']) {
      const res = await page.goto(`${app.baseUrl}/console/shops?lang=${lang}`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.getAttribute('html', 'dir'), lang === 'fa' || lang === 'ar' ? 'rtl' : 'ltr');
      for (const problem of await layoutProblems(page)) failures.push(`${lang} ${width}px: ${problem}`);
      const file = join(out, `shops-${lang}-${width}.png`);
      await page.screenshot({ path: file, fullPage: true });
      assert.ok(statSync(file).size > 10_000);
    }
  }
  assert.deepEqual(failures, []);
  // The navigation keeps to one line at 1280 px with the extra entry.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${app.baseUrl}/console/shops?lang=en`);
  const wrapped = await page.evaluate(
    `[...document.querySelectorAll('.console-nav a')].filter((el) => el.getClientRects().length > 1 || el.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(el).lineHeight)).map((el) => el.textContent)`,
  );
  assert.deepEqual(wrapped, []);

  // Delete: shown as deleted, with no more actions.
  await main.getByRole('button', { name: 'Delete' }).click();
  await main.locator('#shops-list .badge.cancelled').waitFor();
  assert.equal(await main.getByRole('button', { name: 'New key' }).count(), 0);
  assert.deepEqual(browser.errors, []);
});
