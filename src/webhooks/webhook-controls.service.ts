/**
 * Webhook controls (docs/api.md, Webhooks): PATCH (pause and resume, the event types, the URL) and
 * the secret roll, during which the old secret keeps signing beside the new one for 24 hours.
 */
import { writeTransaction } from '../db/database.js';
import type { EventType } from '../events/events.repo.js';
import { HOUR } from '../lib/clock.js';
import { AppError, notFound } from '../lib/errors.js';
import type { Deliverer } from './deliverer.js';
import { newWebhookSecret } from './signer.js';
import { cancelPendingDeliveries, findWebhook, rollWebhookSecret, updateWebhook, type Webhook } from './webhooks.repo.js';
import { checkedWebhookUrl } from './webhooks.service.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'>;

/** How long the secret before a roll keeps signing. */
export const SECRET_OVERLAP_MS = 24 * HOUR;

export interface WebhookChanges {
  active?: boolean;
  enabled_events?: EventType[] | null;
  url?: string;
}

async function activeWebhook(trx: Parameters<Parameters<typeof writeTransaction>[1]>[0], merchantId: string, id: string): Promise<Webhook> {
  const webhook = await findWebhook(trx, merchantId, id);
  if (!webhook) throw notFound('Webhook');
  if (!webhook.active) throw new AppError('webhook_inactive', 'This webhook was deleted; register the URL again to receive events');
  return webhook;
}

/** Pausing (active=false) cancels the pending deliveries, as deleting does; resuming takes new events again. */
export async function changeWebhook(deps: Deps, deliverer: Deliverer, merchantId: string, id: string, changes: WebhookChanges): Promise<Webhook> {
  const url = changes.url === undefined ? undefined : await checkedWebhookUrl(deps, deliverer, changes.url);
  const webhook = await writeTransaction(deps.db, async (trx) => {
    const before = await activeWebhook(trx, merchantId, id);
    const paused = changes.active === undefined ? undefined : !changes.active;
    await updateWebhook(trx, before.id, { url, paused, enabledEvents: changes.enabled_events });
    if (paused && !before.paused) await cancelPendingDeliveries(trx, before.id, deps.clock.now());
    return (await findWebhook(trx, merchantId, id))!;
  });
  deps.log.info({ merchant_id: merchantId, webhook_id: id, fields: Object.keys(changes) }, 'webhook changed');
  return webhook;
}

/** A new secret (shown once); the current one signs beside it until the returned time. */
export async function rollSecret(deps: Deps, merchantId: string, id: string): Promise<{ webhook: Webhook; secret: string }> {
  const secret = newWebhookSecret();
  const webhook = await writeTransaction(deps.db, async (trx) => {
    const before = await activeWebhook(trx, merchantId, id);
    await rollWebhookSecret(trx, before, secret, deps.clock.now() + SECRET_OVERLAP_MS);
    return (await findWebhook(trx, merchantId, id))!;
  });
  deps.log.info({ merchant_id: merchantId, webhook_id: id }, 'webhook secret rolled');
  return { webhook, secret };
}
