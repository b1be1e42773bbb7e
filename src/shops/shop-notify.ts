/**
 * A shop's paid callback, from the outbox row to the recorded outcome, on the webhooks' delivery
 * machinery: the same URL policy (checked again, DNS included, before every attempt; plain http
 * only for a connection with allow_http_notify), the same sender (pinned address, one deadline, no
 * redirects), claims and outcomes guarded on the status. What differs is the protocol's own body,
 * signature, acknowledgement and retry schedule (docs/shops.md, Callbacks).
 */
import { writeTransaction, type Trx } from '../db/database.js';
import type { DeliveryStatus } from '../db/schema.js';
import type { AppDeps } from '../app-deps.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { formatAmount } from '../lib/amounts.js';
import { MINUTE } from '../lib/clock.js';
import { AppError, notFound } from '../lib/errors.js';
import { DEFAULT_JITTER, RETRY_DELAYS_MS } from '../webhooks/deliverer.js';
import { createSender, type AttemptOutcome, type SendOptions } from '../webhooks/sender.js';
import { createUrlPolicy, UrlRejected, type UrlPolicy } from '../webhooks/url-policy.js';
import { callbackNumber, sign } from './signing.js';
import {
  claimNotify,
  completeNotify,
  findMerchantNotify,
  findNotifyById,
  findNotifyView,
  type NotifyResult,
  type ShopNotify,
  type ShopNotifyView,
} from './shop-notifies.repo.js';
import { findConnectionById, findShopOrder, type ShopConnection, type ShopOrder } from './shops.repo.js';

/**
 * Waits after Epay attempts 1 to 4: attempts at about 0, 1, 3, 19 and 55 minutes, as Rainbow Epay
 * itself retries. Epusdt callbacks follow the webhooks' schedule (11 attempts over about 3.9 days).
 */
export const EPAY_RETRY_DELAYS_MS: readonly number[] = [MINUTE, 2 * MINUTE, 16 * MINUTE, 36 * MINUTE];
const MAX_ERROR_LENGTH = 500;
const USER_AGENT = 'gatewayd';

export interface ShopNotifier {
  readonly policy: UrlPolicy;
  claim(id: string, from: readonly DeliveryStatus[]): Promise<boolean>;
  /** The network part of a claimed (`sending`) callback; undefined if it is no longer claimed. */
  perform(id: string): Promise<NotifyPerformed | undefined>;
  recordIn(trx: Trx, batch: readonly NotifyPerformed[], now: number): Promise<Array<NotifyResult | undefined>>;
  /** perform + record for one callback. */
  attempt(id: string): Promise<ShopNotify | undefined>;
}

export interface NotifyPerformed {
  id: string;
  protocol: ShopConnection['protocol'];
  attempts: number;
  /** Nothing more is owed (connection deleted, invoice not paid): cancel instead of retrying. */
  cancel: boolean;
  outcome: AttemptOutcome;
}

interface Request {
  url: string;
  body: string;
  headers: Record<string, string>;
  options: SendOptions;
}

/** A short, printable excerpt of what the shop answered, for last_error. */
function excerpt(body: string): string {
  const text = body.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return text === '' ? 'an empty body' : `"${text.slice(0, 80)}${text.length > 80 ? '…' : ''}"`;
}

/** The fields of Epay's paid notification, signed: what notify_url and return_url receive as their query. */
export function epayQuery(connection: ShopConnection, order: ShopOrder, invoice: Invoice): string {
  // Empty values are never sent: V2Board and Xboard hash every field they receive, empty ones included.
  const fields: Record<string, string> = {
    pid: String(connection.pid),
    trade_no: invoice.id,
    out_trade_no: order.outTradeNo,
    ...(order.type ? { type: order.type } : {}),
    ...(order.name ? { name: order.name } : {}),
    money: order.money,
    trade_status: 'TRADE_SUCCESS',
    ...(order.param ? { param: order.param } : {}),
  };
  return new URLSearchParams({ ...fields, sign: sign(fields, connection.secret), sign_type: 'MD5' }).toString();
}

/** `url` with `query` appended after its own query, if any ("&" then, as Rainbow Epay does). */
export function withQuery(url: string, query: string): string {
  const separator = !url.includes('?') ? '?' : /[?&]$/.test(url) ? '' : '&';
  return `${url}${separator}${query}`;
}

/**
 * Epay: a GET to notify_url with the order's fields; an answer whose trimmed body is "success" (any
 * case) acknowledges, whatever its status. Only that word: "unsuccessful, bad signature" contains
 * it and is a refusal.
 */
export function epayRequest(connection: ShopConnection, order: ShopOrder, invoice: Invoice): Request {
  return {
    url: withQuery(order.notifyUrl, epayQuery(connection, order, invoice)),
    body: '',
    headers: { 'user-agent': USER_AGENT },
    options: {
      method: 'GET',
      judge: (status, body) => (/^success$/i.test(body.trim()) ? null : `HTTP ${status}: the shop answered ${excerpt(body)}, not "success"`),
    },
  };
}

/**
 * Epusdt: a JSON POST with status 2 (paid), the shop's amount as it sent it and the USDT received,
 * signed over every field; numbers are written as PHP prints them back, and nothing zero or false
 * is sent (the WHMCS module drops those before hashing). "ok" (dujiaoka, WHMCS) or "success"
 * (the WooCommerce plugin) acknowledges, whatever the status.
 */
