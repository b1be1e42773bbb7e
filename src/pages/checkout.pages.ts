/**
 * The checkout page /pay/{checkout_token}: what a payer on a phone needs to send exactly the right
 * amount to the right address, with the status kept live by polling GET /api/v1/checkout/{token}
 * (and a meta refresh when JavaScript is off).
 */
import { livePayments } from '../system/live-payments.js';
import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { type Invoice } from '../invoices/invoice.model.js';
import { checkoutView, dustOf } from '../checkout/checkout-view.js';
import { findByCheckoutToken } from '../invoices/invoices.repo.js';
import { formatAmount, micros } from '../lib/amounts.js';
import { tronTransferLink } from '../chains/payment-uri.js';
import { pageContext, type Renderer } from './render.js';
import { priceLine } from './price-format.js';
import { checkoutReturnUrl } from '../shops/shop-orders.js';
import { chosenOption, networkName, shownOptions, SOLANA_RENT_SOL } from './checkout-options.js';
import { findNetwork } from '../chains/networks.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock'> & { watcherStatus: WatcherStatus };

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

export function checkoutPages(app: Hono<AppEnv>, deps: Deps, renderer: Renderer): void {
  app.get('/pay/:token', async (c) => {
    const ctx = pageContext(c, deps);
    const token = c.req.param('token');
    const found = TOKEN_RE.test(token) ? await findByCheckoutToken(deps.db, token) : undefined;
    if (!found) {
      return renderer.page(c, ctx, 'checkout-not-found', { title: ctx.t('page.checkout.not_found_title') }, {}, 404);
    }
    const { invoice, merchantName, checkoutQr } = found;
    const view = await checkoutView(deps, invoice, merchantName, dustOf(deps.config.tron.dust_threshold));
    const now = deps.clock.now();
    const remainingMs = Math.max(0, invoice.expiresAt - now);
    const options = shownOptions(view, checkoutQr === 'tron_uri' ? 'uri' : 'address');
    const chosen = chosenOption(options, c.req.query('option'));
    const qrSvgs: Record<number, string> = {};
    for (const o of options) qrSvgs[o.index] = await qrCode(o.qrText);
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
            // The page reloads when what arrived changes, so its wording (rendered here) stays true.
            amount_received: view.amount_received,
            payable_amount: view.payable_amount,
            resolution: view.resolution,
            unmatched_payment_seen: view.unmatched_payment_seen,
            seen_tx: view.payment_seen?.tx_hash ?? null,
            payment_dropped: view.payment_dropped,
          },
        },
      },
      {
        inv: view,
        screen: checkoutScreen(invoice),
        overdue: remainingMs === 0,
        remaining: formatRemaining(remainingMs),
        options,
        chosen,
        qrSvgs,
        groupDigits,
        solanaRent: SOLANA_RENT_SOL,
        // While the watcher cannot confirm payments, the page stops promising to update by itself.
        live: livePayments(deps.watcherStatus).enabled,
        // "¥100.00 = 14.06 USDT at 7.1150 CNY/USDT, rate of 10:42 UTC" for an invoice priced in fiat.
        priceLine: view.price ? priceLine(ctx, view.price, view.base_amount) : null,
        received: receivedNotice(invoice),
        // A wrong amount reached the address while the invoice was open: maybe this payer's.
        unmatchedSeen: view.unmatched_payment_seen,
        // Seen, then final: a payment seen before its block is final, or one that left the chain.
        seenNotice: seenNotice(ctx, view, now),
        // Only the URL stored on the invoice (https, checked at creation) is ever offered as a way
        // back; a shop's return hop is named by this invoice's checkout token.
        returnUrl: checkoutReturnUrl(deps.config.server.public_url, invoice),
      },
    );
  });
}

/**
 * What the payer is told of a payment seen before its block is final ("about N min" from
 * expected_final_at, or "less than a minute"), or of one that left the chain; null otherwise.
 */
export function seenNotice(
  ctx: { t: (key: string, values?: Record<string, string | number>) => string },
  view: { network: string; payment_seen: { network: string; expected_final_at: string } | null; payment_dropped: boolean },
  now: number,
): { kind: 'seen' | 'dropped'; text: string } | null {
  const id = view.payment_seen?.network ?? view.network;
  const found = findNetwork(id);
  const network = found ? networkName(found) : id;
  if (view.payment_seen) {
    const minutes = Math.round((Date.parse(view.payment_seen.expected_final_at) - now) / 60_000);
    return { kind: 'seen', text: minutes < 1 ? ctx.t('page.checkout.seen_soon', { network }) : ctx.t('page.checkout.seen_body', { network, minutes }) };
  }
  return view.payment_dropped ? { kind: 'dropped', text: ctx.t('page.checkout.dropped_body', { network }) } : null;
}

/**
 * What the payer is told about money already recorded against an unpaid invoice (a partial or
 * late payment): received X of Y, and the rest when short. Null when nothing arrived, or once paid.
 * It replaces the amount to send as the page's headline: a top-up has no adjustment of its own and
 * would not be matched, so the payer is told to send nothing more unless the merchant asks.
 */
export function receivedNotice(
  inv: Pick<Invoice, 'amountReceived' | 'payableAmount' | 'txHash'>,
): { amount: string; grouped: string; short: boolean; rest: string } | null {
  if (inv.amountReceived <= 0n || inv.txHash !== null) return null;
  const short = inv.amountReceived < inv.payableAmount;
  const amount = formatAmount(inv.amountReceived);
  return { amount, grouped: groupDigits(amount), short, rest: short ? formatAmount(micros(inv.payableAmount - inv.amountReceived)) : '0.000000' };
}

const QR_CACHE_MAX = 1000;
const qrCache = new Map<string, string>();

/**
 * What the QR code carries when the merchant chose `tron_uri`: the address with the token contract
 * and the exact amount. Some wallets reject such URIs, so the default is the address alone.
 */
export function tronUri(inv: Pick<Invoice, 'walletAddress' | 'tokenContract' | 'payableAmount'>): string {
  return tronTransferLink(inv.walletAddress, inv.tokenContract, inv.payableAmount);
}

/**
 * A QR code as SVG. By default the address alone: every TRON wallet scans it; the amount is typed
 * (and copied) separately. Address codes are few and never change, so the rendered SVGs are kept
 * (drawing one costs more than the rest of the page); URIs with amounts are drawn each time.
 */
async function qrCode(text: string): Promise<string> {
  const cacheable = !text.includes(':');
  const cached = cacheable ? qrCache.get(text) : undefined;
  if (cached !== undefined) return cached;
  // Loaded with the first checkout page: an idle server never needs it (about 3 MB with pngjs).
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  if (!cacheable) return svg;
  if (qrCache.size >= QR_CACHE_MAX) qrCache.delete(qrCache.keys().next().value!);
  qrCache.set(text, svg);
  return svg;
}

/**
 * A six-decimal amount with its digits grouped in threes on both sides of the point, separated by a
 * narrow no-break space ("1 234.500 137"): the same in every locale (a comma or a dot as group
 * separator would read as a decimal point somewhere), and easy to compare digit by digit with the
 * wallet. The copy button copies the plain amount.
 */
export function groupDigits(amount: string): string {
  const [whole, fraction = ''] = amount.split('.');
  const group = (digits: string, fromEnd: boolean) => (fromEnd ? digits.replace(/\B(?=(\d{3})+$)/g, '\u202F') : digits.replace(/(\d{3})(?=\d)/g, '$1\u202F'));
  return fraction ? `${group(whole!, true)}.${group(fraction, false)}` : group(whole!, true);
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
