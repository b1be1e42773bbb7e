/**
 * All SQL of the shops' paid callbacks (shop_notifies): the outbox row written with the invoice's
 * confirmation, the claims and outcomes of the worker, and the console's view of them.
 */
import { compileQuery, type Param } from '../db/compiled.js';
import { INSTANCE_NAME, type Db, type Trx, type Tx } from '../db/database.js';
import { abandonedClaim } from '../db/leader.js';
import { readPage, type Cursor, type Page, type PageRequest } from '../db/paging.js';
import type { Selectable } from 'kysely';
import type { DeliveryStatus, ShopNotifiesTable } from '../db/schema.js';
import type { Delivery } from '../webhooks/delivery.model.js';
import { newId } from '../lib/ids.js';
import { attemptColumns, resultColumns, toAttemptRecord, type AttemptRecord, type OutboxResult } from '../webhooks/outbox.model.js';

/** A callback: the outbox fields of a webhook delivery, for one invoice of one shop connection. */
export type ShopNotify = Omit<Delivery, 'webhookId' | 'eventId'> & { invoiceId: string; connectionId: string };

/** A callback with the order it reports and the shop it goes to, as the console lists it. */
export interface ShopNotifyView extends ShopNotify {
  outTradeNo: string;
  connectionName: string;
  notifyUrl: string;
}

const orderOfInvoiceQuery = compileQuery((db, p: Param<{ invoiceId: string }>) =>
  db
    .selectFrom('shop_orders')
    .innerJoin('shop_connections', 'shop_connections.id', 'shop_orders.connection_id')
    .select(['shop_orders.connection_id', 'shop_orders.merchant_id'])
    .where('shop_orders.invoice_id', '=', p('invoiceId'))
    .where('shop_connections.active', '=', 1),
);
const insertNotifyQuery = compileQuery((db, p: Param<{ id: string; invoiceId: string; connectionId: string; merchantId: string; now: number }>) =>
  db
    .insertInto('shop_notifies')
    .values({
      id: p('id'),
      invoice_id: p('invoiceId'),
      connection_id: p('connectionId'),
      merchant_id: p('merchantId'),
      status: 'pending',
      attempts: 0,
      next_attempt_at: p('now'),
      created_at: p('now'),
      updated_at: p('now'),
    })
    .onConflict((oc) => oc.column('invoice_id').doNothing()),
);

/**
 * Queues the paid callback of an invoice a shop created, in the transaction that confirms it (an
 * invoice of the API or the console has no shop order and queues nothing). At most one per invoice,
 * ever: a callback is never sent for any other state, and once acknowledged never again.
 */
export async function queueShopNotify(tx: Tx, invoiceId: string, now: number): Promise<void> {
  const order = await orderOfInvoiceQuery.first(tx, { invoiceId });
  if (!order) return;
  await insertNotifyQuery.run(tx, { id: newId('snt'), invoiceId, connectionId: order.connection_id, merchantId: order.merchant_id, now });
}

type NotifyRow = Selectable<ShopNotifiesTable>;

