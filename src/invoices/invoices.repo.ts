/** Invoice rows: all Kysely code of the invoices feature except allocation (allocation.repo.ts). */
import { sql, type Insertable, type SqlBool } from 'kysely';
import { compileQuery, type Param } from '../db/compiled.js';
import type { Db, Sqlite, Trx, TxSqlite } from '../db/database.js';
import type { InvoicesTable, InvoiceStatus } from '../db/schema.js';
import { toDbAmount } from '../lib/amounts.js';
import { rowToInvoice, type Invoice } from './invoice.model.js';

export const INVOICE_LIST_LIMIT = 500;

/**
 * status IN ('pending', 'review') written as literals. SQLite uses the partial index
 * invoices_open_idx only when the query's WHERE provably implies the index's WHERE, which a bound
 * parameter never does: with parameters the watcher's queries read every invoice of the address
 * (0.7-1.3 s per watcher pass at 1 000 000 invoices, with the event loop blocked).
 */
export const isOpen = (column: 'status' | 'i.status') => sql<SqlBool>`${sql.ref(column)} in ('pending', 'review')`;

const insertInvoiceQuery = compileQuery((db, p: Param<Required<Insertable<InvoicesTable>>>) =>
  db.insertInto('invoices').values({
    id: p('id'),
    merchant_id: p('merchant_id'),
    wallet_id: p('wallet_id'),
    network: p('network'),
    token: p('token'),
    token_contract: p('token_contract'),
    wallet_address: p('wallet_address'),
    merchant_order_id: p('merchant_order_id'),
    idempotency_key: p('idempotency_key'),
    request_fingerprint: p('request_fingerprint'),
    base_amount: p('base_amount'),
    adjustment: p('adjustment'),
    payable_amount: p('payable_amount'),
    status: p('status'),
    amount_reuse_review: p('amount_reuse_review'),
    description: p('description'),
    metadata: p('metadata'),
    checkout_token: p('checkout_token'),
    tx_hash: p('tx_hash'),
    confirmed_at: p('confirmed_at'),
    created_at: p('created_at'),
    expires_at: p('expires_at'),
    reserved_until: p('reserved_until'),
  }),
);

/** Synchronous (compiled query), in the caller's transaction. */
export function insertInvoice(tx: TxSqlite, inv: Invoice): void {
  insertInvoiceQuery.run(tx, {
    id: inv.id,
    merchant_id: inv.merchantId,
    wallet_id: inv.walletId,
    network: inv.network,
    token: inv.token,
    token_contract: inv.tokenContract,
    wallet_address: inv.walletAddress,
    merchant_order_id: inv.merchantOrderId,
    idempotency_key: inv.idempotencyKey,
    request_fingerprint: inv.requestFingerprint,
    base_amount: toDbAmount(inv.baseAmount),
    adjustment: toDbAmount(inv.adjustment),
    payable_amount: toDbAmount(inv.payableAmount),
    status: inv.status,
    amount_reuse_review: inv.amountReuseReview ? 1 : 0,
    description: inv.description,
    metadata: JSON.stringify(inv.metadata),
    checkout_token: inv.checkoutToken,
    tx_hash: inv.txHash,
    confirmed_at: inv.confirmedAt,
    created_at: inv.createdAt,
    expires_at: inv.expiresAt,
    reserved_until: inv.reservedUntil,
  });
}

const byIdempotencyKey = compileQuery((db, p: Param<{ merchantId: string; key: string }>) =>
  db.selectFrom('invoices').selectAll().where('merchant_id', '=', p('merchantId')).where('idempotency_key', '=', p('key')),
);

export function findByIdempotencyKey(sqlite: Sqlite, merchantId: string, key: string): Invoice | undefined {
  const row = byIdempotencyKey.first(sqlite, { merchantId, key });
  return row ? rowToInvoice(row) : undefined;
}

const orderIdQuery = compileQuery((db, p: Param<{ merchantId: string; orderId: string }>) =>
  db.selectFrom('invoices').select('id').where('merchant_id', '=', p('merchantId')).where('merchant_order_id', '=', p('orderId')),
);

export function orderIdExists(sqlite: Sqlite, merchantId: string, merchantOrderId: string): boolean {
  return orderIdQuery.first(sqlite, { merchantId, orderId: merchantOrderId }) !== undefined;
}

/** An invoice of this merchant; another merchant's invoice is absent. */
export async function findMerchantInvoice(db: Db | Trx, merchantId: string, id: string): Promise<Invoice | undefined> {
  const row = await db.selectFrom('invoices').selectAll().where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? rowToInvoice(row) : undefined;
}

/** The newest invoices of a merchant, of one status when given (GET /invoices and the console show 500). */
export async function listMerchantInvoices(db: Db, merchantId: string, limit = INVOICE_LIST_LIMIT, status?: InvoiceStatus): Promise<Invoice[]> {
  let q = db.selectFrom('invoices').selectAll().where('merchant_id', '=', merchantId);
  if (status) q = q.where('status', '=', status);
  const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(limit).execute();
  return rows.map(rowToInvoice);
}

/** The invoice behind a checkout link and its merchant's display name. */
export async function findByCheckoutToken(db: Db, token: string): Promise<{ invoice: Invoice; merchantName: string } | undefined> {
  const row = await db
    .selectFrom('invoices')
    .innerJoin('merchants', 'merchants.id', 'invoices.merchant_id')
    .selectAll('invoices')
    .select('merchants.name as merchant_name')
    .where('invoices.checkout_token', '=', token)
    .executeTakeFirst();
  if (!row) return undefined;
  const { merchant_name, ...invoice } = row;
  return { invoice: rowToInvoice(invoice), merchantName: merchant_name };
}

/** Guarded status change: only from `from`, and (for review decisions) only once paid. */
export async function moveReviewedInvoice(trx: Trx, id: string, to: InvoiceStatus, confirmedAt: number | null): Promise<boolean> {
  const result = await trx
    .updateTable('invoices')
    .set({ status: to, confirmed_at: confirmedAt })
    .where('id', '=', id)
    .where('status', '=', 'review')
    .where('tx_hash', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
