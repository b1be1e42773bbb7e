/**
 * A shop's order becomes an ordinary invoice (docs/shops.md, Orders are invoices): out_trade_no /
 * order_id is its merchant_order_id, its metadata names the connection, and the shop's side of it
 * (amount as typed, notify and return URLs, type, name, param) is kept in shop_orders. The same
 * order with the same amount in the same currency answers the same invoice (shop retries, page
 * reloads); another amount or currency is refused. Both facades call createShopOrder and map a
 * ShopRefusal to their own error shape.
 */
import type { NetworkId, TokenSymbol } from '../chains/networks.js';
import { resolveTradeType } from './trade-types.js';
import type { Context } from 'hono';
import { writeTransaction, type Db, type Trx } from '../db/database.js';
import { clientSubject } from '../http/client-ip.js';
import { createInvoiceOrThrow } from '../invoices/invoices.service.js';
import { findInvoiceAnyMerchant, findInvoiceIdByOrderId } from '../invoices/invoices.repo.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { AppError } from '../lib/errors.js';
import { randomBase64url } from '../lib/random.js';
import { CreateInvoiceSchema } from '../invoices/invoices.schemas.js';
import { USDT } from '../pricing/currencies.js';
import { connectionCurrencies, newShopKey } from './shops.service.js';
import { parseDevWebhookUrl, parseWebhookUrl, UrlRejected } from '../webhooks/url-policy.js';
import { findShopOrderByNumber, insertShopOrder, type ShopConnection, type ShopOrder } from './shops.repo.js';
import type { RateBook } from '../pricing/rate-book.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'sqlite' | 'config' | 'clock' | 'rateLimiter' | 'deliveriesQueued'> & { rates: RateBook };

/**
 * Requests one connection may make in a minute (creations and order queries). Only requests that
 * pass its signature or key check count: the pid is public (it is in every buyer's submit.php URL),
 * so wrong signatures must not spend the shop's budget; nor do replays of an existing order, since
 * every buyer holds a correctly signed submit.php form (docs/security.md, Tenants: limits and
 * fairness). Replays count per connection and client address, as many a minute.
 */
export const SHOP_REQUESTS_PER_MINUTE = 120;
/** Requests that fail a signature or key check (both protocols, any pid or none), per client address and minute. */
export const AUTH_FAILURES_PER_MINUTE = 30;
export const MAX_ORDER_NUMBER = 120;
export const MAX_FIELD = 2048;
const MAX_DESCRIPTION = 1000;

/** A request the protocol refuses; `message` is safe to show the shop (it never names the key); `status` is Epusdt's status_code. */
export class ShopRefusal extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
    readonly status: 400 | 401 | 429 = 400,
  ) {
    super(message);
    this.name = 'ShopRefusal';
  }
}

/** The one answer to a wrong signature, an unknown or deleted pid, or a key that does not match: nothing that helps guessing. */
export const AUTH_REFUSAL = 'signature verification failed';

/** What the shop sent: its side of the order (the amount exactly as typed), plus what it asked of the invoice. */
export type ShopOrderInput = Pick<ShopOrder, 'outTradeNo' | 'money' | 'notifyUrl' | 'returnUrl' | 'type' | 'name' | 'param'> & {
  /** Payment window the shop asked for (BEpusdt's `timeout`), in seconds. */
  timeoutSeconds: number | null;
  /** The currency the shop named (the WooCommerce plugin's `fiat`), if any. */
  currency: string | null;
  /** The trade type the shop named (BEpusdt's `trade_type`, or an Epay `type` that is one), if any. */
  tradeType?: string | null;
};

/**
 * The key a request is checked against when its pid names no active connection: random, held by no
 * shop, and as long as a real one, so an unknown pid costs the same signature work as a wrong key.
 */
export const NO_SHOP_KEY = newShopKey();

/**
 * The refusal of a request that failed its signature or key check, whatever the reason (wrong
 * signature, wrong key, unknown or deleted pid): counted per client address (an IPv6 client by its
 * /64), never against a connection; past the limit the answer says to retry.
 */
export async function refuseAuthentication(deps: Deps, c: Context): Promise<never> {
  await take(
    deps,
    ['shop_auth_failed', clientSubject(c, deps.config.server.trust_proxy), AUTH_FAILURES_PER_MINUTE],
    'too many requests with a wrong signature or key',
    429,
  );
  throw new ShopRefusal(AUTH_REFUSAL, undefined, 401);
}