function toNotify(row: NotifyRow): ShopNotify {
  return {
    id: row.id,
    invoiceId: row.invoice_id,
    connectionId: row.connection_id,
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

export async function findNotifyById(db: Db | Trx, id: string): Promise<ShopNotify | undefined> {
  const row = await db.selectFrom('shop_notifies').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toNotify(row) : undefined;
}

export async function findMerchantNotify(db: Db | Trx, merchantId: string, id: string): Promise<ShopNotify | undefined> {
  const row = await db.selectFrom('shop_notifies').selectAll().where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? toNotify(row) : undefined;
}

export async function findNotifyOfInvoice(db: Db | Trx, invoiceId: string): Promise<ShopNotify | undefined> {
  const row = await db.selectFrom('shop_notifies').selectAll().where('invoice_id', '=', invoiceId).executeTakeFirst();
  return row ? toNotify(row) : undefined;
}

/** The oldest due pending callbacks, at most `limit`. */
export async function findDueNotifies(db: Db | Trx, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('shop_notifies')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Marks a callback as in flight, guarded on its status (and, for the scheduler, on being due). */
export async function claimNotify(db: Db | Trx, id: string, from: readonly DeliveryStatus[], now: number, dueOnly: boolean): Promise<boolean> {
  let q = db
    .updateTable('shop_notifies')
    .set({ status: 'sending', updated_at: now, claimed_by: INSTANCE_NAME })
    .where('id', '=', id)
    .where('status', 'in', [...from]);
  if (dueOnly) q = q.where('next_attempt_at', '<=', now);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** How a callback stands after an attempt (the outbox's result). */
export type NotifyResult = OutboxResult;

/** Records an attempt's outcome; guarded on `sending`, so a reset meanwhile is not overwritten. */
export async function completeNotify(trx: Trx, id: string, r: NotifyResult, now: number): Promise<boolean> {
  const res = await trx.updateTable('shop_notifies').set(resultColumns(r, now)).where('id', '=', id).where('status', '=', 'sending').executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Writes an attempt's history row (shop_notify_attempts, migration 0028), in the transaction whose completeNotify recorded it. */
export async function insertNotifyAttempt(trx: Trx, notifyId: string, a: AttemptRecord): Promise<void> {
  await trx
    .insertInto('shop_notify_attempts')
    .values({ notify_id: notifyId, ...attemptColumns(a) })
    .execute();
}

/** The attempts of these callbacks, first to last, by callback. */
export async function listNotifyAttempts(db: Db | Trx, notifyIds: readonly string[]): Promise<Map<string, AttemptRecord[]>> {
  const out = new Map<string, AttemptRecord[]>(notifyIds.map((id) => [id, []]));
  if (notifyIds.length === 0) return out;
  const rows = await db
    .selectFrom('shop_notify_attempts')
    .selectAll()
    .where('notify_id', 'in', [...notifyIds])
    .orderBy('notify_id')
    .orderBy('attempt')
    .execute();
  for (const r of rows) out.get(r.notify_id)!.push(toAttemptRecord(r));
  return out;
}

export async function cancelPendingNotifies(trx: Trx, connectionId: string, now: number): Promise<number> {
  const r = await trx
    .updateTable('shop_notifies')
    .set({ status: 'cancelled', next_attempt_at: null, updated_at: now })
    .where('connection_id', '=', connectionId)
    .where('status', 'in', ['pending', 'failed'])
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * Crash recovery: nothing is in flight at start, so every `sending` callback is pending again, due
 * now. With several instances (PostgreSQL), only those no live instance can still be sending:
 * claimed before `claimedBefore`, or by an instance not among `live` (src/db/leader.ts abandonedClaim).
 */
export async function resetSendingNotifies(db: Db, now: number, claimedBefore?: number, live?: readonly string[]): Promise<number> {
  let reset = db.updateTable('shop_notifies').set({ status: 'pending', next_attempt_at: now, updated_at: now }).where('status', '=', 'sending');
  if (claimedBefore !== undefined) reset = reset.where(abandonedClaim(claimedBefore, live));
  const r = await reset.executeTakeFirst();
  return Number(r.numUpdatedRows);
}

function notifyViews(db: Db, merchantId: string) {
  return db
    .selectFrom('shop_notifies as n')
    .innerJoin('shop_orders as o', 'o.invoice_id', 'n.invoice_id')
    .innerJoin('shop_connections as c', 'c.id', 'n.connection_id')
    .selectAll('n')
    .select(['o.out_trade_no', 'o.notify_url', 'c.name as connection_name'])
    .where('n.merchant_id', '=', merchantId);
}

function toView(r: NotifyRow & { out_trade_no: string; notify_url: string; connection_name: string }): ShopNotifyView {
  return { ...toNotify(r), outTradeNo: r.out_trade_no, notifyUrl: r.notify_url, connectionName: r.connection_name };
}

/** A callback as the API and the console list it: its order, its shop, and every attempt made. */
export interface ShopCallback extends ShopNotifyView {
  history: AttemptRecord[];
}

function callbackRows(db: Db, merchantId: string, connectionId: string | undefined) {
  const q = db.selectFrom('shop_notifies').selectAll().where('merchant_id', '=', merchantId);
  return connectionId === undefined ? q : q.where('connection_id', '=', connectionId);
}

/** These callbacks (ids of the merchant's, in the order given) with their order, shop and attempts. */
async function withHistory(db: Db, merchantId: string, ids: readonly string[]): Promise<ShopCallback[]> {
  if (ids.length === 0) return [];
  const rows = await notifyViews(db, merchantId)
    .where('n.id', 'in', [...ids])
    .execute();
  const views = new Map(rows.map((r) => [r.id, toView(r)]));
  const history = await listNotifyAttempts(db, ids);
  return ids.flatMap((id) => {
    const view = views.get(id);
    return view ? [{ ...view, history: history.get(id)! }] : [];
  });
}

/**
 * One page of the merchant's callbacks, newest first (src/db/paging.ts): those of one connection
 * (shop_notifies_connection_idx), or of every connection when `connectionId` is undefined (the console).
 */
export async function listCallbackPage(db: Db, merchantId: string, connectionId: string | undefined, page: PageRequest): Promise<Page<ShopCallback>> {
  const { items, hasMore } = await readPage([callbackRows(db, merchantId, connectionId)], page);
  return {
    items: await withHistory(
      db,
      merchantId,
      items.map((r) => r.id),
    ),
    hasMore,
  };
}

/** Where a callback of this connection stands in its list (a paging cursor); another's is absent. */
export async function findCallbackCursor(db: Db, merchantId: string, connectionId: string, id: string): Promise<Cursor | undefined> {
  const row = await callbackRows(db, merchantId, connectionId).where('id', '=', id).executeTakeFirst();
  return row ? { createdAt: row.created_at, id: row.id } : undefined;
}

/** A callback of this merchant's connection, with its attempts; another connection's is absent. */
export async function findCallback(db: Db, merchantId: string, connectionId: string, id: string): Promise<ShopCallback | undefined> {
  const [callback] = await withHistory(db, merchantId, [id]);
  return callback?.connectionId === connectionId ? callback : undefined;
}

export async function findNotifyView(db: Db, merchantId: string, id: string): Promise<ShopNotifyView | undefined> {
  const row = await notifyViews(db, merchantId).where('n.id', '=', id).executeTakeFirst();
  return row ? toView(row) : undefined;
}
