/**
 * `npm run screenshots`: PNGs of the checkout (pending and paid, English and Arabic) and the main
 * console pages, written to screenshots/ for the docs. Uses the same real app, system Chromium and
 * seeded shop as the layout test.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../src/accounts/sessions.repo.js';
import { projectRoot } from '../src/lib/assets.js';
import { openBrowser, startBrowserApp } from './helpers/browser.js';
import { seedShowcase } from './pages/showcase.js';
import { signedInMerchant } from './helpers/fixtures.js';
import { insertInvoice, insertWallet } from './pages/rows.js';

const out = join(projectRoot(), 'screenshots');
mkdirSync(out, { recursive: true });

// The same shop and pages as the layout test (test/pages/layout-browser.test.ts), which checks them
// for overflow, untranslated keys and "undefined" in en, fa and zh at 1280 and 390 px.
const app = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30), config: { support: { staff_emails: ['support@shop.example'] } } });
const showcase = await seedShowcase(app);
const now = app.clock.now();
const client = showcase.owner.client;
const pending = { checkoutToken: showcase.pendingToken };
const paid = { id: showcase.paidId, checkoutToken: showcase.paidToken };
app.clock.advance(4 * 60_000 + 12_000);

const shots: Array<{ file: string; path: string; lang: string; width: number; signedIn?: boolean; open?: boolean }> = [
  { file: 'checkout-pending-en.png', path: `/pay/${pending.checkoutToken}`, lang: 'en', width: 390 },
  { file: 'checkout-pending-ar.png', path: `/pay/${pending.checkoutToken}`, lang: 'ar', width: 390 },
  { file: 'checkout-paid-en.png', path: `/pay/${paid.checkoutToken}`, lang: 'en', width: 390 },
  { file: 'checkout-paid-ar.png', path: `/pay/${paid.checkoutToken}`, lang: 'ar', width: 390 },
  { file: 'login-en.png', path: '/login', lang: 'en', width: 390 },
  { file: 'console-overview-en.png', path: '/console', lang: 'en', width: 1280, signedIn: true },
  { file: 'console-invoice-en.png', path: `/console/invoices/${paid.id}`, lang: 'en', width: 1280, signedIn: true },
  { file: 'console-transfers-en.png', path: '/console/transfers', lang: 'en', width: 1280, signedIn: true },
  { file: 'console-invoices-fa.png', path: '/console/invoices', lang: 'fa', width: 1280, signedIn: true },
  { file: 'console-wallets-fa.png', path: '/console/wallets', lang: 'fa', width: 390, signedIn: true },
  { file: 'console-transfers-zh.png', path: '/console/transfers', lang: 'zh', width: 390, signedIn: true },
  { file: 'console-api-keys-en.png', path: '/console/api-keys', lang: 'en', width: 1280, signedIn: true },
  { file: 'console-webhooks-en.png', path: '/console/webhooks', lang: 'en', width: 1280, signedIn: true },
  // Right to left, with a webhook's event-type choice open (the controls of issue 30, item 8).
  { file: 'console-webhooks-ar.png', path: '/console/webhooks', lang: 'ar', width: 1280, signedIn: true, open: true },
  { file: 'contact-fa.png', path: '/support/contact', lang: 'fa', width: 390 },
];

const browser = await openBrowser();
try {
  for (const shot of shots) {
    await browser.context.clearCookies();
    if (shot.signedIn) await browser.context.addCookies([{ name: SESSION_COOKIE, value: client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
    await browser.page.setViewportSize({ width: shot.width, height: 800 });
    await browser.page.goto(`${app.baseUrl}${shot.path}${shot.path.includes('?') ? '&' : '?'}lang=${shot.lang}`);
    if (shot.open) await browser.page.evaluate('document.querySelectorAll("main details").forEach((d) => { d.open = true; })');
    await browser.page.screenshot({ path: join(out, shot.file), fullPage: true });
    console.log(`screenshots/${shot.file}`);
  }
  // A test instance: the banner on every page (Nile here), in a right-to-left language too.
  const nile = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30), config: { tron: { network: 'nile' } } });
  try {
    const owner = await signedInMerchant(nile, { name: 'Blue Lantern Books', email: 'owner@bluelantern.example' });
    const wallet = await insertWallet(nile.deps.db, owner.merchant.id, now, 'Main wallet', undefined, nile.config.network);
    const test = await insertInvoice(nile.deps.db, {
      merchantId: owner.merchant.id,
      walletId: wallet,
      now,
      base: 42_500_000n,
      adjustment: 137n,
      description: 'Order #1042',
      orderId: 'order-1042',
      expiresInMinutes: 30,
      network: nile.config.network,
    });
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
