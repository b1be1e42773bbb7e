import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { layoutProblems, seedShowcase, showcasePages } from './showcase.js';

test('console layout in Chromium at 1280 and 390 px in en, fa, ar and zh: no sideways scrolling, clipped text, cut address, unisolated date or amount, label on the wrong side, untranslated key, "undefined" or "null"', async (t) => {
  const app = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30) });
  t.after(() => app.close());
  const showcase = await seedShowcase(app);
  const out = mkdtempSync(join(tmpdir(), 'gatewayd-layout-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page, context } = browser;
  await context.addCookies([{ name: SESSION_COOKIE, value: showcase.owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const failures: string[] = [];
  let shots = 0;
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of ['en', 'fa', 'ar', 'zh']) {
      for (const p of showcasePages(showcase)) {
        const res = await page.goto(`${app.baseUrl}${p.path}?lang=${lang}`);
        assert.equal(res?.status(), p.name === 'not-found' ? 404 : 200, `${p.path} ${lang}`);
        assert.equal(await page.getAttribute('html', 'dir'), lang === 'fa' || lang === 'ar' ? 'rtl' : 'ltr');
        for (const problem of await layoutProblems(page)) failures.push(`${p.name} ${lang} ${width}px: ${problem}`);
        // The checkout's address is in its groups (seven of 4 and a last of 6), so the check above has lines to compare.
        if (p.name === 'checkout')
          assert.deepEqual(
            await page
              .locator('#address .g')
              .allInnerTexts()
              .then((g) => g.map((x) => x.length)),
            [4, 4, 4, 4, 4, 4, 4, 6],
          );
        await page.screenshot({ path: join(out, `${p.name}-${lang}-${width}.png`), fullPage: true });
        shots++;
      }
    }
  }
  assert.deepEqual(failures, []);
  assert.equal(shots, showcasePages(showcase).length * 4 * 2);
  // At 1280 px the console uses the width: the content column is wider than the old 690 px, and the
  // navigation and table headers stay on one line.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${app.baseUrl}/console/webhooks?lang=en`);
  const mainWidth = await page.evaluate('document.querySelector("main").getBoundingClientRect().width');
  assert.ok(Number(mainWidth) >= 1100, `main is ${String(mainWidth)} px wide`);
  for (const selector of ['.console-nav a', 'th']) {
    const wrapped = await page.evaluate(
      `[...document.querySelectorAll(${JSON.stringify(selector)})].filter((el) => el.getClientRects().length > 1 || el.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(el).lineHeight)).map((el) => el.textContent)`,
    );
    assert.deepEqual(wrapped, [], `${selector} wraps`);
  }
  // Amounts never break inside a table cell.
  await page.goto(`${app.baseUrl}/console/invoices?lang=fa`);
  const broken = await page.evaluate(
    `[...document.querySelectorAll('td.num, td .num')].filter((el) => el.getClientRects().length > 1 || el.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(el).lineHeight)).map((el) => el.textContent)`,
  );
  assert.deepEqual(broken, []);
  // The 404 page's own status is the only failed response (Chromium logs it twice).
  assert.deepEqual(
    browser.errors.filter((e) => !e.startsWith('404 ') && !e.includes('status of 404')),
    [],
  );
});

test('the layout check itself catches overflow, keys and "undefined" (it would fail on a broken page)', async (t) => {
  const browser = await openBrowser({ viewport: { width: 390, height: 800 } });
  t.after(() => browser.close());
  await browser.page.setContent('<html><body><p>console.nav.overview</p><div style="width:600px">wide</div><h1>undefined</h1></body></html>');
  const problems = await layoutProblems(browser.page);
  assert.ok(
    problems.some((p) => p.startsWith('page scrolls sideways')),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => p === 'untranslated key: console.nav.overview'),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => p === 'shows "undefined"'),
    problems.join('\n'),
  );
});

test('the layout check catches what right-to-left and small screens break (it would fail on such a page)', async (t) => {
  const browser = await openBrowser({ viewport: { width: 390, height: 800 } });
  t.after(() => browser.close());
  const css =
    '<style>code.cut{display:inline-block;max-width:6rem;overflow:hidden;text-overflow:ellipsis;white-space:nowrap} .facts{display:grid;grid-template-columns:auto 1fr} .ltr{direction:ltr} td::before{content:attr(data-th)}</style>';
  await browser.page.setContent(
    `<html dir="rtl"><head>${css}</head><body>` +
      '<p><code class="cut">TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7</code></p>' +
      '<p>UTC 08:41 2026-11-26 ساخته شد</p>' +
      '<dl class="facts"><dt class="ltr" style="order:2">مبلغ</dt><dd style="order:1">12.500001</dd></dl>' +
      '<table><tr><td data-th="مبلغ" class="ltr"><bdi>1.000000</bdi></td></tr></table>' +
      '<input style="width:5rem" placeholder="https://shop.example/gateway/webhook">' +
      '<p style="width:10ch;font-family:monospace;font-size:16px;word-break:break-all;direction:ltr"><code style="font-size:inherit"><span class="g">TLa2</span><wbr><span class="g">f6VP</span><wbr><span class="g">qDgR</span><wbr><span class="g">E67v</span><wbr><span class="g">1736</span><wbr><span class="g">s7bJ</span><wbr><span class="g">8Ray</span><wbr><span class="g">5wYjU7</span></code></p>' +
      '</body></html>',
  );
  const problems = await layoutProblems(browser.page);
  for (const expected of [
    'address cut: TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
    'not an isolated run: "2026-11-26" in "UTC 08:41 2026-11-26 ساخته شد"',
    'label on the wrong side: مبلغ',
    'placeholder clipped: https://shop.example/gateway/webhook',
    'broken inside a group: line "TLa2f6VPqD" of TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
  ]) {
    assert.ok(problems.includes(expected), `${expected}\n in: ${problems.join('\n')}`);
  }
});
