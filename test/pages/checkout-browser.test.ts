import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/lib/assets.js';
import assert from 'node:assert/strict';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import QRCode from 'qrcode';
import { commitScan } from '../../src/chain/chain.service.js';
import type { VerifiedTransfer } from '../../src/chain/verifier.js';
import type { AppDeps } from '../../src/deps.js';
import { tronUri } from '../../src/pages/checkout.pages.js';
import { NETWORKS } from '../../src/lib/tron.js';

const USDT_CONTRACT = NETWORKS.mainnet.usdtContract;
import { ADDRESSES, addWallet, createInvoice, micro } from '../helpers/shop.js';
import { insertInvoice, insertWallet, WALLET_ADDRESS } from './rows.js';

/** Records verified transfers as the block scanner does (nothing is expired: the scan covers no window). */
const recordTransfers = async (deps: AppDeps, transfers: VerifiedTransfer[]) =>
  (await commitScan(deps, { transfers, unscanned: { scannedUntil: 0, gaps: [] } })).recorded;

/** The dark modules of a QR code as the qrcode package draws them (one SVG path), for what the page shows and for a text. */
const shownModules = (page: import('playwright-core').Page) => page.locator('.qr svg path[stroke]').getAttribute('d');
const modulesOf = async (text: string) =>
  /<path stroke="#000000" d="([^"]+)"/.exec(await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }))![1];

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

  assert.equal(await page.locator('#amount').innerText(), '49.990\u202F012 USDT', 'digits grouped in threes');
  assert.equal(await page.locator('.merchant-name').innerText(), '<img src=x onerror=alert(1)>Shop');
  assert.equal(await page.locator('.description').innerText(), '<script>alert("desc")</script>');
  assert.equal(await page.locator('#address').innerText(), WALLET_ADDRESS);
  assert.ok(await page.locator('.qr svg').isVisible());
  // By default the QR code carries the address alone (some wallets reject tron: URIs).
  assert.equal(await shownModules(page), await modulesOf(WALLET_ADDRESS));
  const first = await page.locator('#countdown').innerText();
  assert.match(first, /^(10:00|09:5\d)$/);
  await page.waitForFunction(
    () =>
      /^09:5[0-7]$/.test(
        String(
          (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('countdown').textContent,
        ),
      ),
    undefined,
    { timeout: 5000 },
  );

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
  assert.equal(await page.locator('#amount').innerText(), '49.990\u202F012 USDT', 'digits grouped in threes');
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
  assert.equal(await page.locator('#amount').innerText(), '5.000\u202F003 USDT');
  assert.equal(await page.locator('#address').innerText(), WALLET_ADDRESS);
  assert.ok(await page.locator('.qr svg').isVisible());
  assert.ok(await page.locator('.warnings').isVisible());
  assert.equal(await page.getByRole('button', { name: 'Copy amount' }).count(), 0, 'no dead buttons without JavaScript');
  assert.equal(await page.locator('meta[http-equiv="refresh"]').getAttribute('content'), '15');
  assert.equal(await page.locator('#countdown').innerText(), '20:00');
});

