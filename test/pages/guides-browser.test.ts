/**
 * The instance's own guides (/guides/, rendered from docs/ at build time): every guide the index
 * lists is served, every link between guides lands on a heading that exists, the console's shops
 * page links to its guide, and in Chromium the guides read without sideways scrolling or anything
 * sticking out at 1280 and 390 px, in English and in a right-to-left page (Persian).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { layoutProblems } from './showcase.js';

const SERVED = ['shops', 'payments', 'operations', 'configuration', 'api', 'security', 'test-networks'];

test('GET /guides/ lists the guides; each is served, links between them land on existing headings; an unknown one is a 404 page', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const index = await fetch(`${app.baseUrl}/guides/`, { headers: { accept: 'text/html' } });
  assert.equal(index.status, 200);
  const html = await index.text();
  for (const name of SERVED) assert.match(html, new RegExp(`href="/guides/${name}"`), `${name} listed`);
  assert.equal((await fetch(`${app.baseUrl}/guides`, { redirect: 'manual' })).headers.get('location'), '/guides/');

  const ids = new Map<string, Set<string>>();
  const links: { from: string; to: string; anchor: string }[] = [];
  for (const name of SERVED) {
    const res = await fetch(`${app.baseUrl}/guides/${name}`, { headers: { accept: 'text/html' } });
    assert.equal(res.status, 200, name);
    const page = await res.text();
    assert.match(page, /<article class="card guide" lang="en" dir="ltr">\s*<h1 id=/, `${name} starts with its title`);
    ids.set(name, new Set([...page.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!)));
    for (const m of page.matchAll(/href="(?:\/guides\/([a-z-]+))?#([^"]+)"/g)) links.push({ from: name, to: m[1] ?? name, anchor: m[2]! });
    assert.doesNotMatch(page, /href="[^"#/:][^"]*\.md/, `${name}: no link to a repository file`);
  }
  assert.ok(links.length > 50, `${links.length} links between guides`);
  const broken = links.filter((l) => !ids.get(l.to)?.has(l.anchor)).map((l) => `${l.from} -> ${l.to}#${l.anchor}`);
  assert.deepEqual(broken, []);

  const missing = await fetch(`${app.baseUrl}/guides/architecture`, { headers: { accept: 'text/html' } });
  assert.equal(missing.status, 404);
  assert.match(await missing.text(), /There is no guide by that name/);
});

test('the guides in Chromium at 1280 and 390 px, English and Persian: no sideways scrolling, nothing sticks out; the console links the shops guide', async (t) => {
  const app = await startBrowserApp();
  t.after(() => app.close());
  const merchant = await signedInMerchant(app);
  const out = process.env.KEEP_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'gatewayd-guides-'));
  if (!process.env.KEEP_SCREENSHOTS) t.after(() => rmSync(out, { recursive: true, force: true }));
  const browser = await openBrowser();
  t.after(() => browser.close());
  const { page, context } = browser;
  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of ['en', 'fa']) {
      for (const path of ['/guides/', '/guides/shops', '/guides/operations']) {
        const res = await page.goto(`${app.baseUrl}${path}?lang=${lang}`);
        assert.equal(res?.status(), 200, path);
        if (lang === 'fa') assert.equal(await page.getAttribute('html', 'dir'), 'rtl');
        // The guide itself is English prose in a left-to-right article, where a date cannot be
        // reordered, and operations documents a metric whose value is the text "NaN" and answers
        // whose value is JSON's null.
        const prose = path !== '/guides/' ? /^not an isolated run: |^shows "(NaN|null)"$/ : /^$/;
        for (const problem of await layoutProblems(page)) if (!prose.test(problem)) failures.push(`${path} ${lang} ${width}px: ${problem}`);
        await page.screenshot({ path: join(out, `${path.replace(/\W+/g, '_')}-${lang}-${width}.png`) });
      }
    }
  }
  assert.deepEqual(failures, []);
  await context.addCookies([{ name: SESSION_COOKIE, value: merchant.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  await page.goto(`${app.baseUrl}/console/shops?lang=en`);
  await page.getByRole('link', { name: 'Shops guide' }).click();
  await page.waitForURL(`${app.baseUrl}/guides/shops`);
  assert.match((await page.textContent('h1')) ?? '', /Shops: the Epay and Epusdt protocols/);
});
