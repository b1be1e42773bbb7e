import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { layoutProblems, seedShowcase, seedWrongPayments } from './showcase.js';

/** Text of the resolve menus and the payer's notices that does not fit its box (cut, or an ellipsis). */
const CLIPPED = `(() => {
  const out = [];
  for (const el of document.querySelectorAll('form.resolve *, ul.choices *, #received, .result p')) {
    // Transaction hashes and ids are cut on purpose (whole in their title, link and copy button).
    if (el.getClientRects().length === 0 || el.closest('code.hash, code.id')) continue;
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') out.push('clipped: ' + el.tagName.toLowerCase() + ' "' + el.textContent.trim().slice(0, 40) + '"');
  }
  if (document.querySelector('form.resolve select')) out.push('a resolve menu is a <select> (its options clip)');
  return out;
})()`;

test('wrong payments in Chromium (en, fa, zh at 1280 and 390 px): Transfers page, an invoice with a partial payment, the payer after a partial payment and after a manual resolve; nothing clipped', async (t) => {
  const app = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30) });
  t.after(() => app.close());
  const showcase = await seedShowcase(app);
  // A fee-deducted payment of order-1042 (42.500137 less 1 USDT) and 19.5 USDT sent for order-1043.
  const { wrong } = await seedWrongPayments(app, showcase);
  const resolved = await showcase.owner.client.post(`/invoices/${wrong.id}/resolve`, { tx_hash: 'd4'.repeat(32), log_index: 1 });
  assert.equal(resolved.status, 200, resolved.text);

  const out = mkdtempSync(join(tmpdir(), 'gatewayd-wrongpay-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page, context } = browser;
  await context.addCookies([{ name: SESSION_COOKIE, value: showcase.owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const pages = [
    { name: 'transfers', path: '/console/transfers', expect: /41\.500137/ },
    { name: 'invoice-partial', path: `/console/invoices/${showcase.pendingId}`, expect: /41\.500137/ },
    { name: 'pay-partial', path: `/pay/${showcase.pendingToken}`, expect: /41\.500\u202F137/ },
    { name: 'pay-resolved', path: `/pay/${wrong.checkoutToken}`, expect: /19\.500000/ },
  ];
  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of ['en', 'fa', 'zh']) {
      for (const p of pages) {
        const res = await page.goto(`${app.baseUrl}${p.path}?lang=${lang}`);
        assert.equal(res?.status(), 200, `${p.path} ${lang}`);
        assert.match(await page.innerText('body'), p.expect, `${p.name} ${lang}`);
        for (const problem of [...(await layoutProblems(page)), ...((await page.evaluate(CLIPPED)) as string[])])
          failures.push(`${p.name} ${lang} ${width}px: ${problem}`);
        await page.screenshot({ path: join(out, `${p.name}-${lang}-${width}.png`), fullPage: true });
      }
    }
  }
  assert.deepEqual(failures, []);
  // In English, the exact words.
  await page.goto(`${app.baseUrl}/pay/${showcase.pendingToken}?lang=en`);
  assert.match(await page.innerText('#received'), /Received so far\s+41\.500\u202F137 USDT\s+of 42\.500137 USDT: 1\.000000 USDT short/);
  assert.match(await page.innerText('#received-do'), /^Do not pay again\./);
  await page.goto(`${app.baseUrl}/pay/${wrong.checkoutToken}?lang=en`);
  assert.match(await page.innerText('#screen-confirmed'), /Payment accepted[\s\S]*received 19\.500000 USDT for this invoice of 20\.000011 USDT/);
  // The from → to arrow points the way the page reads.
  const arrow = () => page.evaluate("getComputedStyle(document.querySelector('.arrow')).transform");
  await page.goto(`${app.baseUrl}/console/transfers?lang=fa`);
  assert.equal(await arrow(), 'matrix(-1, 0, 0, 1, 0, 0)', 'mirrored right to left');
  await page.goto(`${app.baseUrl}/console/transfers?lang=en`);
  assert.equal(await arrow(), 'none');
  assert.equal(await page.locator('form.resolve input[type="radio"]:checked').count(), 0, 'nothing preselected');
});