test('checkout in Chromium, right-to-left: tron: URI QR, grouped amount, fee warning, then "Return to {merchant}" once confirmed or expired', async (t) => {
  const app = await startBrowserApp();
  t.after(() => app.close());
  const owner = await signedInMerchant(app, { name: 'Corner Shop' });
  assert.equal((await owner.client.patch('/me', { checkout_qr: 'tron_uri' })).body.merchant.checkout_qr, 'tron_uri');
  const walletId = await addWallet(owner.client, ADDRESSES[0]);
  const back = 'https://shop.example/orders/1042?step=paid&lang=ar';
  const created = await createInvoice(owner.client, { amount: '1234.5', wallet_id: walletId, redirect_url: back });
  assert.equal(created.status, 201, created.text);
  const inv = created.body.invoice;
  assert.equal(inv.redirect_url, back);
  const token = inv.checkout_url.split('/pay/')[1];
  const catalogue = JSON.parse(readFileSync(join(projectRoot(), 'locales', 'ar.json'), 'utf8')) as Record<string, string>;

  const browser = await openBrowser({ locale: 'ar' });
  t.after(() => browser.close());
  const { page } = browser;
  await page.goto(`${app.baseUrl}/pay/${token}`);
  assert.equal(await page.getAttribute('html', 'dir'), 'rtl');
  assert.equal(await page.locator('#amount').innerText(), `1\u202F234.500\u202F${inv.payable_amount.slice(-3)} USDT`);
  assert.ok(await page.getByText(catalogue['page.checkout.warn_fee']!).isVisible(), 'the fee warning, in Arabic');
  assert.ok(await page.getByText(catalogue['page.checkout.qr_caption_uri']!).isVisible());
  const uri = tronUri({ walletAddress: ADDRESSES[0], tokenContract: USDT_CONTRACT, payableAmount: micro(inv.payable_amount) });
  assert.equal(uri, `tron:${ADDRESSES[0]}?token=${USDT_CONTRACT}&amount=${inv.payable_amount}`);
  assert.equal(await shownModules(page), await modulesOf(uri));
  assert.equal(await page.locator('a.return-link:visible').count(), 0, 'no way back while the invoice is open');
  assert.equal(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, 'no horizontal overflow');
  await page.screenshot({ path: join(tmpdir(), 'gatewayd-checkout-pay-ar.png'), fullPage: true });

  // Paid: the page switches by itself, and offers the stored URL, and only that.
  await recordTransfers(app.deps, [
    {
      txHash: '9a'.repeat(32),
      logIndex: 0,
      from: ADDRESSES[3],
      to: ADDRESSES[0],
      amount: micro(inv.payable_amount),
      blockNumber: 7,
      blockTimestamp: app.clock.now(),
      tokenContract: USDT_CONTRACT,
    },
  ]);
  const link = page.locator('#screen-confirmed a.return-link');
  await link.waitFor({ state: 'visible', timeout: 15_000 });
  assert.equal(await link.innerText(), catalogue['page.checkout.return_to']!.replace('{merchant}', 'Corner Shop'));
  assert.equal(await link.getAttribute('href'), back);
  assert.equal(
    await page.locator('a.return-link[href]').evaluateAll((as) => as.filter((a) => (a as unknown as { href: string }).href !== '').length),
    2,
    'the same stored URL on the confirmed and expired screens, nothing else',
  );
  const text = await page.locator('body').innerText();
  assert.doesNotMatch(text, /undefined|page\.checkout\./, 'no undefined, no untranslated key');
  const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  assert.equal(overflow, 0, 'no horizontal overflow at 390 px');
  await page.screenshot({ path: join(tmpdir(), 'gatewayd-checkout-return-ar.png'), fullPage: true });

  // Cancelled (expired): the way back too. Without a stored URL: none.
  const cancelled = (await createInvoice(owner.client, { amount: '3', wallet_id: walletId, redirect_url: back })).body.invoice;
  await owner.client.post(`/invoices/${cancelled.id}/cancel`, {});
  await page.goto(`${app.baseUrl}/pay/${cancelled.checkout_url.split('/pay/')[1]}?lang=en`);
  assert.ok(await page.locator('#screen-expired').isVisible());
  assert.equal(await page.locator('#screen-expired a.return-link').innerText(), 'Return to Corner Shop');
  const plain = (await createInvoice(owner.client, { amount: '4', wallet_id: walletId })).body.invoice;
  await owner.client.post(`/invoices/${plain.id}/cancel`, {});
  await page.goto(`${app.baseUrl}/pay/${plain.checkout_url.split('/pay/')[1]}`);
  assert.ok(await page.locator('#screen-expired').isVisible());
  assert.equal(await page.locator('a.return-link').count(), 0);
  assert.deepEqual(browser.errors, []);
});

test('redirect_url: https only, at most 2048 characters, no credentials; sign-in redirects stay on this origin', async (t) => {
  const app = await startBrowserApp();
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  const walletId = await addWallet(owner.client, ADDRESSES[0]);
  for (const bad of [
    'http://shop.example/back',
    'javascript:alert(1)',
    'https:shop.example',
    '//shop.example',
    'https://user:pw@shop.example/',
    `https://shop.example/${'a'.repeat(2030)}`,
    'https://shop.example/a b',
    'data:text/html,x',
  ]) {
    const res = await createInvoice(owner.client, { amount: '1', wallet_id: walletId, redirect_url: bad });
    assert.equal(res.status, 400, bad);
    assert.equal(res.body.error.details[0].path, 'redirect_url', bad);
  }
  const longest = `https://shop.example/${'a'.repeat(2048 - 21)}`;
  assert.equal(longest.length, 2048);
  assert.equal((await createInvoice(owner.client, { amount: '1', wallet_id: walletId, redirect_url: longest })).status, 201);
  // The sign-in page's `next` never leaves this origin.
  for (const next of ['https://evil.example/', '//evil.example/', '/\\evil.example/', 'javascript:alert(1)']) {
    const res = await owner.client.get(`${app.baseUrl}/login?next=${encodeURIComponent(next)}`);
    const location = res.headers.get('location');
    assert.ok(location === null || (location.startsWith('/') && !location.startsWith('//') && !location.startsWith('/\\')), `${next} -> ${location}`);
  }
});
