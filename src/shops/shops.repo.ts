/** All SQL of shop connections and shop orders (migrations/0018_shops.sql). */
import type { Selectable } from 'kysely';
import type { Db, Trx } from '../db/database.js';
import type { ShopConnectionsTable, ShopOrdersTable, ShopProtocol } from '../db/schema.js';
import { newId } from '../lib/ids.js';

export interface ShopConnection {
  id: string;
  merchantId: string;
  protocol: ShopProtocol;
  name: string;
  pid: number;
  /** The shared key, needed in clear to sign and verify; never leaves through a response mapper. */
  secret: string;
  walletId: string;
  currency: string;
  allowHttpNotify: boolean;
  active: boolean;
  createdAt: number;
  deletedAt: number | null;
  keyRolledAt: number | null;
}

export interface ShopOrder {
  invoiceId: string;
  connectionId: string;
  merchantId: string;
  outTradeNo: string;
  /** The amount exactly as the shop typed it ("10", "10.50"), echoed back in its callback. */
  money: string;
  notifyUrl: string;
  returnUrl: string | null;
  type: string | null;
  name: string | null;
  param: string | null;
  createdAt: number;
}

function toConnection(row: Selectable<ShopConnectionsTable>): ShopConnection {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    protocol: row.protocol,
    name: row.name,
    pid: row.pid,
    secret: row.secret,
    walletId: row.wallet_id,
    currency: row.currency,
    allowHttpNotify: row.allow_http_notify === 1,
    active: row.active === 1,
    createdAt: row.created_at,
    deletedAt: row.deleted_at,
    keyRolledAt: row.key_rolled_at,
  };
}

function toOrder(row: Selectable<ShopOrdersTable>): ShopOrder {
  return {
    invoiceId: row.invoice_id,
    connectionId: row.connection_id,
    merchantId: row.merchant_id,
    outTradeNo: row.out_trade_no,
    money: row.money,
    notifyUrl: row.notify_url,
    returnUrl: row.return_url,
    type: row.type,
    name: row.name,
    param: row.param,
    createdAt: row.created_at,
  };
}

export async function countActiveConnections(db: Db | Trx, merchantId: string): Promise<number> {
  const row = await db
    .selectFrom('shop_connections')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('active', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function pidTaken(db: Db | Trx, pid: number): Promise<boolean> {
  return (await db.selectFrom('shop_connections').select('id').where('pid', '=', pid).executeTakeFirst()) !== undefined;
}

export type NewConnection = Pick<ShopConnection, 'merchantId' | 'protocol' | 'name' | 'pid' | 'secret' | 'walletId' | 'currency' | 'allowHttpNotify'>;

export async function insertConnection(trx: Trx, input: NewConnection, now: number): Promise<ShopConnection> {
  const row = {
    id: newId('shc'),
    merchant_id: input.merchantId,
    protocol: input.protocol,
    name: input.name,
    pid: input.pid,
    secret: input.secret,
    wallet_id: input.walletId,
    currency: input.currency,
    allow_http_notify: input.allowHttpNotify ? 1 : 0,
    active: 1,
    created_at: now,
    deleted_at: null,
    key_rolled_at: null,
  };
  await trx.insertInto('shop_connections').values(row).execute();
  return toConnection(row);
}

/** A connection of this merchant (active or deleted); another merchant's is absent. */
export async function findConnection(db: Db | Trx, merchantId: string, id: string): Promise<ShopConnection | undefined> {
  const row = await db.selectFrom('shop_connections').selectAll().where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? toConnection(row) : undefined;
}

export async function findConnectionById(db: Db | Trx, id: string): Promise<ShopConnection | undefined> {
  const row = await db.selectFrom('shop_connections').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toConnection(row) : undefined;
}

/** The active connection an Epay shop names by its pid. */
export async function findActiveByPid(db: Db, protocol: ShopProtocol, pid: number): Promise<ShopConnection | undefined> {
  const row = await db
    .selectFrom('shop_connections')
    .selectAll()
    .where('pid', '=', pid)
    .where('protocol', '=', protocol)
    .where('active', '=', 1)
    .executeTakeFirst();
  return row ? toConnection(row) : undefined;
}

/** Every active connection of a protocol (Epusdt requests name no merchant; their signature does). */
export async function listActiveOfProtocol(db: Db, protocol: ShopProtocol): Promise<ShopConnection[]> {
  const rows = await db.selectFrom('shop_connections').selectAll().where('protocol', '=', protocol).where('active', '=', 1).orderBy('id').execute();
  return rows.map(toConnection);
}

/** Active ones first, then newest first. */
export async function listConnections(db: Db, merchantId: string, limit = 100): Promise<ShopConnection[]> {
  const rows = await db
    .selectFrom('shop_connections')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('active', 'desc')
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toConnection);
}

/** Guarded: true only for the call that turned an active connection off. */
export async function deactivateConnection(trx: Trx, id: string, now: number): Promise<boolean> {
  const r = await trx.updateTable('shop_connections').set({ active: 0, deleted_at: now }).where('id', '=', id).where('active', '=', 1).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function replaceSecret(trx: Trx, id: string, secret: string, now: number): Promise<boolean> {
  const r = await trx.updateTable('shop_connections').set({ secret, key_rolled_at: now }).where('id', '=', id).where('active', '=', 1).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function insertShopOrder(trx: Trx, order: ShopOrder): Promise<void> {
  await trx
    .insertInto('shop_orders')
    .values({
      invoice_id: order.invoiceId,
      connection_id: order.connectionId,
      merchant_id: order.merchantId,
      out_trade_no: order.outTradeNo,
      money: order.money,
      notify_url: order.notifyUrl,
      return_url: order.returnUrl,
      type: order.type,
      name: order.name,
      param: order.param,
      created_at: order.createdAt,
    })
    .execute();
}

export async function findShopOrder(db: Db | Trx, invoiceId: string): Promise<ShopOrder | undefined> {
  const row = await db.selectFrom('shop_orders').selectAll().where('invoice_id', '=', invoiceId).executeTakeFirst();
  return row ? toOrder(row) : undefined;
}

export async function findShopOrderByNumber(db: Db | Trx, connectionId: string, outTradeNo: string): Promise<ShopOrder | undefined> {
  const row = await db
    .selectFrom('shop_orders')
    .selectAll()
    .where('connection_id', '=', connectionId)
    .where('out_trade_no', '=', outTradeNo)
    .executeTakeFirst();
  return row ? toOrder(row) : undefined;
}
