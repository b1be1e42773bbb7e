/**
 * The console's dispute banner in Chromium: while a chain dispute is open (chain_disputes) every
 * console page says so in the merchant's language, with its own honest text (payments held until
 * a second provider confirms, not lost; what the operator can do) instead of the generic "payments
 * down" one; in all 7 locales, right-to-left too, at 1280 and 390 px, with nothing clipped or
 * overflowing. Resolved, the banner goes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { holdDispute, resolveDispute } from '../../src/chain/chain.repo.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { layoutProblems, seedShowcase } from './showcase.js';

const LOCALES = ['en', 'es', 'fr', 'ru', 'zh', 'ar', 'fa'];

function text(lang: string, key: string): string {
  return (JSON.parse(readFileSync(new URL(`../../../locales/${lang}.json`, import.meta.url), 'utf8')) as Record<string, string>)[key]!;
}

test('dispute banner: its own text in 7 locales (rtl too), only while a dispute is open, never clipped, at 1280 and 390 px', async (t) => {
  const app = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30) });
  t.after(() => app.close());
  const showcase = await seedShowcase(app);
  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page, context } = browser;
  await context.addCookies([{ name: SESSION_COOKIE, value: showcase.owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const banner = () => page.locator('#health-banner');

  // The watcher down without a dispute: the generic banner, not the dispute text.
  app.deps.watcherStatus.state = 'degraded';
  await page.goto(`${app.baseUrl}/console?lang=en`);
  assert.match(await banner().innerText(), /^Payments are not being confirmed right now/);

  const network = app.config.network;
  await holdDispute(app.deps.db, network, { block: 61_132_092, txHash: null, reason: 'a and b disagree about block 61132092' }, app.clock.now());
  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of LOCALES) {
      for (const path of ['/console', '/console/invoices']) {
        await page.goto(`${app.baseUrl}${path}?lang=${lang}`);
        const shown = await banner().innerText();
        const expected = text(lang, 'console.health.disputed');
        const [head, tail] = expected.split('{since}');
        assert.ok(shown.startsWith(head!) && shown.endsWith(tail!), `${lang}: ${shown}`);
        assert.ok(!shown.includes(text(lang, 'console.health.down').slice(0, 20)), `${lang}: not the generic text`);
        assert.equal(await page.getAttribute('html', 'dir'), lang === 'ar' || lang === 'fa' ? 'rtl' : 'ltr');
        const box = (await page.evaluate(`(() => {
          const el = document.getElementById('health-banner');
          const r = el.getBoundingClientRect();
          return { left: r.left, right: r.right, scroll: el.scrollWidth, client: el.clientWidth, viewport: document.documentElement.clientWidth };
        })()`)) as { left: number; right: number; scroll: number; client: number; viewport: number };
        if (box.scroll > box.client || box.left < 0 || box.right > box.viewport)
          failures.push(`${lang} ${width}px ${path}: banner overflows ${JSON.stringify(box)}`);
        for (const problem of await layoutProblems(page)) failures.push(`${lang} ${width}px ${path}: ${problem}`);
      }
    }
  }
  assert.deepEqual(failures, []);

  // Resolved (the providers agree again): the dispute banner goes; with the watcher running, no banner at all.
  await resolveDispute(app.deps.db, network, 61_132_092, app.clock.now());
  app.deps.watcherStatus.state = 'running';
  app.deps.watcherStatus.lagSeconds = 10;
  await page.goto(`${app.baseUrl}/console?lang=fa`);
  assert.equal(await banner().count(), 0);
  assert.deepEqual(browser.errors, []);
});
