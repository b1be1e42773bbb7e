/**
 * A shop's paid callback, from the outbox row to the recorded outcome, on the outbox every request
 * of the gateway goes through (src/webhooks/outbox.ts): the same URL policy (checked again, DNS
 * included, before every attempt; plain http only for a connection with allow_http_notify), the
 * same sender (pinned address, one deadline, no redirects), claims by instance and outcomes guarded
 * on the status, the receiver's Retry-After, a history row per attempt. What differs is the
 * protocol's own body, signature, acknowledgement and retry schedule (docs/shops.md, Callbacks).
 */
import { payerAddress } from '../chains/address-codec.js';
import { writeTransaction, type Trx } from '../db/database.js';
import type { DeliveryStatus } from '../db/schema.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { formatAmount } from '../lib/amounts.js';
import { MINUTE } from '../lib/clock.js';
import { notFound } from '../lib/errors.js';
import { DEFAULT_JITTER, RETRY_DELAYS_MS } from '../webhooks/deliverer.js';
import { claimForRetry, createOutbox, type Schedule, type Sent } from '../webhooks/outbox.js';
import type { SendOptions } from '../webhooks/sender.js';
import type { UrlPolicy } from '../webhooks/url-policy.js';
import { callbackNumber, sign } from './signing.js';
import {
  claimNotify,
  completeNotify,
  findCallback,
  findMerchantNotify,
  findNotifyById,
  findNotifyView,
  insertNotifyAttempt,
  type NotifyResult,
  type ShopCallback,
  type ShopNotify,
  type ShopNotifyView,
} from './shop-notifies.repo.js';
import { findConnection, findConnectionById, findShopOrder, type ShopConnection, type ShopOrder } from './shops.repo.js';
import type { HostLookup } from '../webhooks/url-policy.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { dnsLookup: HostLookup };

/**
 * Waits after Epay attempts 1 to 4: attempts at about 0, 1, 3, 19 and 55 minutes, as Rainbow Epay
 * itself retries. Epusdt callbacks follow the webhooks' schedule (11 attempts over about 3.9 days).
 */
export const EPAY_RETRY_DELAYS_MS: readonly number[] = [MINUTE, 2 * MINUTE, 16 * MINUTE, 36 * MINUTE];
/** Epay's schedule has no jitter (a shop's own log reads like Rainbow Epay's); a Retry-After is capped at its longest step, 36 min. */
export const EPAY_SCHEDULE: Schedule = { delays: EPAY_RETRY_DELAYS_MS, jitter: 0 };
export const EPUSDT_SCHEDULE: Schedule = { delays: RETRY_DELAYS_MS, jitter: DEFAULT_JITTER };
const USER_AGENT = 'gatewayd';

export interface ShopNotifier {
  readonly policy: UrlPolicy;
  claim(id: string, from: readonly DeliveryStatus[]): Promise<boolean>;
  /** The network part of a claimed (`sending`) callback; undefined if it is no longer claimed. */
  perform(id: string): Promise<NotifyPerformed | undefined>;
  recordIn(trx: Trx, batch: readonly NotifyPerformed[], now: number): Promise<Array<NotifyResult | undefined>>;
  /** Logs what recordIn recorded, once its transaction has committed. */
  logRecorded(batch: readonly NotifyPerformed[], results: ReadonlyArray<NotifyResult | undefined>): void;
  /** perform + record for one callback. */
  attempt(id: string): Promise<ShopNotify | undefined>;
}