/** One token of a limit ([scope, key, per minute]), or the protocol's refusal "MESSAGE; retry in a minute". */
async function take(deps: Deps, [scope, key, perMinute]: [string, string, number], message: string, status: 400 | 429 = 400): Promise<void> {
  try {
    await deps.rateLimiter.consume(scope, key, perMinute);
  } catch (err) {
    if (err instanceof AppError) throw new ShopRefusal(`${message}; retry in a minute`, Number(err.headers['Retry-After'] ?? 60), status);
    throw err;
  }
}

/**
 * Characters no protocol text field may hold: C0 and C1 controls (NUL, newlines, escapes), the line
 * and paragraph separators, and every bidi control (Unicode's Bidi_Control: the embeddings,
 * overrides and isolates U+202A-U+202E and U+2066-U+2069, and the marks LRM, RLM and ALM), which make
 * an order number read differently in a console, a mail or a shop's log.
 */
const UNSAFE_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Bidi_Control}]/u;

/**
 * Refuses a protocol text field (by the protocol's own name) that holds an unsafe character or
 * begins or ends with white space; absent and empty fields pass. Checked before anything is looked
 * up, so no database sees such a value (PostgreSQL's text cannot hold NUL).
 */
export function checkProtocolText(fields: Record<string, string | null | undefined>): void {
  for (const [name, value] of Object.entries(fields)) {
    if (!value) continue;
    // JSON can carry half a surrogate pair; neither database stores it as sent (it becomes U+FFFD).
    if (/\p{Cs}/u.test(value)) throw new ShopRefusal(`${name} is not valid Unicode text (an unpaired surrogate)`);
    if (UNSAFE_CHARACTER.test(value) || /^\s|\s$/.test(value)) {
      throw new ShopRefusal(`${name} must not contain control or bidi characters, nor begin or end with a space`);
    }
  }
}

/** Charges one request to the connection's budget; a ShopRefusal when it is spent. */
export async function chargeConnection(deps: Deps, connection: ShopConnection): Promise<void> {
  await take(deps, ['shop_requests', connection.id, SHOP_REQUESTS_PER_MINUTE], 'too many requests for this shop connection');
}

/**
 * Charges a signed request for an order that exists (a replay) to the connection and the client
 * address (an IPv6 client by its /64), never to the connection's own budget: the signed submit.php
 * form is in every buyer's browser, so anyone may send it again.
 */
async function chargeReplay(deps: Deps, c: Context, connection: ShopConnection): Promise<void> {
  const subject = clientSubject(c, deps.config.server.trust_proxy);
  await take(deps, ['shop_replays', `${connection.id} ${subject}`, SHOP_REQUESTS_PER_MINUTE], 'too many repeats of an existing order from this address', 429);
}

/** The notify URL under the webhook URL policy's static rules (DNS is checked before every attempt). */
function checkNotifyUrl(deps: Deps, connection: ShopConnection, raw: string): string {
  if (raw.length > MAX_FIELD) throw new ShopRefusal(`notify_url is longer than ${MAX_FIELD} characters`);
  try {
    const parsed = deps.config.devMode
      ? parseDevWebhookUrl(raw)
      : parseWebhookUrl(raw, new Set(deps.config.webhooks.allowed_ports), connection.allowHttpNotify);
    return parsed.url.href;
  } catch (err) {
    if (!(err instanceof UrlRejected)) throw err;
    if (err.reason === 'scheme' && /^http:/i.test(raw)) {
      throw new ShopRefusal('notify_url must be https; allow plain http for this shop in the console (Connect your shop) if it runs behind http');
    }
    throw new ShopRefusal(`notify_url refused: ${err.message}`);
  }
}

/** return_url: where the payer goes back; any absolute http(s) URL without credentials, kept exactly as sent. */
function checkReturnUrl(raw: string | null): string | null {
  if (raw === null || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ShopRefusal('return_url is not an absolute URL');
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username !== '' ||
    url.password !== '' ||
    raw.length > MAX_FIELD ||
    /[\s\u0000-\u001f]/.test(raw)
  ) {
    throw new ShopRefusal('return_url must be an http or https URL without credentials, at most 2048 characters');
  }
  return raw;
}

