import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cookieName } from '../../src/http/auth.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser } from '../helpers/browser.js';
import { connect, payThroughCheckout, sendCallbacks, smallOrder, startShopWorld } from '../shops/support.js';
import { layoutProblems } from './showcase.js';

test("Callbacks to shops in Chromium: each callback's attempts open from its count; every locale lays out at 1280 and 390 px, fa right to left", async (t) => {
  const w = await startShopWorld();
  t.after(() => w.close());
  const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
  const made = await smallOrder(w, conn, 'CB-1');
  // Two refusals: a busy shop asking for ten minutes, then a long answer that must wrap.
  const replies = [
    { status: 503, body: 'busy', headers: { 'retry-after': '600' } },
    { status: 200, body: `unsuccessful, bad signature ${'x'.repeat(70)}` },
  ];
  w.standIn.reply = () => replies.shift() ?? { status: 200, body: 'success' };
  await payThroughCheckout(w, made.payurl as string);
  await sendCallbacks(w);
  w.h.t.clock.advance(10 * 60_000);
  await sendCallbacks(w);

  const browser = await openBrowser({ viewport: { width: 1280, height: 900 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  const name = cookieName(w.h.t.config, SESSION_COOKIE);
  // The shop world's public URL is https (a __Host- cookie): loopback counts as secure for Chromium.
  await context.addCookies([{ name, value: w.merchant.client.cookies.get(name)!, url: w.h.t.baseUrl, secure: true }]);

  await page.goto(`${w.h.t.baseUrl}/console/shops?lang=en`);
  const row = page.locator('main tr', { hasText: 'CB-1' });
  await row.locator('summary', { hasText: '2' }).click();
  const attempts = row.locator('details ol li');
  assert.equal(await attempts.count(), 2);
  assert.match(await attempts.nth(0).innerText(), /HTTP 503 · \d+ ms · Retry-After 600 s[\s\S]*"busy", not "success"/);
  assert.match(await attempts.nth(1).innerText(), /HTTP 200 · \d+ ms[\s\S]*unsuccessful, bad signature/);
  assert.equal(
    await row.locator('form').getAttribute('data-api'),
    `/api/v1/shop-connections/${conn.id}/callbacks/${(await w.merchant.client.get(`/shop-connections/${conn.id}/callbacks`)).body.callbacks[0].id}/retry`,
  );

  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of ['en', 'fa', 'ar', 'zh', 'ru', 'es', 'fr']) {
      const res = await page.goto(`${w.h.t.baseUrl}/console/shops?lang=${lang}`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.getAttribute('html', 'dir'), lang === 'fa' || lang === 'ar' ? 'rtl' : 'ltr');
      assert.ok((await page.locator('main details summary').count()) > 0, `${lang} ${width}: ${page.url()} ${(await page.content()).slice(0, 3000)}`);
      await page.locator('main details summary').first().click();
      assert.ok(await page.locator('main details ol li').first().isVisible());
      for (const problem of await layoutProblems(page)) failures.push(`${lang} ${width}px: ${problem}`);
    }
  }
  assert.deepEqual(failures, []);
  assert.deepEqual(browser.errors, []);
});
