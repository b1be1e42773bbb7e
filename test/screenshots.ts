/**
 * `npm run screenshots`: PNGs of the checkout (pending and paid, English and Arabic) and the main
 * console pages, written to screenshots/ for the README. Uses the same real app and system
 * Chromium as the browser tests, with invoices written straight into a fresh database.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../src/accounts/sessions.repo.js';
import { projectRoot } from '../src/lib/assets.js';
import { openBrowser, startBrowserApp } from './helpers/browser.js';
import { signedInMerchant } from './helpers/fixtures.js';
import { insertInvoice, insertWallet } from './pages/rows.js';

const out = join(projectRoot(), 'screenshots');
mkdirSync(out, { recursive: true });

const app = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30) });
const { merchant, client } = await signedInMerchant(app, { name: 'Blue Lantern Books', email: 'owner@bluelantern.example' });
const now = app.clock.now();
const walletId = await insertWallet(app.deps.db, merchant.id, now);
const pending = await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now, base: 42_500_000n, adjustment: 137n, description: 'Order #1042: two hardcover books, shipping included', orderId: 'order-1042', expiresInMinutes: 30 });
const paid = await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now: now - 3_600_000, base: 18_000_000n, adjustment: 42n, description: 'Order #1041: gift card', orderId: 'order-1041', status: 'confirmed', txHash: '7c1e4f0b9a3d2e8f6c5b4a3928171605f4e3d2c1b0a99887766554433221100f' });
await insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now: now - 7_200_000, base: 5_000_000n, adjustment: 7n, orderId: 'order-1040', status: 'expired' });
await app.deps.db
  .insertInto('api_keys')
  .values({ id: 'key_screens1', merchant_id: merchant.id, name: 'Shop backend', prefix: 'gw_live_Qx3v', secret_hash: '0'.repeat(64), scopes: 'invoices:read invoices:write ledger:read', expires_in_days: null, created_at: now - 86_400_000, last_used_at: now - 60_000, revoked_at: null, expires_at: null, replaced_key_id: null })
  .execute();
await app.deps.db.insertInto('webhooks').values({ id: 'whk_screens1', merchant_id: merchant.id, url: 'https://bluelantern.example/gateway/webhook', secret: 'whsec_x', created_at: now - 86_400_000, deactivated_at: null }).execute();
await app.deps.db.insertInto('events').values({ id: 'evt_screens1', merchant_id: merchant.id, type: 'invoice.confirmed', invoice_id: paid.id, data: '{}', created_at: now - 3_000_000 }).execute();
await app.deps.db
  .insertInto('deliveries')
  .values({ id: 'dlv_screens1', webhook_id: 'whk_screens1', event_id: 'evt_screens1', merchant_id: merchant.id, status: 'delivered', attempts: 1, next_attempt_at: null, delivered_at: now - 2_999_000, last_error: null, response_status: 200, created_at: now - 3_000_000, updated_at: now - 2_999_000 })
  .execute();
app.clock.advance(4 * 60_000 + 12_000);

const shots: Array<{ file: string; path: string; lang: string; width: number; signedIn?: boolean }> = [
  { file: 'checkout-pending-en.png', path: `/pay/${pending.checkoutToken}`, lang: 'en', width: 390 },
  { file: 'checkout-pending-ar.png', path: `/pay/${pending.checkoutToken}`, lang: 'ar', width: 390 },
  { file: 'checkout-paid-en.png', path: `/pay/${paid.checkoutToken}`, lang: 'en', width: 390 },
  { file: 'checkout-paid-ar.png', path: `/pay/${paid.checkoutToken}`, lang: 'ar', width: 390 },
  { file: 'login-en.png', path: '/login', lang: 'en', width: 390 },
  { file: 'console-overview-en.png', path: '/console', lang: 'en', width: 1024, signedIn: true },
  { file: 'console-invoice-en.png', path: `/console/invoices/${paid.id}`, lang: 'en', width: 1024, signedIn: true },
  { file: 'console-wallets-fa.png', path: '/console/wallets', lang: 'fa', width: 390, signedIn: true },
  { file: 'console-api-keys-en.png', path: '/console/api-keys', lang: 'en', width: 1024, signedIn: true },
  { file: 'console-webhooks-en.png', path: '/console/webhooks', lang: 'en', width: 1024, signedIn: true },
  { file: 'contact-fa.png', path: '/support/contact', lang: 'fa', width: 390 },
];

const browser = await openBrowser();
try {
  for (const shot of shots) {
    await browser.context.clearCookies();
    if (shot.signedIn) await browser.context.addCookies([{ name: SESSION_COOKIE, value: client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
    await browser.page.setViewportSize({ width: shot.width, height: 800 });
    await browser.page.goto(`${app.baseUrl}${shot.path}${shot.path.includes('?') ? '&' : '?'}lang=${shot.lang}`);
    await browser.page.screenshot({ path: join(out, shot.file), fullPage: true });
    console.log(`screenshots/${shot.file}`);
  }
  // A test instance: the banner on every page (Nile here), in a right-to-left language too.
  const nile = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30), config: { tron: { network: 'nile' } } });
  try {
    const owner = await signedInMerchant(nile, { name: 'Blue Lantern Books', email: 'owner@bluelantern.example' });
    const wallet = await insertWallet(nile.deps.db, owner.merchant.id, now, 'Main wallet', undefined, nile.config.network);
    const test = await insertInvoice(nile.deps.db, { merchantId: owner.merchant.id, walletId: wallet, now, base: 42_500_000n, adjustment: 137n, description: 'Order #1042', orderId: 'order-1042', expiresInMinutes: 30, network: nile.config.network });
    for (const shot of [
      { file: 'checkout-testnet-fa.png', path: `/pay/${test.checkoutToken}`, lang: 'fa', width: 390, signedIn: false },
      { file: 'console-testnet-en.png', path: '/console', lang: 'en', width: 1024, signedIn: true },
    ]) {
      await browser.context.clearCookies();
      if (shot.signedIn) await browser.context.addCookies([{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)!, url: nile.baseUrl }]);
      await browser.page.setViewportSize({ width: shot.width, height: 800 });
      await browser.page.goto(`${nile.baseUrl}${shot.path}?lang=${shot.lang}`);
      await browser.page.screenshot({ path: join(out, shot.file), fullPage: true });
      console.log(`screenshots/${shot.file}`);
    }
  } finally {
    await nile.close();
  }
} finally {
  await browser.close();
  await app.close();
}