/** A decimal written without trailing fractional zeros or leading zeros ("010.50" is "10.5"). */
function plainDecimal(v: string): string {
  return (v.includes('.') ? v.replace(/0+$/, '').replace(/\.$/, '') : v).replace(/^0+(?=[0-9])/, '');
}

/**
 * The invoice body of a shop order, checked by the same schema as POST /invoices: the shop's amount
 * in the currency it names (the WooCommerce plugin's `fiat`) or else the connection's, converted by
 * [pricing] unless it is USDT.
 */
function invoiceBody(deps: Deps, connection: ShopConnection, input: ShopOrderInput, minutes: number | undefined) {
  const currency = (input.currency ?? connection.currency).toUpperCase();
  const available = connectionCurrencies(deps);
  if (!available.includes(currency)) throw new ShopRefusal(`currency ${currency} is not configured on this gateway; use one of ${available.join(', ')}`);
  if (!/^[0-9]{1,20}(\.[0-9]{1,20})?$/.test(input.money)) throw new ShopRefusal('money must be a decimal amount such as 10 or 10.50');
  const parsed = CreateInvoiceSchema.safeParse({
    merchant_order_id: input.outTradeNo,
    amount: plainDecimal(input.money),
    ...(currency !== USDT ? { currency } : {}),
    wallet_id: connection.walletId,
    ...paymentChoice(deps, input.tradeType ?? null),
    ...(input.name ? { description: input.name.slice(0, MAX_DESCRIPTION) } : {}),
    metadata: { shop_connection_id: connection.id, shop_connection_name: connection.name, shop_protocol: connection.protocol },
    ...(minutes !== undefined ? { expires_in_minutes: minutes } : {}),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ShopRefusal(`${issue.path.join('.') === 'amount' ? 'money' : issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * The network and token a shop's trade type names on this instance (none named: the wallet's first
 * network and its USDT, as before); one the instance cannot take is refused, naming those it takes.
 */
function paymentChoice(deps: Deps, tradeType: string | null): { network?: NetworkId; token?: TokenSymbol } {
  if (tradeType === null) return {};
  const choice = resolveTradeType(tradeType, deps.config.networks);
  if (!choice.ok) throw new ShopRefusal(choice.error);
  return { network: choice.network, token: choice.token };
}

/** The same amount written differently ("10", "10.00") is the same amount. */
function sameMoney(a: string, b: string): boolean {
  return plainDecimal(a) === plainDecimal(b);
}

/** The currency an invoice is priced in: its fiat price's, else USDT. */
export function invoiceCurrency(invoice: Invoice): string {
  return invoice.price?.currency ?? USDT;
}

export interface ShopOrderResult {
  invoice: Invoice;
  order: ShopOrder;
  replay: boolean;
}

/**
 * Where the checkout sends the payer back: through the gateway, which adds the signed fields for
 * Epay (see return.routes.ts). The hop is named by the invoice's checkout token, the payer's own
 * unguessable capability, never by the connection and order number, which others can know.
 */
export function returnThroughGateway(publicUrl: string, checkoutToken: string): string {
  return `${returnHopBase(publicUrl)}${checkoutToken}`;
}

/** Every return hop's link starts with this, the old `{connection}/{order}` form included. */
const returnHopBase = (publicUrl: string) => `${publicUrl.replace(/\/+$/, '')}/shops/return/`;

/**
 * The way back a checkout page offers: the invoice's stored redirect_url, except that a return hop
 * of the gateway is always given in its current form, so that a shop invoice created before the hop
 * was named by the checkout token (its stored link no longer leads anywhere) still leads back.
 */
export function checkoutReturnUrl(publicUrl: string, invoice: Pick<Invoice, 'redirectUrl' | 'checkoutToken'>): string | null {
  const url = invoice.redirectUrl;
  return url !== null && url.startsWith(returnHopBase(publicUrl)) ? returnThroughGateway(publicUrl, invoice.checkoutToken) : url;
}

/**
 * The order for a request that passed the connection's signature check: its invoice when it is a
 * replay (charged per client address, chargeReplay), else a new one (charged to the connection).
 */
export async function createShopOrder(deps: Deps, c: Context, connection: ShopConnection, input: ShopOrderInput): Promise<ShopOrderResult> {
  if (input.outTradeNo === '' || input.outTradeNo.length > MAX_ORDER_NUMBER)
    throw new ShopRefusal(`the order number must be 1 to ${MAX_ORDER_NUMBER} characters`);
  for (const [name, value] of Object.entries({ name: input.name, type: input.type, param: input.param })) {
    if (value !== null && value.length > MAX_FIELD) throw new ShopRefusal(`${name} is longer than ${MAX_FIELD} characters`);
  }
  const minutes = input.timeoutSeconds === null ? undefined : Math.min(1440, Math.max(1, Math.ceil(input.timeoutSeconds / 60)));
  const body = invoiceBody(deps, connection, input, minutes);
  const notifyUrl = checkNotifyUrl(deps, connection, input.notifyUrl);
  const returnUrl = checkReturnUrl(input.returnUrl);
  const perMinute = deps.config.rate_limits.invoices_per_merchant;
  const currency = body.currency ?? USDT;

  // A replay is the same order: the same amount in the same currency ("10" CNY is not "10" USDT).
  const replayOf = async (db: Db | Trx, charge: boolean): Promise<ShopOrderResult | undefined> => {
    const order = await findShopOrderByNumber(db, connection.id, input.outTradeNo);
    if (!order) return undefined;
    if (charge) await chargeReplay(deps, c, connection);
    const invoice = (await findInvoiceAnyMerchant(db, order.invoiceId))!;
    if (!sameMoney(order.money, input.money) || invoiceCurrency(invoice) !== currency) {
      throw new ShopRefusal(
        `order ${input.outTradeNo} was already created with another amount or currency (${order.money} ${invoiceCurrency(invoice)}); use a new order number`,
      );
    }
    return { invoice, order, replay: true };
  };
  const early = await replayOf(deps.db, true);
  if (early) return early;
  await chargeConnection(deps, connection);
  const result = await writeTransaction(deps.db, async (trx, tx) => {
    // Again inside the transaction: two identical submissions at once make one invoice (already charged as a creation).
    const again = await replayOf(trx, false);
    if (again) return again;
    const holder = await findInvoiceIdByOrderId(tx, connection.merchantId, input.outTradeNo);
    if (holder !== undefined) throw new ShopRefusal(`order number ${input.outTradeNo} is already used by another invoice of this merchant`);
    // Charged only here, once the order is known to be no replay (as POST /invoices does).
    try {
      await deps.rateLimiter.consume('invoice_create', connection.merchantId, perMinute, { tx });
    } catch (err) {
      if (err instanceof AppError)
        throw new ShopRefusal('too many invoices created by this merchant in the last minute; retry later', Number(err.headers['Retry-After'] ?? 60));
      throw err;
    }
    const now = deps.clock.now();
    const checkoutToken = randomBase64url(32);
    let created;
    try {
      created = await createInvoiceOrThrow(tx, deps, {
        merchantId: connection.merchantId,
        idempotencyKey: `shop:${connection.id}:${input.outTradeNo}`,
        checkoutToken,
        // The return link goes through the gateway (return.routes.ts), so it is not a shop's https URL the schema would check.
        body: { ...body, ...(returnUrl !== null ? { redirect_url: returnThroughGateway(deps.config.server.public_url, checkoutToken) } : {}) },
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'rate_unavailable')
        throw new ShopRefusal(`no exchange rate for ${body.currency ?? USDT} can be trusted right now; retry in a minute`);
      const detail = err instanceof AppError ? err.details?.[0] : undefined;
      if (detail) throw new ShopRefusal(`${detail.path === 'amount' ? 'money' : detail.path}: ${detail.message}`);
      if (err instanceof AppError) throw new ShopRefusal(err.message);
      throw err;
    }
    const order: ShopOrder = {
      invoiceId: created.invoice.id,
      connectionId: connection.id,
      merchantId: connection.merchantId,
      outTradeNo: input.outTradeNo,
      money: input.money,
      notifyUrl,
      returnUrl,
      type: input.type || null,
      name: input.name || null,
      param: input.param || null,
      createdAt: now,
    };
    await insertShopOrder(trx, order);
    return { invoice: created.invoice, order, replay: false };
  });
  if (!result.replay) deps.deliveriesQueued.notify();
  return result;
}
