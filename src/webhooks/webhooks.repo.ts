/** All SQL of webhooks and their deliveries (the outbox rows written by insertEvent). */
import { compileQuery, type Param } from '../db/compiled.js';
import { INSTANCE_NAME, type Db, type Trx, type Tx } from '../db/database.js';
import { abandonedClaim } from '../db/leader.js';
import type { DeliveriesTable, DeliveryAttemptsTable, DeliveryStatus, WebhooksTable } from '../db/schema.js';
import type { Selectable } from 'kysely';
import { newId } from '../lib/ids.js';
import type { Delivery } from './delivery.model.js';
import { rowToEvent, type EventType, type StoredEvent } from '../events/events.repo.js';
import { attemptColumns, resultColumns, toAttemptRecord, type AttemptRecord, type OutboxResult } from './outbox.model.js';

export interface Webhook {
  id: string;
  merchantId: string;
  url: string;
  /** Needed in clear to sign every attempt; never leaves through a response mapper. */
  secret: string;
  /** False once deleted (DELETE): for good. */
  active: boolean;
  /** Paused by PATCH active=false: no new deliveries until resumed. */
  paused: boolean;
  /** The event types it receives; null = every type. */
  enabledEvents: EventType[] | null;
  /** The secret before the last roll and when it stops signing (null when no roll is in progress). */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  createdAt: number;
  deactivatedAt: number | null;
}

export type { Delivery } from './delivery.model.js';

/** Most webhooks and deliveries a list shows (the Dashboard). */
export const LIST_LIMIT = 100;

function toWebhook(row: Selectable<WebhooksTable>): Webhook {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    url: row.url,
    secret: row.secret,
    active: row.active === 1,
    paused: row.paused === 1,
    enabledEvents: row.enabled_events === null ? null : (JSON.parse(row.enabled_events) as EventType[]),
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    createdAt: row.created_at,
    deactivatedAt: row.deactivated_at,
  };
}

function toDelivery(row: Selectable<DeliveriesTable>): Delivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    merchantId: row.merchant_id,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    deliveredAt: row.delivered_at,
    lastError: row.last_error,
    responseStatus: row.response_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function countActiveWebhooks(db: Db | Trx, merchantId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('active', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertWebhook(
  trx: Db | Trx,
  input: { merchantId: string; url: string; secret: string; enabledEvents: EventType[] | null },
  now: number,
): Promise<Webhook> {
  const row = {
    id: newId('whk'),
    merchant_id: input.merchantId,
    url: input.url,
    secret: input.secret,
    active: 1,
    created_at: now,
    deactivated_at: null,
    enabled_events: input.enabledEvents === null ? null : JSON.stringify(input.enabledEvents),
    paused: 0,
    previous_secret: null,
    previous_secret_expires_at: null,
  };
  await trx.insertInto('webhooks').values(row).execute();
  return toWebhook(row);
}

/** The merchant's active (not deleted) webhook with exactly this URL, if any. */
export async function findActiveWebhookByUrl(db: Db | Trx, merchantId: string, url: string): Promise<Webhook | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('url', '=', url)
    .where('active', '=', 1)
    .executeTakeFirst();
  return row ? toWebhook(row) : undefined;
}

/** PATCH /webhooks/{id}: the fields given, on an active webhook. */
export async function updateWebhook(
  trx: Trx,
  webhookId: string,
  changes: { url?: string; paused?: boolean; enabledEvents?: EventType[] | null },
): Promise<void> {
  const set: Partial<{ url: string; paused: number; enabled_events: string | null }> = {};
  if (changes.url !== undefined) set.url = changes.url;
  if (changes.paused !== undefined) set.paused = changes.paused ? 1 : 0;
  if (changes.enabledEvents !== undefined) set.enabled_events = changes.enabledEvents === null ? null : JSON.stringify(changes.enabledEvents);
  if (Object.keys(set).length > 0) await trx.updateTable('webhooks').set(set).where('id', '=', webhookId).where('active', '=', 1).execute();
}

/** A new signing secret; the current one keeps signing beside it until `previousUntil`. */
export async function rollWebhookSecret(trx: Trx, webhook: Webhook, secret: string, previousUntil: number): Promise<void> {
  await trx
    .updateTable('webhooks')
    .set({ secret, previous_secret: webhook.secret, previous_secret_expires_at: previousUntil })
    .where('id', '=', webhook.id)
    .where('active', '=', 1)
    .execute();
}

/** A webhook of this merchant (active or not); another merchant's is absent. */
export async function findWebhook(db: Db | Trx, merchantId: string, id: string): Promise<Webhook | undefined> {
  const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? toWebhook(row) : undefined;
}

/** Active webhooks first, then newest first. */
export async function listWebhooks(db: Db, merchantId: string, limit = LIST_LIMIT): Promise<Webhook[]> {
  const rows = await db
    .selectFrom('webhooks')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('active', 'desc')
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toWebhook);
}