export interface NotifyPerformed extends Sent {
  protocol: ShopConnection['protocol'];
  /** Nothing more is owed (connection deleted, invoice not paid): cancel instead of retrying. */
  cancel: boolean;
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
    token: payerAddress(invoice.network, invoice.walletAddress),
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

export function createShopNotifier(deps: Deps): ShopNotifier {
  const outbox = createOutbox<NotifyPerformed>(deps, {
    table: { claim: claimNotify, complete: completeNotify, insertAttempt: insertNotifyAttempt },
    schedule: (done) => (done.protocol === 'epay' ? EPAY_SCHEDULE : EPUSDT_SCHEDULE),
    owed: async (_trx, done) => !done.cancel,
    crash: { message: 'shop callback crashed', idField: 'shop_notify_id' },
  });

  const perform = async (id: string): Promise<NotifyPerformed | undefined> => {
    const notify = await findNotifyById(deps.db, id);
    if (!notify || notify.status !== 'sending') return undefined;
    const connection = await findConnectionById(deps.db, notify.connectionId);
    const order = await findShopOrder(deps.db, notify.invoiceId);
    const invoice = await findInvoiceAnyMerchant(deps.db, notify.invoiceId);
    const protocol = connection?.protocol ?? 'epay';
    if (!connection?.active || !order || invoice?.status !== 'confirmed') {
      const error = !connection?.active ? 'not sent: the shop connection was deleted' : 'not sent: the invoice is not paid';
      const outcome = { ok: false, responseStatus: null, error };
      return { id, protocol, attempts: notify.attempts, cancel: true, outcome, startedAt: deps.clock.now(), durationMs: 0, attempted: false };
    }
    const request = protocol === 'epay' ? epayRequest(connection, order, invoice) : epusdtRequest(connection, order, invoice);
    const { outcome, startedAt, durationMs } = await outbox.send(id, request.url, connection.allowHttpNotify, () => request);
    return { id, protocol, attempts: notify.attempts + 1, cancel: false, outcome, startedAt, durationMs, attempted: true };
  };

  const logRecorded = (batch: readonly NotifyPerformed[], results: ReadonlyArray<NotifyResult | undefined>): void => {
    batch.forEach((done, i) => {
      const result = results[i];
      const log = { shop_notify_id: done.id, protocol: done.protocol, attempt: done.attempts, response_status: done.outcome.responseStatus };
      if (!result) deps.log.warn(log, 'shop callback attempt finished after its callback was reset; the outcome is not recorded and it will be sent again');
      else if (done.outcome.ok) deps.log.info(log, 'shop callback acknowledged');
      else deps.log.warn({ ...log, error: result.lastError, status: result.status, next_attempt_at: result.nextAttemptAt }, 'shop callback not acknowledged');
    });
  };

  return {
    policy: outbox.policy,
    claim: outbox.claim,
    perform,
    recordIn: outbox.recordIn,
    logRecorded,
    async attempt(id) {
      const done = await perform(id);
      if (done) {
        const results = await writeTransaction(deps.db, (trx) => outbox.recordIn(trx, [done], deps.clock.now()));
        logRecorded([done], results);
      }
      return findNotifyById(deps.db, id);
    },
  };
}

/** One attempt now for a `failed` or `pending` callback; delivered, cancelled and in-flight ones are refused. */
export async function retryShopNotify(deps: Deps, notifier: ShopNotifier, merchantId: string, id: string): Promise<ShopNotifyView> {
  const notify = await findMerchantNotify(deps.db, merchantId, id);
  if (!notify) throw notFound('Shop callback');
  await claimForRetry(notifier, notify, 'callback');
  await notifier.attempt(notify.id);
  return (await findNotifyView(deps.db, merchantId, id))!;
}

/** The same, for a callback named under its connection (POST /shop-connections/{id}/callbacks/{callback_id}/retry); answers it with its attempts. */
export async function retryCallback(deps: Deps, notifier: ShopNotifier, merchantId: string, connectionId: string, id: string): Promise<ShopCallback> {
  if (!(await findConnection(deps.db, merchantId, connectionId))) throw notFound('Shop connection');
  const callback = await findCallback(deps.db, merchantId, connectionId, id);
  if (!callback) throw notFound('Shop callback');
  await claimForRetry(notifier, callback, 'callback');
  await notifier.attempt(callback.id);
  return (await findCallback(deps.db, merchantId, connectionId, id))!;
}
