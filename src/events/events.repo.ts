/**
 * Events and the webhook outbox. An event is stored in the same transaction as the change that
 * caused it, and fans out there to one pending Delivery per active webhook of its merchant, so an
 * acknowledged change can never lose its notifications.
 */
import type { Db, Trx } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { iso } from '../lib/clock.js';

export const EVENT_TYPES = ['invoice.created', 'invoice.confirmed', 'invoice.expired', 'invoice.review', 'webhook.test'] as const;
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

/** Stores an event and its deliveries. Call inside the transaction that made the change. */
export async function insertEvent(trx: Trx | Db, event: NewEvent, now: number): Promise<StoredEvent> {
  const stored: StoredEvent = {
    id: newId('evt'),
    merchantId: event.merchantId,
    type: event.type,
    invoiceId: event.invoiceId ?? null,
    data: event.data,
    createdAt: now,
  };
  await trx
    .insertInto('events')
    .values({
      id: stored.id,
      merchant_id: stored.merchantId,
      type: stored.type,
      invoice_id: stored.invoiceId,
      data: JSON.stringify(stored.data),
      created_at: now,
    })
    .execute();
  let targets = trx.selectFrom('webhooks').select('id').where('merchant_id', '=', event.merchantId).where('active', '=', 1);
  if (event.webhookId) targets = targets.where('id', '=', event.webhookId);
  const webhooks = await targets.execute();
  if (webhooks.length > 0) {
    await trx
      .insertInto('deliveries')
      .values(
        webhooks.map((w) => ({
          id: newId('dlv'),
          webhook_id: w.id,
          event_id: stored.id,
          merchant_id: event.merchantId,
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }
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

export async function listMerchantEvents(db: Db, merchantId: string, limit = 100): Promise<StoredEvent[]> {
  const rows = await db.selectFrom('events').selectAll().where('merchant_id', '=', merchantId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(rowToEvent);
}

/** The Event resource as the API and the webhook body show it. */
export function toEventResponse(event: StoredEvent) {
  return { id: event.id, type: event.type, created_at: iso(event.createdAt), mode: 'live' as const, data: event.data };
}