export function epusdtRequest(connection: ShopConnection, order: ShopOrder, invoice: Invoice): Request {
  const fields: Record<string, string | number> = {
    trade_id: invoice.id,
    order_id: order.outTradeNo,
    amount: callbackNumber(order.money),
    actual_amount: callbackNumber(formatAmount(invoice.receivedAmount ?? invoice.payableAmount)),
    token: invoice.walletAddress,
    ...(invoice.txHash ? { block_transaction_id: invoice.txHash } : {}),
    status: 2,
  };
  return {
    url: order.notifyUrl,
    body: JSON.stringify({ ...fields, signature: sign(fields, connection.secret) }),
    headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT },
    options: {
      method: 'POST',
      judge: (status, body) => (/^(ok|success)$/i.test(body.trim()) ? null : `HTTP ${status}: the shop answered ${excerpt(body)}, not "ok"`),
    },
  };
}

export function createShopNotifier(deps: AppDeps): ShopNotifier {
  const policy = createUrlPolicy(deps.config, deps.dnsLookup);
  const sender = createSender(deps.config);

  const retryDelay = (protocol: ShopConnection['protocol'], attemptsMade: number): number | undefined => {
    if (protocol === 'epay') return EPAY_RETRY_DELAYS_MS[attemptsMade - 1];
    const base = RETRY_DELAYS_MS[attemptsMade - 1];
    return base === undefined ? undefined : Math.round(base * (1 + DEFAULT_JITTER * (2 * Math.random() - 1)));
  };

  const perform = async (id: string): Promise<NotifyPerformed | undefined> => {
    const notify = await findNotifyById(deps.db, id);
    if (!notify || notify.status !== 'sending') return undefined;
    const connection = await findConnectionById(deps.db, notify.connectionId);
    const order = await findShopOrder(deps.db, notify.invoiceId);
    const invoice = await findInvoiceAnyMerchant(deps.db, notify.invoiceId);
    const protocol = connection?.protocol ?? 'epay';
    if (!connection?.active || !order || invoice?.status !== 'confirmed') {
      const error = !connection?.active ? 'not sent: the shop connection was deleted' : 'not sent: the invoice is not paid';
      return { id, protocol, attempts: notify.attempts, cancel: true, outcome: { ok: false, responseStatus: null, error } };
    }
    const request = protocol === 'epay' ? epayRequest(connection, order, invoice) : epusdtRequest(connection, order, invoice);
    let outcome: AttemptOutcome;
    try {
      const target = await policy.check(request.url, { allowHttp: connection.allowHttpNotify });
      outcome = await sender.send(target, request.body, request.headers, request.options);
    } catch (err) {
      if (err instanceof UrlRejected) {
        outcome = { ok: false, responseStatus: null, error: `not sent: ${err.message}` };
      } else {
        deps.log.error({ err, shop_notify_id: id }, 'shop callback crashed');
        outcome = { ok: false, responseStatus: null, error: 'internal error while sending; see the server log' };
      }
    }
    return { id, protocol, attempts: notify.attempts + 1, cancel: false, outcome };
  };

  const resultOf = (done: NotifyPerformed, now: number): NotifyResult => {
    const { outcome, attempts } = done;
    if (outcome.ok) return { status: 'delivered', attempts, nextAttemptAt: null, deliveredAt: now, lastError: null, responseStatus: outcome.responseStatus };
    const base = { attempts, deliveredAt: null, lastError: (outcome.error ?? 'failed').slice(0, MAX_ERROR_LENGTH), responseStatus: outcome.responseStatus };
    if (done.cancel) return { status: 'cancelled', nextAttemptAt: null, ...base };
    const delay = retryDelay(done.protocol, attempts);
    return delay === undefined ? { status: 'failed', nextAttemptAt: null, ...base } : { status: 'pending', nextAttemptAt: now + delay, ...base };
  };

  const recordIn = async (trx: Trx, batch: readonly NotifyPerformed[], now: number): Promise<Array<NotifyResult | undefined>> => {
    const out: Array<NotifyResult | undefined> = [];
    for (const done of batch) {
      const result = resultOf(done, now);
      out.push((await completeNotify(trx, done.id, result, now)) ? result : undefined);
      const log = { shop_notify_id: done.id, protocol: done.protocol, attempt: done.attempts, response_status: done.outcome.responseStatus };
      if (done.outcome.ok) deps.log.info(log, 'shop callback acknowledged');
      else deps.log.warn({ ...log, error: result.lastError, status: result.status }, 'shop callback not acknowledged');
    }
    return out;
  };

  return {
    policy,
    claim: (id, from) => claimNotify(deps.db, id, from, deps.clock.now(), false),
    perform,
    recordIn,
    async attempt(id) {
      const done = await perform(id);
      if (done) await writeTransaction(deps.db, (trx) => recordIn(trx, [done], deps.clock.now()));
      return findNotifyById(deps.db, id);
    },
  };
}

/** One attempt now for a `failed` or `pending` callback; delivered, cancelled and in-flight ones are refused. */
export async function retryShopNotify(deps: AppDeps, notifier: ShopNotifier, merchantId: string, id: string): Promise<ShopNotifyView> {
  const notify = await findMerchantNotify(deps.db, merchantId, id);
  if (!notify) throw notFound('Shop callback');
  if (notify.status !== 'failed' && notify.status !== 'pending') {
    throw new AppError('delivery_not_retryable', `A ${notify.status} callback cannot be retried; only failed or pending ones can`);
  }
  if (!(await notifier.claim(notify.id, ['failed', 'pending']))) {
    throw new AppError('delivery_not_retryable', 'This callback is being sent right now or has changed; reload it');
  }
  await notifier.attempt(notify.id);
  return (await findNotifyView(deps.db, merchantId, id))!;
}
