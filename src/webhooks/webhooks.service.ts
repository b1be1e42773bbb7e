/**
 * The rules of webhooks: registration (URL policy, 16 active at most, secret shown once),
 * deletion (deactivate and cancel what is pending), the test event and manual retry.
 */
import { writeTransaction } from '../db/database.js';
import { insertEvent, type EventType, type StoredEvent } from '../events/events.repo.js';
import { AppError, notFound } from '../lib/errors.js';
import type { Deliverer } from './deliverer.js';
import { claimForRetry } from './outbox.js';
import { newWebhookSecret } from './signer.js';
import { UrlRejected } from './url-policy.js';
import { canonicalUri } from '../lib/uri.js';
import { webhookUriRule } from './webhooks.schemas.js';
import {
  cancelPendingDeliveries,
  countActiveWebhooks,
  deactivateWebhook,
  findDelivery,
  findDeliveryFor,
  findActiveWebhookByUrl,
  findWebhook,
  insertWebhook,
  type Delivery,
  type Webhook,
} from './webhooks.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'>;

export const MAX_ACTIVE_WEBHOOKS = 16;
/**
 * Test events and manual retries make this server send a request on demand; a per-account limit
 * keeps a stolen session from turning it into a traffic source against someone's endpoint.
 */
export const MANUAL_SENDS_PER_MINUTE = 30;

/**
 * The URL as it will be stored, after the URL policy (DNS included: never inside a transaction) and
 * the document's pattern for this instance (src/lib/uri.ts): what is stored is a valid `format: uri`.
 */
export async function checkedWebhookUrl(deps: Pick<Deps, 'config'>, deliverer: Deliverer, rawUrl: string): Promise<string> {
  try {
    const { href } = (await deliverer.policy.check(rawUrl)).url;
    const rule = webhookUriRule(deps.config);
    if (canonicalUri(rawUrl, rule) !== href)
      throw new UrlRejected('not_url', 'only the characters RFC 3986 allows may appear as they are (percent-encode the rest), and the host must be a DNS name');
    return href;
  } catch (err) {
    if (err instanceof UrlRejected)
      throw new AppError('invalid_webhook_url', `Webhook URL refused: ${err.message}`, [{ path: 'url', message: err.message, reason: err.reason }]);
    throw err;
  }
}

/**
 * A new webhook and its secret (shown once), or, when this URL already is an active webhook of the
 * merchant, that webhook (no secret, nothing changed): a repeated registration never makes a second
 * endpoint that would receive every event twice.
 */
export async function registerWebhook(
  deps: Deps,
  deliverer: Deliverer,
  merchantId: string,
  rawUrl: string,
  enabledEvents: EventType[] | null = null,
): Promise<{ webhook: Webhook; secret: string | null }> {
  const url = await checkedWebhookUrl(deps, deliverer, rawUrl);
  const secret = newWebhookSecret();
  const result = await writeTransaction(deps.db, async (trx) => {
    const existing = await findActiveWebhookByUrl(trx, merchantId, url);
    if (existing) return { webhook: existing, secret: null };
    if ((await countActiveWebhooks(trx, merchantId)) >= MAX_ACTIVE_WEBHOOKS) {
      throw new AppError('webhook_limit_reached', `At most ${MAX_ACTIVE_WEBHOOKS} active webhooks per account; delete one first`);
    }
    return { webhook: await insertWebhook(trx, { merchantId, url, secret, enabledEvents }, deps.clock.now()), secret };
  });
  if (result.secret) deps.log.info({ merchant_id: merchantId, webhook_id: result.webhook.id, host: new URL(url).hostname }, 'webhook registered');
  return result;
}

/** Deactivates the webhook and cancels its pending deliveries. Deleting an inactive one again is a no-op. */
export async function deleteWebhook(deps: Deps, merchantId: string, webhookId: string): Promise<void> {
  const cancelled = await writeTransaction(deps.db, async (trx) => {
    const webhook = await findWebhook(trx, merchantId, webhookId);
    if (!webhook) throw notFound('Webhook');
    const now = deps.clock.now();
    if (!(await deactivateWebhook(trx, webhook.id, now))) return 0;
    return cancelPendingDeliveries(trx, webhook.id, now);
  });
  deps.log.info({ merchant_id: merchantId, webhook_id: webhookId, cancelled }, 'webhook deleted');
}

/**
 * Stores a `webhook.test` event for this webhook only and makes its first attempt right away, so
 * the answer shows the outcome. A failed first attempt is retried on the usual schedule.
 */
export async function sendTestEvent(
  deps: Deps,
  deliverer: Deliverer,
  merchantId: string,
  webhookId: string,
): Promise<{ event: StoredEvent; deliveries: Delivery[] }> {
  const event = await writeTransaction(deps.db, async (trx, tx) => {
    const webhook = await findWebhook(trx, merchantId, webhookId);
    if (!webhook) throw notFound('Webhook');
    if (!webhook.active) throw new AppError('webhook_inactive', 'This webhook was deleted; register the URL again to receive events');
    return insertEvent(tx, { merchantId, type: 'webhook.test', data: { webhook_id: webhook.id }, webhookId: webhook.id }, deps.clock.now());
  });
  let delivery = await findDeliveryFor(deps.db, webhookId, event.id);
  if (delivery && (await deliverer.claim(delivery.id, ['pending']))) {
    delivery = await deliverer.attempt(delivery.id);
  } else {
    // The worker took it first: it is being sent; let the worker know in any case.
    deps.deliveriesQueued.notify();
  }
  return { event, deliveries: delivery ? [delivery] : [] };
}

/** One attempt now for a `failed` or `pending` delivery; `delivered`, `cancelled` and in-flight ones are refused. */
export async function retryDelivery(deps: Deps, deliverer: Deliverer, merchantId: string, deliveryId: string): Promise<Delivery> {
  const delivery = await findDelivery(deps.db, merchantId, deliveryId);
  if (!delivery) throw notFound('Delivery');
  await claimForRetry(deliverer, delivery, 'delivery', async () => {
    const webhook = await findWebhook(deps.db, merchantId, delivery.webhookId);
    if (!webhook?.active) throw new AppError('webhook_inactive', 'The webhook of this delivery was deleted');
  });
  const after = await deliverer.attempt(delivery.id);
  if (!after) throw notFound('Delivery');
  return after;
}
