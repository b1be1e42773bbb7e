import { LOCALES } from '../../src/lib/i18n.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { insertInvoice, insertWallet } from './rows.js';
import { EVENT_TYPES } from '../../src/events/events.repo.js';
import { cookieName } from '../../src/http/auth.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';

const XSS = '<script>alert(1)</script>"\'><img src=x onerror=alert(2)>';
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x onerror=alert(2)&gt;';

test("console pages render the owner data escaped, never another merchant's, and are never cached", async (t) => {
  const app = await startTestApp();
  t.after(() => app.close());
  const owner = await signedInMerchant(app, { name: `Owner ${XSS}` });
  const other = await signedInMerchant(app, { name: 'Other shop' });
  const now = app.clock.now();
  const walletId = await insertWallet(app.deps.db, owner.merchant.id, now, `Wallet ${XSS}`);
  const inv = await insertInvoice(app.deps.db, {
    merchantId: owner.merchant.id,
    walletId,
    now,
    orderId: `order ${XSS}`,
    description: `desc ${XSS}`,
    metadata: { note: XSS },
    status: 'review',
    txHash: 'cd'.repeat(32),
    adjustment: 9n,
  });
  await insertInvoice(app.deps.db, {
    merchantId: owner.merchant.id,
    walletId,
    now,
    status: 'confirmed',
    txHash: 'ef'.repeat(32),
    adjustment: 11n,
    base: 25_000_000n,
    orderId: 'paid-1',
  });
  const otherWallet = await insertWallet(app.deps.db, other.merchant.id, now, 'Other wallet');
  const otherInv = await insertInvoice(app.deps.db, {
    merchantId: other.merchant.id,
    walletId: otherWallet,
    now,
    orderId: 'other-secret-order',
    adjustment: 10n,
  });
  await app.deps.db
    .insertInto('api_keys')
    .values({
      id: 'key_test1',
      merchant_id: owner.merchant.id,
      name: `Key ${XSS}`,
      prefix: 'gw_live_abcd',
      secret_hash: 'h'.repeat(64),
      scopes: 'invoices:read',
      expires_in_days: null,
      created_at: now,
      last_used_at: null,
      revoked_at: null,
      expires_at: null,
      replaced_key_id: null,
    })
    .execute();

  const transfer = (id: string, kind: 'late' | 'unmatched', invoiceId: string | null, amount: number) => ({
    id,
    network: 'tron-mainnet',
    token_contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    tx_hash: id.padEnd(64, '0'),
    log_index: 0,
    from_address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
    to_address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
    amount,
    kind,
    invoice_id: invoiceId,
    block_number: 70_000_000,
    block_timestamp: now,
    recorded_at: now,
  });
  await app.deps.db
    .insertInto('chain_transfers')
    .values([
      transfer('aaaa1111', 'unmatched', null, 4_990_000),
      transfer('bbbb2222', 'late', inv.id, 25_000_009),
      transfer('cccc3333', 'unmatched', null, 0),
      transfer('dddd4444', 'unmatched', null, 9_999),
    ])
    .execute();
  const get = async (path: string, client = owner.client) => {
    const res = await fetch(`${app.baseUrl}${path}`, { headers: { cookie: `gw_session=${client.cookies.get('gw_session')}` }, redirect: 'manual' });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  for (const path of [
    '/console',
    '/console/wallets',
    '/console/invoices',
    `/console/invoices/${inv.id}`,
    '/console/invoices/new',
    '/console/transfers',
    '/console/api-keys',
    '/console/webhooks',
    '/console/shops',
    '/console/account',
  ]) {
    const page = await get(path);
    assert.equal(page.status, 200, path);
    assert.equal(page.headers.get('cache-control'), 'no-store', path);
    assert.ok(!page.text.includes('<script>alert(1)'), `${path} leaks raw script`);
    assert.ok(!page.text.includes('other-secret-order'), `${path} shows another merchant's invoice`);
    assert.ok(page.text.includes(`Owner ${ESCAPED}`), `${path} escaped merchant name`);
    // No developer terms on a merchant's page: event types and API field values are the API's words.
    for (const lang of LOCALES) {
      const text = lang === 'en' ? page.text : (await get(`${path}?lang=${lang}`)).text;
      assert.doesNotMatch(text.replace(/<(script|code)[\s\S]*?<\/\1>/g, ''), /\(event invoice\.|resolution (&quot;|«|“)?tolerance/, `${path} ${lang}`);
    }
  }
  const overview = (await get('/console')).text;
  assert.match(
    overview,
    /<strong class="stat-amount"><bdi dir="ltr" class="num">25\.000011<\/bdi> <span class="unit">USDT<\/span><\/strong>/,
    'received = confirmed payable total',
  );
  const detail = await get(`/console/invoices/${inv.id}`);
  assert.ok(detail.text.includes(`order ${ESCAPED}`));
  assert.ok(detail.text.includes(`desc ${ESCAPED}`));
  assert.ok(detail.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'metadata escaped');
  assert.ok(detail.text.includes(`/pay/${inv.checkoutToken}`), 'checkout link for the owner');
  assert.match(detail.text, /data-api="\/api\/v1\/invoices\/[^"]+\/review"/, 'review actions on a paid review invoice');
  assert.ok((await get('/console/wallets')).text.includes(`Wallet ${ESCAPED}`));
  const transfers = (await get('/console/transfers')).text;
  assert.ok(transfers.includes('4.990000') && transfers.includes('aaaa1111'), 'unmatched transfer listed');
  // Dust (below tron.dust_threshold, 0.01 USDT by default) is folded away, counted, and shown on demand.
  assert.ok(!transfers.includes('cccc3333') && !transfers.includes('dddd4444'), 'dust folded away');
  assert.ok(transfers.includes('2 transfers below 0.01 USDT are folded away'), 'the folded dust is counted');
  const withDust = (await get('/console/transfers?dust=1')).text;
  assert.ok(withDust.includes('cccc3333') && withDust.includes('dddd4444') && withDust.includes('aaaa1111'), 'dust shown on demand');
  assert.ok(transfers.includes('25.000009') && transfers.includes(`/console/invoices/${inv.id}`), 'late payment linked to its invoice');
  assert.ok(detail.text.includes('bbbb2222'), 'late payment on the invoice page');
  assert.ok((await get('/console/api-keys')).text.includes(`Key ${ESCAPED}`));
  const filtered = await get('/console/invoices?status=confirmed');
  assert.ok(!filtered.text.includes(inv.id), 'status filter');
  assert.ok((await get('/console/invoices?status=review')).text.includes(inv.id));
  // Another tenant's invoice is a 404, exactly like an unknown one.
  assert.equal((await get(`/console/invoices/${otherInv.id}`)).status, 404);
  assert.equal((await get('/console/invoices/inv_nope')).status, 404);
  // Every console page states the form rule: each action posts JSON to the API (Origin-checked).
  assert.match((await get('/console/wallets')).text, /<form data-api="\/api\/v1\/wallets"/);
});

test('health you can see: /health keeps status ok but says live_payments_enabled false while the watcher is degraded; the console says why and since when; the checkout stops promising updates', async (t) => {
  const app = await startTestApp({ now: Date.UTC(2026, 10, 24, 0, 0) });
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  const walletId = await insertWallet(app.deps.db, owner.merchant.id, app.clock.now());
  const inv = await insertInvoice(app.deps.db, { merchantId: owner.merchant.id, walletId, now: app.clock.now() });
  const cookie = `gw_session=${owner.client.cookies.get('gw_session')!}`;
  const page = async (path: string) => (await fetch(`${app.baseUrl}${path}`, { headers: { cookie, accept: 'text/html' } })).text();
  const health = async () => (await fetch(`${app.baseUrl}/api/v1/health`)).json() as Promise<{ status: string; live_payments_enabled: boolean }>;

  // All well: no banner, the checkout promises to update by itself.
  app.deps.watcherStatus.state = 'running';
  app.deps.watcherStatus.lagSeconds = 20;
  assert.deepEqual([(await health()).status, (await health()).live_payments_enabled], ['ok', true]);
  assert.doesNotMatch(await page('/console'), /id="health-banner"/);
  assert.match(await page(`/pay/${inv.checkoutToken}`), /updates by itself/);

  // The watcher cannot read the chain: 7 minutes later the console says so, with the start time.
  app.deps.watcherStatus.state = 'degraded';
  app.clock.advance(7 * 60_000);
  const h = await health();
  assert.equal(h.status, 'ok', 'the API still serves');
  assert.equal(h.live_payments_enabled, false);
  const down = await page('/console/invoices');
  assert.match(
    down,
    /id="health-banner"[^>]*>Payments are not being confirmed right now[^<]*This has lasted 7 min \(since <time[^>]*dir="ltr">2026-11-24 00:00 UTC<\/time>\)/,
  );
  const checkout = await page(`/pay/${inv.checkoutToken}`);
  assert.doesNotMatch(checkout, /updates by itself/);
  assert.match(checkout, /Automatic confirmation is paused/);

  // Running again but 15 minutes behind: confirmed late, said so; live payments are enabled.
  app.deps.watcherStatus.state = 'running';
  app.deps.watcherStatus.lagSeconds = 900;
  app.clock.advance(2 * 60_000);
  assert.equal((await health()).live_payments_enabled, true);
  assert.match(
    await page('/console'),
    /Payments are confirmed late: this server is 15 min behind the TRON network. This has lasted 2 min \(since <time[^>]*>2026-11-24 00:07 UTC<\/time>\)/,
  );
  app.deps.watcherStatus.lagSeconds = 10;
  assert.doesNotMatch(await page('/console'), /id="health-banner"/);
});

test('the webhooks page names every event type the API sends and the URL rule of this instance', async (t) => {
  const page = async (app: Awaited<ReturnType<typeof startTestApp>>, lang: string) => {
    const owner = await signedInMerchant(app);
    const cookie = `${cookieName(app.config, SESSION_COOKIE)}=${owner.client.cookies.get(cookieName(app.config, SESSION_COOKIE))!}`;
    return (await fetch(`${app.baseUrl}/console/webhooks?lang=${lang}`, { headers: { cookie, accept: 'text/html' } })).text();
  };
  const intro = (html: string) => /<p class="muted" id="webhooks-intro">(.*?)<\/p>/s.exec(html)![1]!;
  const hint = (html: string) => /<p class="hint" id="h-hint">(.*?)<\/p>/s.exec(html)![1]!;

  const app = await startTestApp();
  t.after(() => app.close());
  for (const lang of LOCALES) {
    const html = await page(app, lang);
    for (const type of EVENT_TYPES) assert.ok(intro(html).includes(`<code dir="ltr">${type}</code>`), `${lang}: ${type} in the intro`);
    assert.ok(hint(html).includes('443') || hint(html).includes('۴۴۳'), `${lang}: the allowed port`);
  }
  assert.equal(hint(await page(app, 'en')), 'Public HTTPS on port 443; no IP addresses, credentials or fragments.');

  const ports = await startTestApp({ config: { webhooks: { allowed_ports: [443, 8443] } } });
  t.after(() => ports.close());
  assert.equal(hint(await page(ports, 'en')), 'Public HTTPS on port 443 or 8443; no IP addresses, credentials or fragments.');

  const dev = await startTestApp({ devMode: true, config: { tron: { network: 'devnet', api_url: 'http://127.0.0.1:1' } } });
  t.after(() => dev.close());
  const devHint = hint(await page(dev, 'en'));
  assert.match(devHint, /gatewayd dev/);
  assert.ok(devHint.includes('http://127.0.0.1') && !devHint.includes('443'), devHint);
  assert.ok(!hint(await page(dev, 'ru')).includes('443'));
});
