import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { insertInvoice, insertWallet, WALLET_ADDRESS } from './rows.js';
import { LOCALES } from '../../src/pages/i18n.js';
import { readAssetText } from '../../src/lib/assets.js';
import { ERROR_CODES } from '../../src/lib/errors.js';
import { parseAmount } from '../../src/lib/amounts.js';
import { MAX_INVOICE_AMOUNT } from '../../src/invoices/invoices.schemas.js';
import { FORM_AMOUNT_PATTERN } from '../../src/pages/console.pages.js';
import { URL_REJECTED_REASONS } from '../../src/webhooks/url-policy.js';
import fc from 'fast-check';

async function html(baseUrl: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}${path}`, { headers, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

test('all seven catalogues have the same keys (plural messages with the forms their language has), every value a non-empty string with the same placeholders', () => {
  const en = JSON.parse(readAssetText('locales/en.json')) as Record<string, string>;
  // A plural message is stored as <key>.<category>, one per category of Intl.PluralRules in that language.
  // (English has a .one and an .other for each; "page.support.category.other" alone is no plural.)
  const pluralBases = Object.keys(en)
    .filter((k) => k.endsWith('.one') && en[`${k.slice(0, -'.one'.length)}.other`] !== undefined)
    .map((k) => k.slice(0, -'.one'.length));
  assert.ok(pluralBases.length >= 3, 'the count-bearing console messages are plural');
  const base = (key: string) => pluralBases.find((b) => key.startsWith(`${b}.`)) ?? key;
  const expected = (locale: string) =>
    [
      ...new Set(
        Object.keys(en).flatMap((k) => (base(k) === k ? [k] : new Intl.PluralRules(locale).resolvedOptions().pluralCategories.map((c) => `${base(k)}.${c}`))),
      ),
    ].sort();
  for (const locale of LOCALES) {
    const cat = JSON.parse(readAssetText(`locales/${locale}.json`)) as Record<string, string>;
    assert.deepEqual(Object.keys(cat).sort(), expected(locale), `locales/${locale}.json keys`);
    for (const [key, value] of Object.entries(cat)) {
      assert.ok(typeof value === 'string' && value.trim() !== '', `${locale} ${key} is empty`);
      assert.ok(!value.includes('(s)'), `${locale} ${key}: a plural form, not "(s)"`);
      const params = (s: string) => (s.match(/\{[A-Za-z0-9_]+\}/g) ?? []).sort().join();
      const reference = base(key) === key ? en[key]! : en[`${base(key)}.other`]!;
      assert.equal(params(value), params(reference), `${locale} ${key} placeholders`);
    }
  }
});

test('language: ?lang= wins and is remembered in a cookie, then the cookie, then Accept-Language; fa and ar are rtl', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const fr = await html(app.baseUrl, '/login', { 'accept-language': 'de-DE, fr;q=0.8, en;q=0.5' });
  assert.match(fr.text, /<html lang="fr" dir="ltr">/);
  const fa = await html(app.baseUrl, '/login?lang=fa', { 'accept-language': 'fr' });
  assert.match(fa.text, /<html lang="fa" dir="rtl">/);
  assert.match(fa.headers.get('set-cookie') ?? '', /gw_lang=fa;.*SameSite=Lax/i);
  const cookie = await html(app.baseUrl, '/login', { cookie: 'gw_lang=ar', 'accept-language': 'fr' });
  assert.match(cookie.text, /<html lang="ar" dir="rtl">/);
  const unknown = await html(app.baseUrl, '/login?lang=xx', { 'accept-language': 'zh-CN,zh;q=0.9' });
  assert.match(unknown.text, /<html lang="zh" dir="ltr">/);
  assert.equal(unknown.headers.get('set-cookie'), null);
  // The switcher links every language on the current path.
  for (const l of LOCALES) assert.ok(fa.text.includes(`href="/login?lang=${l}"`), l);
});

test('checkout page: everything a payer needs, a server-rendered QR, strict CSP, no-store; unknown token is a friendly 404', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const { merchant } = await signedInMerchant(app, { name: 'Shop <b>bold</b> "q"' });
  const walletId = await insertWallet(app.deps.db, merchant.id, app.clock.now());
  const inv = await insertInvoice(app.deps.db, {
    merchantId: merchant.id,
    walletId,
    now: app.clock.now(),
    base: 12_500_000n,
    adjustment: 37n,
    description: '<script>alert(1)</script><img src=x onerror=alert(2)>',
    expiresInMinutes: 20,
  });
  app.clock.advance(5 * 60_000 + 30_000);
  const page = await html(app.baseUrl, `/pay/${inv.checkoutToken}`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.equal(page.headers.get('cache-control'), 'no-store');
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self';/);
  assert.doesNotMatch(csp, /unsafe-inline|https:/);
  assert.ok(page.text.includes('12.500037'), 'payable amount');
  assert.ok(page.text.includes('12.500000') && page.text.includes('0.000037'), 'base and adjustment disclosed');
  // The address and the contract are shown in groups (a span each): whole once the markup is taken away.
  const shown = page.text.replace(/<[^>]+>/g, '');
  assert.ok(shown.includes(WALLET_ADDRESS));
  assert.ok(shown.includes('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'));
  assert.ok(page.text.includes('TRON (TRC20)'));
  assert.match(page.text, /<svg[^>]*viewBox/);
  assert.ok(page.text.includes('>14:30<'), 'countdown from the server clock: 20 min - 5 min 30 s');
  assert.match(page.text, /<noscript><meta http-equiv="refresh" content="15"><\/noscript>/);
  assert.ok(page.text.includes('the extra goes to the merchant') || page.text.includes('The extra goes to the merchant'));
  assert.ok(!page.text.includes('<script>alert(1)'), 'description escaped');
  assert.ok(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;'));
  assert.ok(page.text.includes('Shop &lt;b&gt;bold&lt;/b&gt; &quot;q&quot;'));
  // Merchant-only fields never reach the payer.
  assert.ok(!page.text.includes(walletId) && !page.text.includes('order-'));
  // The request log never holds the capability token.
  assert.ok(!app.logText().includes(inv.checkoutToken));

  const missing = await html(app.baseUrl, '/pay/doesnotexist_abcdefghijkl');
  assert.equal(missing.status, 404);
  assert.match(missing.text, /Payment link not found/);
  const malformed = await html(app.baseUrl, '/pay/%3Cscript%3E');
  assert.equal(malformed.status, 404);
});

test('checkout page shows paid, review and expired screens from the server state', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const { merchant } = await signedInMerchant(app);
  const walletId = await insertWallet(app.deps.db, merchant.id, app.clock.now());
  const hash = 'ab'.repeat(32);
  const now = app.clock.now();
  const paid = await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now, status: 'confirmed', txHash: hash, adjustment: 2n });
  const review = await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now, status: 'review', txHash: hash, adjustment: 3n });
  const reviewUnpaid = await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now, status: 'review', adjustment: 4n });
  const expired = await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now, status: 'expired', adjustment: 5n });
  const visible = (text: string) => [...text.matchAll(/<section id="screen-(\w+)"[^>]*>/g)].filter((m) => !m[0].includes(' hidden')).map((m) => m[1]);
  const p = await html(app.baseUrl, `/pay/${paid.checkoutToken}`);
  assert.deepEqual(visible(p.text), ['confirmed']);
  assert.ok(p.text.includes(hash));
  assert.doesNotMatch(p.text, /http-equiv="refresh"/, 'a paid invoice stops refreshing');
  assert.deepEqual(visible((await html(app.baseUrl, `/pay/${review.checkoutToken}`)).text), ['review']);
  assert.deepEqual(visible((await html(app.baseUrl, `/pay/${reviewUnpaid.checkoutToken}`)).text), ['pay']);
  assert.deepEqual(visible((await html(app.baseUrl, `/pay/${expired.checkoutToken}`)).text), ['expired']);
  // Past expiry but not yet settled by the watcher: still payable details, with the notice shown.
  const late = await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now, adjustment: 6n, expiresInMinutes: 1 });
  app.clock.advance(2 * 60_000);
  const lateText = (await html(app.baseUrl, `/pay/${late.checkoutToken}`)).text;
  assert.deepEqual(visible(lateText), ['pay']);
  assert.match(lateText, /<p id="overdue" class="notice warn" role="status">/);
  assert.ok(lateText.includes('>00:00<'));
});

test('static files carry a content hash and long caching; unknown ones are 404', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const page = await html(app.baseUrl, '/login');
  const href = /href="(\/static\/app\.css\?v=[0-9a-f]{10})"/.exec(page.text)?.[1];
  assert.ok(href);
  const css = await fetch(`${app.baseUrl}${href}`);
  assert.equal(css.status, 200);
  assert.match(css.headers.get('content-type') ?? '', /text\/css/);
  assert.match(css.headers.get('cache-control') ?? '', /immutable/);
  assert.equal((await fetch(`${app.baseUrl}/static/nope.js`)).status, 404);
  assert.equal((await fetch(`${app.baseUrl}/static/..%2Fpackage.json`)).status, 404);
});

test('sign-in pages: captcha and Google scripts appear only when configured, with a CSP that allows exactly them', async (t) => {
  const plain = await startTestApp();
  t.after(() => plain.close());
  const p = await html(plain.baseUrl, '/login');
  assert.doesNotMatch(p.text, /challenges\.cloudflare\.com|accounts\.google\.com/);
  assert.doesNotMatch(p.headers.get('content-security-policy') ?? '', /https:/);

  const configured = await startTestApp({
    config: { captcha: { provider: 'turnstile', site_key: 'site-key-1', secret_key: 's' }, google: { client_id: 'client-1.apps.example' } },
  });
  t.after(() => configured.close());
  const login = await html(configured.baseUrl, '/login');
  assert.match(login.text, /<script src="https:\/\/challenges\.cloudflare\.com\/turnstile\/v0\/api\.js" async defer>/);
  assert.match(login.text, /data-sitekey="site-key-1"/);
  assert.match(login.text, /<script src="https:\/\/accounts\.google\.com\/gsi\/client" async defer>/);
  assert.match(login.text, /data-client_id="client-1\.apps\.example"/);
  const csp = login.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'self' https:\/\/challenges\.cloudflare\.com https:\/\/accounts\.google\.com/);
  // The reset page needs neither.
  const reset = await html(configured.baseUrl, '/reset');
  assert.doesNotMatch(reset.text, /challenges\.cloudflare\.com|accounts\.google\.com/);
  assert.doesNotMatch(reset.headers.get('content-security-policy') ?? '', /https:/);
});

test('console needs a session (redirect to sign-in and back); sign-out goes through the Origin-checked API', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const anon = await html(app.baseUrl, '/console');
  assert.equal(anon.status, 303);
  assert.equal(anon.headers.get('location'), '/login?next=%2Fconsole');
  const { client } = await signedInMerchant(app, { name: '<i>Acme</i>' });
  const cookie = `gw_session=${client.cookies.get('gw_session')}`;
  const page = await html(app.baseUrl, '/console', { cookie });
  assert.equal(page.status, 200);
  assert.ok(page.text.includes('&lt;i&gt;Acme&lt;/i&gt;'));
  assert.ok(!page.text.includes('id="name-default"'), 'a name of its own is not asked for');
  // Sign-out is a form sent to the API, so the API's Origin rule guards it: a cross-site post fails.
  assert.match(page.text, /<form data-api="\/api\/v1\/auth\/logout" data-then="signout"/);
  const foreign = await fetch(`${app.baseUrl}/api/v1/auth/logout`, { method: 'POST', headers: { cookie, origin: 'https://evil.example' } });
  assert.equal(foreign.status, 403);
  assert.equal((await html(app.baseUrl, '/console', { cookie })).status, 200);
  const out = await fetch(`${app.baseUrl}/api/v1/auth/logout`, { method: 'POST', headers: { cookie, origin: app.config.publicOrigin } });
  assert.equal(out.status, 200);
  assert.equal((await html(app.baseUrl, '/console', { cookie })).status, 303);
});

test('unknown paths: browsers get the HTML 404 page, API clients the JSON envelope', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const browser = await html(app.baseUrl, '/no-such-page', { accept: 'text/html,application/xhtml+xml' });
  assert.equal(browser.status, 404);
  assert.match(browser.headers.get('content-type') ?? '', /text\/html/);
  assert.match(browser.text, /Page not found/);
  const consolePath = await html(app.baseUrl, '/console/no-such-page', { accept: 'text/html' });
  assert.equal(consolePath.status, 404);
  assert.match(consolePath.text, /href="\/console"/);
  const api = await html(app.baseUrl, '/api/v1/no-such-thing', { accept: 'text/html' });
  assert.equal(api.status, 404);
  assert.match(api.headers.get('content-type') ?? '', /json/);
  const plain = await html(app.baseUrl, '/no-such-page');
  assert.equal(plain.status, 404);
  assert.match(plain.headers.get('content-type') ?? '', /json/);
});

/** Every link, script, stylesheet and form target the page generates. */
function generatedLinks(page: string): string[] {
  return [...page.matchAll(/\s(?:href|src|action)="([^"]*)"/g)].map((m) => m[1]!.replace(/&#39;|&amp;/g, (e) => (e === '&amp;' ? '&' : "'")));
}

test('attack: a request for //evil.example/x never makes the gateway print an off-site link (404 page, language switcher)', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  for (const path of ['//evil.example/x', '///evil.example/x', '/\\evil.example/x', '//evil.example/x?lang=fa&next=//evil.example']) {
    const page = await html(app.baseUrl, path, { accept: 'text/html' });
    assert.equal(page.status, 404, path);
    // The page has a heading: never "undefined".
    assert.match(page.text, /<h1>Page not found<\/h1>|<h1>[^<]+<\/h1>/);
    assert.doesNotMatch(page.text, /undefined/);
    const links = generatedLinks(page.text);
    assert.ok(links.length > 5, 'the page has its switcher and footer links');
    for (const link of links.filter((l) => !l.startsWith('#'))) {
      // Path-absolute on our own origin: one slash, then anything but another slash or a backslash.
      assert.match(link, /^\/(?![/\\])/, `${path}: ${link}`);
      assert.ok(new URL(link, app.baseUrl).origin === new URL(app.baseUrl).origin, `${path}: ${link} stays on our origin`);
    }
    assert.ok(
      links.some((l) => l.startsWith('/evil.example/x?') && l.includes('lang=en')),
      `${path}: the switcher keeps the path, made local`,
    );
  }
});

test('every API error code has a message in every locale, so no page answers a 4xx with a generic text', () => {
  for (const locale of LOCALES) {
    const cat = JSON.parse(readAssetText(`locales/${locale}.json`)) as Record<string, string>;
    for (const code of ERROR_CODES) assert.ok(cat[`page.error.${code}`], `${locale}: page.error.${code}`);
    for (const reason of URL_REJECTED_REASONS) assert.ok(cat[`page.error.webhook.${reason}`], `${locale}: page.error.webhook.${reason}`);
  }
});

test('the new-invoice form pattern accepts exactly the amounts the API accepts', () => {
  const form = new RegExp(`^(?:${FORM_AMOUNT_PATTERN})$`, 'v');
  const api = (s: string) => {
    const micro = parseAmount(s);
    return micro !== undefined && micro >= 1n && micro <= MAX_INVOICE_AMOUNT;
  };
  const fixed = [
    '0',
    '0.0',
    '0.000000',
    '0.000001',
    '0.1',
    '1',
    '999999999.999999',
    '1000000000',
    '1000000000.0',
    '1000000000.000000',
    '1000000000.000001',
    '1000000001',
    '01',
    '1.',
    '.5',
    '1.1234567',
    '12',
    ' 1',
    '1e3',
  ];
  for (const s of fixed) assert.equal(form.test(s), api(s), s);
  fc.assert(
    fc.property(fc.stringMatching(/^[0-9]{1,11}(\.[0-9]{0,7})?$/), (s) => form.test(s) === api(s)),
    { numRuns: 5000 },
  );
});

test('registration without email configured says so and shows the command that works, in the visitor language', async (t) => {
  const off = await startTestApp();
  t.after(() => off.close());
  const page = await html(off.baseUrl, '/register?lang=fr');
  assert.equal(page.status, 200);
  assert.ok(page.text.includes('id="no-email"'));
  assert.ok(page.text.includes('gatewayd merchant create --email you@example.com'));
  assert.ok(page.text.includes(`${off.config.server.public_url}/login`));
  assert.ok(page.text.includes('Ce serveur ne peut pas encore envoyer d&#39;e-mails'), 'in French');
  assert.ok(!page.text.includes('data-api="/api/v1/auth/register"'), 'no form that can only fail');
  const on = await startTestApp({ config: { email: { smtp_url: 'smtp://127.0.0.1:2525' } } });
  t.after(() => on.close());
  const withMail = await html(on.baseUrl, '/register');
  assert.ok(!withMail.text.includes('id="no-email"'));
  assert.ok(withMail.text.includes('data-api="/api/v1/auth/register"'));
  // On `gatewayd dev` the plain command would write to ./data/gateway.db, not the dev instance's database.
  const dev = await startTestApp({ devMode: true, config: { tron: { network: 'devnet', api_url: 'http://127.0.0.1:1' } } });
  t.after(() => dev.close());
  const devPage = await html(dev.baseUrl, '/register');
  assert.ok(devPage.text.includes('<code dir="ltr">gatewayd dev merchant create --email you@example.com</code>'));
  // On another port the command names it, or it would reach (and create the account on) another instance.
  const elsewhere = await startTestApp({
    devMode: true,
    config: { server: { listen: '127.0.0.1:8090' }, tron: { network: 'devnet', api_url: 'http://127.0.0.1:1' } },
  });
  t.after(() => elsewhere.close());
  const elsewherePage = await html(elsewhere.baseUrl, '/register');
  assert.ok(elsewherePage.text.includes('<code dir="ltr">gatewayd dev merchant create --url http://127.0.0.1:8090 --email you@example.com</code>'));
});

test('the footer links the contact form only when support has staff to read it', async (t) => {
  const off = await startTestApp();
  t.after(() => off.close());
  assert.ok(!(await html(off.baseUrl, '/login')).text.includes('href="/support/contact"'));
  const on = await startTestApp({ config: { support: { staff_emails: ['staff@example.com'] } } });
  t.after(() => on.close());
  assert.ok((await html(on.baseUrl, '/login')).text.includes('href="/support/contact"'));
});

test('the console asks for a business name while it is still the part of the email before "@"', async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const { client } = await signedInMerchant(app, { email: 'shopkeeper@example.test', name: 'shopkeeper' });
  const cookie = `gw_session=${client.cookies.get('gw_session')}`;
  const page = await html(app.baseUrl, '/console', { cookie });
  assert.ok(page.text.includes('id="name-default"'));
  assert.ok(page.text.includes('Your business name is still “shopkeeper”'));
  assert.equal((await client.patch('/me', { name: 'Corner Shop' })).status, 200);
  assert.ok(!(await html(app.baseUrl, '/console', { cookie })).text.includes('id="name-default"'));
});
