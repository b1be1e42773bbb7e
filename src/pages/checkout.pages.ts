/**
 * The checkout page /pay/{checkout_token}: what a payer on a phone needs to send exactly the right
 * amount to the right address, with the status kept live by polling GET /api/v1/checkout/{token}
 * (and a meta refresh when JavaScript is off).
 */
import type { Hono } from 'hono';
import QRCode from 'qrcode';
import type { AppDeps } from '../deps.js';
import type { AppEnv } from '../http/context.js';
import { type Invoice } from '../invoices/invoice.model.js';
import { toCheckoutInvoiceResponse } from '../invoices/invoices.schemas.js';
import { findByCheckoutToken } from '../invoices/invoices.repo.js';
import { pageContext, type Renderer } from './render.js';

/** How often the page asks for the status, and how often it reloads without JavaScript. */
export const CHECKOUT_POLL_SECONDS = 5;
export const CHECKOUT_REFRESH_SECONDS = 15;
const TOKEN_RE = /^[A-Za-z0-9_-]{16,200}$/;

export type CheckoutScreen = 'pay' | 'confirmed' | 'expired' | 'review';

/**
 * Which screen a payer sees. A review invoice stays payable until a transfer is recorded against it
 * (then the merchant decides); a pending invoice past its expiry still shows the payment details
 * with a notice, since a transfer made in time may still be seen and confirm it.
 */
export function checkoutScreen(inv: Pick<Invoice, 'status' | 'txHash'>): CheckoutScreen {
  if (inv.status === 'confirmed') return 'confirmed';
  if (inv.status === 'expired') return 'expired';
  if (inv.status === 'review' && inv.txHash !== null) return 'review';
  return 'pay';
}

export function checkoutPages(app: Hono<AppEnv>, deps: AppDeps, renderer: Renderer): void {
  app.get('/pay/:token', async (c) => {
    const ctx = pageContext(c, deps);
    const token = c.req.param('token');
    const found = TOKEN_RE.test(token) ? await findByCheckoutToken(deps.db, token) : undefined;
    if (!found) {
      return renderer.page(c, ctx, 'checkout-not-found', { title: ctx.t('page.checkout.not_found_title') }, {}, 404);
    }
    const { invoice, merchantName } = found;
    const view = toCheckoutInvoiceResponse(invoice, merchantName);
    const now = deps.clock.now();
    const remainingMs = Math.max(0, invoice.expiresAt - now);
    const qrSvg = await addressQr(invoice.walletAddress);
    return renderer.page(
      c,
      ctx,
      'checkout',
      {
        title: ctx.t('page.checkout.title', { merchant: merchantName }),
        scripts: ['copy.js', 'checkout.js'],
        noscriptRefresh: invoice.status === 'pending' || invoice.status === 'review' ? CHECKOUT_REFRESH_SECONDS : undefined,
        data: {
          checkout: {
            api: `/api/v1/checkout/${encodeURIComponent(token)}`,
            poll_seconds: CHECKOUT_POLL_SECONDS,
            remaining_ms: remainingMs,
            screen: checkoutScreen(invoice),
          },
        },
      },
      {
        inv: view,
        screen: checkoutScreen(invoice),
        overdue: remainingMs === 0,
        remaining: formatRemaining(remainingMs),
        qrSvg,
      },
    );
  });
}

const QR_CACHE_MAX = 1000;
const qrCache = new Map<string, string>();

/**
 * The QR code of a receiving address, as SVG. The address alone: every TRON wallet scans it; the
 * amount is typed (and copied) separately. Addresses are few and their codes never change, so the
 * rendered SVGs are kept (drawing one costs more than the rest of the page).
 */
async function addressQr(address: string): Promise<string> {
  const cached = qrCache.get(address);
  if (cached !== undefined) return cached;
  const svg = await QRCode.toString(address, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  if (qrCache.size >= QR_CACHE_MAX) qrCache.delete(qrCache.keys().next().value!);
  qrCache.set(address, svg);
  return svg;
}

/** mm:ss (or h:mm:ss), the same format checkout.js counts down in. */
export function formatRemaining(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mmss = `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
  return h > 0 ? `${h}:${mmss}` : mmss;
}