/** Guarded: true only for the call that turned an active webhook off. */
export async function deactivateWebhook(trx: Trx, webhookId: string, now: number): Promise<boolean> {
  const r = await trx.updateTable('webhooks').set({ active: 0, deactivated_at: now }).where('id', '=', webhookId).where('active', '=', 1).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function cancelPendingDeliveries(trx: Trx, webhookId: string, now: number): Promise<number> {
  const r = await trx
    .updateTable('deliveries')
    .set({ status: 'cancelled', next_attempt_at: null, updated_at: now })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function findDelivery(db: Db | Trx, merchantId: string, id: string): Promise<Delivery | undefined> {
  const row = await db.selectFrom('deliveries').selectAll().where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? toDelivery(row) : undefined;
}

export async function findDeliveryById(db: Db | Trx, id: string): Promise<Delivery | undefined> {
  const row = await db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toDelivery(row) : undefined;
}

/** Newest first. */
export async function listDeliveries(db: Db, merchantId: string, limit = LIST_LIMIT): Promise<Delivery[]> {
  const rows = await db
    .selectFrom('deliveries')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toDelivery);
}

export async function findDeliveryFor(db: Db, webhookId: string, eventId: string): Promise<Delivery | undefined> {
  const row = await db.selectFrom('deliveries').selectAll().where('webhook_id', '=', webhookId).where('event_id', '=', eventId).executeTakeFirst();
  return row ? toDelivery(row) : undefined;
}

/** A webhook with pending deliveries, and when its oldest pending delivery is due. */
export interface PendingWebhook {
  webhookId: string;
  merchantId: string;
  /** next_attempt_at of its oldest pending delivery (ms). */
  due: number;
}

const nextPendingWebhookQuery = compileQuery((db, p: Param<{ after: string }>) =>
  db
    .selectFrom('deliveries')
    .select(['webhook_id', 'merchant_id', 'next_attempt_at'])
    .where('status', '=', 'pending')
    .where('webhook_id', '>', p('after'))
    .orderBy('webhook_id')
    .orderBy('next_attempt_at')
    .limit(1),
);

/**
 * Every webhook with a pending delivery due by `now`, found by skipping from one webhook to the
 * next along deliveries_webhook_due_idx: one index seek per webhook with pending deliveries,
 * however many deliveries each has waiting (a tenant's backlog costs nothing here).
 * Compiled queries: call inside the caller's transaction.
 */
export async function findDueWebhooks(tx: Tx, now: number): Promise<PendingWebhook[]> {
  const out: PendingWebhook[] = [];
  let after = '';
  for (;;) {
    const row = await nextPendingWebhookQuery.first(tx, { after });
    if (!row) return out;
    if (row.next_attempt_at !== null && row.next_attempt_at <= now)
      out.push({ webhookId: row.webhook_id, merchantId: row.merchant_id, due: row.next_attempt_at });
    after = row.webhook_id;
  }
}

const dueOfWebhookQuery = compileQuery((db, p: Param<{ webhook: string; now: number; limit: number }>, { dialect }) => {
  const q = db
    .selectFrom('deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('webhook_id', '=', p('webhook'))
    .where('next_attempt_at', '<=', p('now'))
    // SQLite: index order, ties by insertion order (rowid), with no sort of the webhook's backlog.
    .orderBy('next_attempt_at');
  // PostgreSQL has no insertion order: ties go by creation time, then id; rows another instance's
  // claim has locked are skipped, not waited for.
  return dialect === 'postgres' ? q.orderBy('created_at').orderBy('id').limit(p('limit')).forUpdate().skipLocked() : q.limit(p('limit'));
});

/** The oldest due pending deliveries of one webhook, at most `limit`. */
export async function findDueOfWebhook(tx: Tx, webhookId: string, now: number, limit: number): Promise<string[]> {
  return (await dueOfWebhookQuery.all(tx, { webhook: webhookId, now, limit })).map((r) => r.id);
}

/**
 * Marks a delivery as in flight. Guarded on its current status (and, for the scheduler, on being
 * due), so two claimers never send the same attempt.
 */
export async function claimDelivery(trx: Trx | Db, id: string, from: readonly DeliveryStatus[], now: number, dueOnly: boolean): Promise<boolean> {
  let q = trx
    .updateTable('deliveries')
    .set({ status: 'sending', updated_at: now, claimed_by: INSTANCE_NAME })
    .where('id', '=', id)
    .where('status', 'in', [...from]);
  if (dueOnly) q = q.where('next_attempt_at', '<=', now);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export interface AttemptContext {
  delivery: Delivery;
  webhook: Webhook;
  event: StoredEvent;
}

export async function loadAttemptContext(db: Db, deliveryId: string): Promise<AttemptContext | undefined> {
  const delivery = await findDeliveryById(db, deliveryId);
  if (!delivery) return undefined;
  const webhook = await db.selectFrom('webhooks').selectAll().where('id', '=', delivery.webhookId).executeTakeFirst();
  const event = await db.selectFrom('events').selectAll().where('id', '=', delivery.eventId).executeTakeFirst();
  if (!webhook || !event) return undefined;
  return { delivery, webhook: toWebhook(webhook), event: rowToEvent(event) };
}

/** How a delivery stands after an attempt (the outbox's result). */
export type AttemptResult = OutboxResult;

/** Records the end of an attempt. Guarded on `sending`: a delivery reset by crash recovery is left alone. */
export async function completeAttempt(trx: Trx, id: string, result: AttemptResult, now: number): Promise<boolean> {
  const r = await trx.updateTable('deliveries').set(resultColumns(result, now)).where('id', '=', id).where('status', '=', 'sending').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** One attempt's history row (delivery_attempts, migration 0026), camel-cased. */
export interface DeliveryAttempt extends AttemptRecord {
  deliveryId: string;
}

/** Writes an attempt's history row; called in the transaction whose completeAttempt recorded it. */
export async function insertDeliveryAttempt(trx: Trx, a: DeliveryAttempt): Promise<void> {
  await trx
    .insertInto('delivery_attempts')
    .values({ delivery_id: a.deliveryId, ...attemptColumns(a) })
    .execute();
}

/** A delivery's attempts, first to last. */
export async function listDeliveryAttempts(db: Db | Trx, deliveryId: string): Promise<DeliveryAttempt[]> {
  const rows: Array<Selectable<DeliveryAttemptsTable>> = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt')
    .execute();
  return rows.map((r) => ({ deliveryId: r.delivery_id, ...toAttemptRecord(r) }));
}

export async function isWebhookActive(trx: Trx | Db, webhookId: string): Promise<boolean> {
  const row = await trx.selectFrom('webhooks').select('active').where('id', '=', webhookId).executeTakeFirst();
  return row?.active === 1;
}

/**
 * Crash recovery: `sending` rows go back to `pending`, due now. One process (SQLite): all of them,
 * nothing is in flight at start. Several instances: those claimed before `claimedBefore` (longer
 * ago than any attempt can take), and those whose claimer is not among `live` (its process died).
 */
export async function resetSendingDeliveries(db: Db, now: number, claimedBefore?: number, live?: readonly string[]): Promise<number> {
  let q = db.updateTable('deliveries').set({ status: 'pending', next_attempt_at: now, updated_at: now }).where('status', '=', 'sending');
  if (claimedBefore !== undefined) q = q.where(abandonedClaim(claimedBefore, live));
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}
