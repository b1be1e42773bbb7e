/**
 * Events and the webhook outbox. An event is stored in the same transaction as the change that
 * caused it, and fans out there to one pending Delivery per active webhook of its merchant, so an
 * acknowledged change can never lose its notifications.
 */
import { compileQuery, runTogether, type BoundQuery, type Param } from '../db/compiled.js';
import type { Db, Tx } from '../db/database.js';
import { pageQueries, readPage, type Cursor, type Page, type PageRequest } from '../db/paging.js';
import { newId } from '../lib/ids.js';
import { queueShopNotify } from '../shops/shop-notifies.repo.js';
import { queueTelegramNotice } from '../telegram/telegram.queue.js';

export const EVENT_TYPES = [
  'invoice.created',
  'invoice.confirmed',
  'invoice.expired',
  'invoice.review',
  'invoice.partially_paid',
  'invoice.late_payment',
  'invoice.payment_seen',
  'invoice.payment_dropped',
  'transfer.unmatched',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface StoredEvent {
  id: string;
  merchantId: string;
  type: EventType;
  invoiceId: string | null;
  data: Record<string, unknown>;
  createdAt: number;
}

export interface NewEvent {
  merchantId: string;
  type: EventType;
  invoiceId?: string | null;
  data: Record<string, unknown>;
  /** Deliver to this webhook only (webhook.test); otherwise to every active webhook of the merchant. */
  webhookId?: string;
}

const insertEventQuery = compileQuery(
  (db, p: Param<{ id: string; merchantId: string; type: EventType; invoiceId: string | null; data: string; now: number }>) =>
    db
      .insertInto('events')
      .values({ id: p('id'), merchant_id: p('merchantId'), type: p('type'), invoice_id: p('invoiceId'), data: p('data'), created_at: p('now') }),
);
const activeWebhooksQuery = compileQuery((db, p: Param<{ merchantId: string }>) =>
  db.selectFrom('webhooks').select(['id', 'enabled_events']).where('merchant_id', '=', p('merchantId')).where('active', '=', 1).where('paused', '=', 0),
);
const activeWebhookQuery = compileQuery((db, p: Param<{ merchantId: string; webhookId: string }>) =>
  db
    .selectFrom('webhooks')
    .select(['id', 'enabled_events'])
    .where('merchant_id', '=', p('merchantId'))
    .where('active', '=', 1)
    .where('id', '=', p('webhookId')),
);
const insertDeliveryQuery = compileQuery((db, p: Param<{ id: string; webhookId: string; eventId: string; merchantId: string; now: number }>) =>
  db.insertInto('deliveries').values({
    id: p('id'),
    webhook_id: p('webhookId'),
    event_id: p('eventId'),
    merchant_id: p('merchantId'),
    status: 'pending',
    attempts: 0,
    next_attempt_at: p('now'),
    created_at: p('now'),
    updated_at: p('now'),
  }),
);

/**
 * Stores an event and its deliveries. Compiled queries in the transaction that made
 * the change (the Tx of a writeTransaction or a group commit), so the inserts land with that
 * change or not at all. `alongside`: writes of the change itself that do not depend on this
 * function's reads (the webhooks), sent with the event's insert and the webhooks' read: one round
 * trip on PostgreSQL (runTogether), the same statements in the same order on SQLite.
 */
export async function insertEvent(tx: Tx, event: NewEvent, now: number, alongside: ReadonlyArray<BoundQuery<unknown>> = []): Promise<StoredEvent> {
  const stored: StoredEvent = {
    id: newId('evt'),
    merchantId: event.merchantId,
    type: event.type,
    invoiceId: event.invoiceId ?? null,
    data: event.data,
    createdAt: now,
  };
  const insert = insertEventQuery.with({
    id: stored.id,
    merchantId: stored.merchantId,
    type: stored.type,
    invoiceId: stored.invoiceId,
    data: JSON.stringify(stored.data),
    now,
  });
  const webhooks = await runTogether(
    tx,
    [...alongside, insert],
    event.webhookId
      ? activeWebhookQuery.with({ merchantId: event.merchantId, webhookId: event.webhookId })
      : activeWebhooksQuery.with({ merchantId: event.merchantId }),
  );
  for (const w of webhooks) {
    // A webhook limited to some types gets only those (a test goes to its one webhook regardless).
    if (!event.webhookId && w.enabled_events !== null && !(JSON.parse(w.enabled_events) as string[]).includes(stored.type)) continue;
    await insertDeliveryQuery.run(tx, { id: newId('dlv'), webhookId: w.id, eventId: stored.id, merchantId: event.merchantId, now });
  }
  // A paid invoice that a shop created owes that shop its callback (src/shops/): queued here, with the confirmation.
  if (stored.type === 'invoice.confirmed' && stored.invoiceId !== null) await queueShopNotify(tx, stored.invoiceId, now);
  // The owner's Telegram notice (src/telegram/), when a chat is linked and wants this kind.
  await queueTelegramNotice(tx, stored, now);
  return stored;
}

export function rowToEvent(row: { id: string; merchant_id: string; type: string; invoice_id: string | null; data: string; created_at: number }): StoredEvent {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    type: row.type as EventType,
    invoiceId: row.invoice_id,
    data: JSON.parse(row.data) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

/** The events of one invoice of this merchant, oldest first. */
export async function listInvoiceEvents(db: Db, merchantId: string, invoiceId: string): Promise<StoredEvent[]> {
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('invoice_id', '=', invoiceId)
    .orderBy('created_at', 'asc')
    .execute();
  return rows.map(rowToEvent);
}

export async function listMerchantEvents(db: Db, merchantId: string, limit = 100): Promise<StoredEvent[]> {
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(rowToEvent);
}

/** The ranges of GET /events: one per type asked for (events_merchant_type_created_idx), else one. */
function eventListParts(db: Db, merchantId: string, types: readonly EventType[] | undefined) {
  const base = db.selectFrom('events').selectAll().where('merchant_id', '=', merchantId);
  return types && types.length > 0 ? [...new Set(types)].map((type) => base.where('type', '=', type)) : [base];
}

/** One page of a merchant's events, newest first. */
export async function listEventPage(db: Db, merchantId: string, types: readonly EventType[] | undefined, page: PageRequest): Promise<Page<StoredEvent>> {
  const { items, hasMore } = await readPage(eventListParts(db, merchantId, types), page);
  return { items: items.map(rowToEvent), hasMore };
}

export function eventPageQueries(db: Db, merchantId: string, types: readonly EventType[] | undefined, page: PageRequest) {
  return pageQueries(eventListParts(db, merchantId, types), page);
}

/** An event of this merchant; another merchant's event is absent. */
export async function findMerchantEvent(db: Db, merchantId: string, id: string): Promise<StoredEvent | undefined> {
  const row = await db.selectFrom('events').selectAll().where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? rowToEvent(row) : undefined;
}

export async function findEventCursor(db: Db, merchantId: string, id: string): Promise<Cursor | undefined> {
  const row = await db.selectFrom('events').select(['created_at', 'id']).where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? { createdAt: row.created_at, id: row.id } : undefined;
}
