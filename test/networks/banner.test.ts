/**
 * "Test network: no real money" on a test instance, in the visitor's language: every checkout,
 * console and public page, and every mail (subject and first line). Seen in Chromium too, in a
 * left-to-right and a right-to-left locale, without overflow. A mainnet instance shows none of it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { LOCALES, translate } from '../../src/lib/i18n.js';
import { startTestApp } from '../helpers/app.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { startSmtp } from '../helpers/smtp.js';
import { createInvoice, shop } from '../helpers/shop.js';

const NILE = { tron: { network: 'nile' } };

/** The banner as the page prints it (the layout escapes text; the translations hold no markup characters). */
const banner = (locale: (typeof LOCALES)[number], network: string) => translate(locale, 'page.layout.test_network', { network });

test('every page of a test instance carries the banner in each of the 7 locales; mainnet pages never do', async () => {
  const nile = await startTestApp({ config: NILE });
  const mainnet = await startTestApp();
  try {
    const s = await shop(nile);
    const inv = await createInvoice(s.client, { amount: '10', wallet_id: s.walletId });
    const token = inv.body.invoice.checkout_token as string;
    for (const locale of LOCALES) {
      const text = banner(locale, 'tron-nile');
      assert.ok(!text.includes('{') && !text.includes('page.layout'), `${locale}: translated`);
      if (locale !== 'en') assert.notEqual(text, banner('en', 'tron-nile'), `${locale}: not an English copy`);
      // Signed in for the console; a visitor without a session for the checkout and the public pages.
      const visitor = nile.client();
      const pages: Array<[string, typeof visitor]> = [
        [`/pay/${token}`, visitor],
        ['/pay/not-a-token', visitor],
        ['/login', visitor],
        ['/register', visitor],
        ['/support/contact', visitor],
        ['/console', s.client],
        ['/console/invoices', s.client],
        [`/console/invoices/${inv.body.invoice.id}`, s.client],
      ];
      for (const [path, client] of pages) {
        const res = await client.get(`${nile.baseUrl}${path}?lang=${locale}`);
        assert.ok(res.status === 200 || res.status === 404, `${locale} ${path}: ${res.status}`);
        assert.ok(res.text.includes(`data-test-network="tron-nile"`), `${locale} ${path}: banner`);
        assert.ok(res.text.includes(text), `${locale} ${path}: in ${locale}`);
        assert.ok(!res.text.includes('undefined'), `${locale} ${path}: no "undefined"`);
      }
    }
    // The checkout names the chain to pay on.
    const checkout = await nile.client().get(`${nile.baseUrl}/pay/${token}`);
    // The address is shown in groups (spans with break opportunities): read the text without markup.
    const shown = checkout.text.replace(/<[^>]+>/g, '');
    assert.ok(shown.includes('TRON Nile testnet (TRC20)') && shown.includes('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'));
    const m = await shop(mainnet);
    for (const [path, client] of [
      ['/console', m.client],
      ['/login', mainnet.client()],
    ] as const) {
      const res = await client.get(`${mainnet.baseUrl}${path}`);
      assert.equal(res.status, 200);
      assert.ok(!res.text.includes('data-test-network') && !res.text.includes('Test network'), `mainnet ${path}: no banner`);
    }
  } finally {
    await nile.close();
    await mainnet.close();
  }
});

test("every mail of a test instance says so in the recipient's language: subject prefix, first line, HTML banner", async () => {
  const smtp = await startSmtp();
  const devnet = await startTestApp({ config: { tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' }, email: smtp.email } });
  const mainnet = await startTestApp({ config: { email: smtp.email } });
  try {
    for (const [i, locale] of (['fr', 'ar'] as const).entries()) {
      const email = `tester${i}@example.com`;
      const res = await devnet.client().post('/auth/register', { email, password: 'correct-horse-battery', locale });
      assert.equal(res.status, 201, res.text);
      const mail = await smtp.waitFor((m) => m.to.includes(email));
      const line = translate(locale, 'email.common.test_network', { network: 'tron-devnet' });
      assert.ok(mail.subject.startsWith(`${translate(locale, 'email.common.test_subject')} `), mail.subject);
      assert.ok(mail.subject.endsWith(translate(locale, 'email.verify.subject')), 'the usual subject follows');
      assert.equal(mail.text.split(/\r?\n/)[0], line);
      assert.ok(mail.html.includes(line) && mail.html.includes(`dir="${locale === 'ar' ? 'rtl' : 'ltr'}"`), 'HTML banner, in the reading direction');
      assert.ok(mail.html.indexOf(line) < mail.html.indexOf('<table'), 'above the content');
    }
    const res = await mainnet.client().post('/auth/register', { email: 'real@example.com', password: 'correct-horse-battery' });
    assert.equal(res.status, 201, res.text);
    const real = await smtp.waitFor((m) => m.to.includes('real@example.com'));
    assert.equal(real.subject, translate('en', 'email.verify.subject'));
    assert.ok(!real.text.includes('Test network') && !real.html.includes('Test network'));
  } finally {
    await devnet.close();
    await mainnet.close();
    await smtp.close();
  }
});

test('the banner in Chromium: checkout in Persian (right to left) and console in English, on a phone, without overflow', async (t) => {
  const app = await startBrowserApp({ config: NILE });
  t.after(() => app.close());
  const s = await shop(app, 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx', 'Blue Lantern Books');
  const inv = await createInvoice(s.client, { amount: '42.5', wallet_id: s.walletId, description: 'Order #1042' });
  const browser = await openBrowser({ viewport: { width: 360, height: 780 } });
  t.after(() => browser.close());
  const { page } = browser;
  // Screenshots beside the test's database (npm run screenshots makes the ones in the docs).
  const out = app.dir;

  const check = async (locale: (typeof LOCALES)[number], dir: 'rtl' | 'ltr') => {
    const note = page.locator('p.test-network');
    assert.ok(await note.isVisible(), `${locale}: visible`);
    assert.equal(await note.innerText(), banner(locale, 'tron-nile'));
    assert.equal(await page.getAttribute('html', 'dir'), dir);
    const box = (await note.boundingBox())!;
    assert.ok(box.y < 5 && box.x >= 0 && box.x + box.width <= 360 + 0.5, `${locale}: at the top, inside the screen`);
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.equal(overflow, 0, `${locale}: no horizontal overflow`);
    const body = await page.locator('body').innerText();
    assert.ok(!body.includes('undefined') && !/\b(page|console|checkout)\.[a-z_]+\.[a-z_]+/.test(body), `${locale}: no "undefined", no untranslated key`);
  };

  await page.goto(`${app.baseUrl}/pay/${inv.body.invoice.checkout_token}?lang=fa`);
  await check('fa', 'rtl');
  await page.screenshot({ path: join(out, 'checkout-testnet-fa.png'), fullPage: true });

  await browser.context.addCookies([{ name: SESSION_COOKIE, value: s.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  await page.goto(`${app.baseUrl}/console?lang=en`);
  await check('en', 'ltr');
  await page.screenshot({ path: join(out, 'console-testnet-en.png'), fullPage: true });
  assert.ok(statSync(join(out, 'checkout-testnet-fa.png')).size > 10_000 && statSync(join(out, 'console-testnet-en.png')).size > 10_000);
  assert.deepEqual(browser.errors, [], 'no console errors (CSP included)');
});
