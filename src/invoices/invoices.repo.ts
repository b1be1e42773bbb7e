/** Invoice rows: all Kysely code of the invoices feature except allocation (allocation.repo.ts). */
import { smaller } from '../db/portable-sql.js';
import { sql, type Insertable, type Selectable, type SqlBool } from 'kysely';
import { compileQuery, type BoundQuery, type Lookup, type Param } from '../db/compiled.js';
import { pageQueries, readPage, type Cursor, type Page, type PageRequest } from '../db/paging.js';
import type { Conn, Db, Trx, Tx } from '../db/database.js';
import type { CheckoutQr, InvoicesTable, InvoiceStatus } from '../db/schema.js';
import { parseAmount, toDbAmount, type Micros } from '../lib/amounts.js';
import { parseEvmAddress } from '../chains/evm/address.js';
import type { AmountTarget } from './allocation.repo.js';
import { withOptions, withOptionsOne } from './invoice-options.repo.js';
import { type Invoice } from './invoice.model.js';
import { INVOICE_STATUSES, OPEN_STATUSES, transition } from './invoice.states.js';

export const INVOICE_LIST_LIMIT = 500;

/**
 * status IN ('pending', 'review') written as literals. SQLite uses the partial index
 * invoices_open_idx only when the query's WHERE provably implies the index's WHERE, which a bound
 * parameter never does: with parameters the watcher's queries read every invoice of the address
 * (0.7-1.3 s per watcher pass at 1 000 000 invoices, with the event loop blocked).
 */
export const isOpen = (column: 'status' | 'i.status') => sql<SqlBool>`${sql.ref(column)} in (${sql.raw(OPEN_STATUSES.map((s) => `'${s}'`).join(', '))})`;

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
    redirect_url: p('redirect_url'),
    cancelled_at: p('cancelled_at'),
    received_amount: p('received_amount'),
    price_amount: p('price_amount'),
    price_currency: p('price_currency'),
    price_rate: p('price_rate'),
    price_markup_percent: p('price_markup_percent'),
    price_sources: p('price_sources'),
    price_rate_at: p('price_rate_at'),
  }),
);

/** A compiled query in the caller's transaction. */
export async function insertInvoice(tx: Tx, inv: Invoice): Promise<void> {
  await invoiceInsert(inv).run(tx);
}

/** The insert of a new invoice's row, to send with other writes (runTogether, insertEvent's `alongside`). */
export function invoiceInsert(inv: Invoice): BoundQuery<unknown> {
  return insertInvoiceQuery.with({
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
    redirect_url: inv.redirectUrl,
    cancelled_at: inv.cancelledAt,
    // A new invoice has received nothing; only a payment applied by hand writes this column.
    received_amount: null,
    price_amount: inv.price?.amount ?? null,
    price_currency: inv.price?.currency ?? null,
    price_rate: inv.price?.rate ?? null,
    price_markup_percent: inv.price?.markupPercent ?? null,
    price_sources: inv.price ? JSON.stringify(inv.price.sources) : null,
    price_rate_at: inv.price?.rateAt ?? null,
    amount_received: 0,
    resolution: null,
  });
}

const byIdempotencyKey = compileQuery((db, p: Param<{ merchantId: string; key: string }>) =>
  db.selectFrom('invoices').selectAll().where('merchant_id', '=', p('merchantId')).where('idempotency_key', '=', p('key')),
);

/**
 * The row of this merchant's invoice created with this Idempotency-Key, if any: a lookup
 * (readTogether, or `.on(conn)`); its options are read apart (optionsLookup), for a replay only.
 */
export function idempotencyKeyLookup(merchantId: string, key: string): Lookup<Selectable<InvoicesTable> | undefined> {
  return byIdempotencyKey.lookup({ merchantId, key }, (rows) => rows[0]);
}

const orderIdQuery = compileQuery((db, p: Param<{ merchantId: string; orderId: string }>) =>
  db.selectFrom('invoices').select('id').where('merchant_id', '=', p('merchantId')).where('merchant_order_id', '=', p('orderId')),
);

/** The id of this merchant's invoice holding merchantOrderId, if any: a lookup (readTogether, or `.on(conn)`). */
export function orderIdLookup(merchantId: string, merchantOrderId: string): Lookup<string | undefined> {
  return orderIdQuery.lookup({ merchantId, orderId: merchantOrderId }, (rows) => rows[0]?.id);
}

export async function findInvoiceIdByOrderId(conn: Conn, merchantId: string, merchantOrderId: string): Promise<string | undefined> {
  return orderIdLookup(merchantId, merchantOrderId).on(conn);
}

/**
 * Any merchant's invoice by id: for `gatewayd dev`'s simulated payments and the owner's payment
 * notice, never for a request (requests use findMerchantInvoice).
 */
export async function findInvoiceAnyMerchant(db: Db | Trx, id: string): Promise<Invoice | undefined> {
  const row = await db.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirst();
  return withOptionsOne(db, row);
}

/** An invoice of this merchant; another merchant's invoice is absent. */
export async function findMerchantInvoice(db: Db | Trx, merchantId: string, id: string): Promise<Invoice | undefined> {
  const row = await db.selectFrom('invoices').selectAll().where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return withOptionsOne(db, row);
}

/** The newest invoices of a merchant, of one status when given (GET /invoices and the console show 500). */
export async function listMerchantInvoices(db: Db, merchantId: string, limit = INVOICE_LIST_LIMIT, status?: InvoiceStatus): Promise<Invoice[]> {
  let q = db.selectFrom('invoices').selectAll().where('merchant_id', '=', merchantId);
  if (status) q = q.where('status', '=', status);
  const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(limit).execute();
  return withOptions(db, rows);
}

export { INVOICE_STATUSES };

export interface InvoiceFilter {
  statuses?: InvoiceStatus[];
  walletId?: string;
  merchantOrderId?: string;
  /** `q`, read by resolveInvoiceSearch. */
  search?: InvoiceSearch;
}

/** What a search text can name: an order id (always), an amount, a transaction's invoices, an address's wallets. */
export interface InvoiceSearch {
  orderId: string;
  amount?: bigint;
  invoiceIds: string[];
  walletIds: string[];
}

/** Invoices one transaction can name in a search (its transfers, each to one invoice). */
const MAX_SEARCH_IDS = 50;
const TX_HASH_RE = /^(0x)?[0-9a-fA-F]{64}$/;
const ADDRESS_RE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
const EVM_ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/**
 * Reads a search text: an order id exactly as given; a decimal amount ("25", "25.000137") as the
 * payable or the base amount; a transaction hash (TRON's 64 hex digits or an EVM 0x hash, each
 * found with or without 0x) as the invoices it paid or was applied to by hand;
 * a TRON address, or an EVM one in any letter case, as the merchant's wallets at that address. Each is an index look-up.
 */
export async function resolveInvoiceSearch(db: Db, merchantId: string, text: string): Promise<InvoiceSearch> {
  const q = text.trim();
  const search: InvoiceSearch = { orderId: q, amount: parseAmount(q), invoiceIds: [], walletIds: [] };
  if (TX_HASH_RE.test(q)) {
    // TRON stores its transaction ids as 64 hex digits, the EVM networks their hashes with 0x: the
    // text is looked up in both forms, lower case (how both are stored), either way it was given.
    const hex = q.toLowerCase().replace(/^0x/, '');
    const rows = await db
      .selectFrom('chain_transfers')
      .leftJoin('invoice_resolutions', 'invoice_resolutions.transfer_id', 'chain_transfers.id')
      .select(['chain_transfers.invoice_id', 'invoice_resolutions.invoice_id as resolved_invoice_id'])
      .where('chain_transfers.tx_hash', 'in', [hex, `0x${hex}`])
      .execute();
    search.invoiceIds = [...new Set(rows.flatMap((r) => [r.invoice_id, r.resolved_invoice_id]).filter((id): id is string => id !== null))];
  }
  // A wallet's address: TRON's as given, an EVM one in any letter case (stored in EIP-55 form).
  const evm = EVM_ADDRESS_RE.test(q) ? parseEvmAddress(q) : undefined;
  const address = ADDRESS_RE.test(q) ? q : evm?.ok ? evm.address : undefined;
  if (address !== undefined) {
    const rows = await db.selectFrom('wallets').select('id').where('merchant_id', '=', merchantId).where('address', '=', address).execute();
    search.walletIds = rows.map((r) => r.id);
  }
  return search;
}

/** The ranges of a search: each an index range of one merchant's invoices, newest first. */
function searchParts(base: InvoiceListBase, filter: InvoiceFilter, statuses: InvoiceStatus[] | undefined, search: InvoiceSearch) {
  const scoped = filter.walletId !== undefined ? base.where('wallet_id', '=', filter.walletId) : base;
  const parts = [scoped.where('merchant_order_id', '=', search.orderId)];
  if (search.amount !== undefined) {
    parts.push(scoped.where('payable_amount', '=', toDbAmount(search.amount)), scoped.where('base_amount', '=', toDbAmount(search.amount)));
  }
  // One equality each (a transaction names a few invoices): `id IN (...)` under a cursor lets SQLite walk the merchant's history instead.
  for (const id of search.invoiceIds.slice(0, MAX_SEARCH_IDS)) parts.push(scoped.where('id', '=', id));
  const filtered = statuses ? parts.map((q) => q.where('status', 'in', statuses)) : parts;
  for (const walletId of search.walletIds) {
    if (filter.walletId !== undefined && filter.walletId !== walletId) continue;
    const wallet = base.where('wallet_id', '=', walletId);
    filtered.push(...(statuses ?? INVOICE_STATUSES).map((status) => wallet.where('status', '=', status)));
  }
  return filtered;
}

type InvoiceListBase = ReturnType<typeof listBase>;
const listBase = (db: Db, merchantId: string) => db.selectFrom('invoices').selectAll().where('merchant_id', '=', merchantId);

/**
 * The filtered queries whose union is the list (see db/paging.ts): each one range of
 * invoices_merchant_created_idx, invoices_merchant_status_created_idx or
 * invoices_merchant_wallet_created_idx. An order id names at most one invoice (invoices_order_uq).
 */
function invoiceListParts(db: Db, merchantId: string, filter: InvoiceFilter) {
  const base = listBase(db, merchantId);
  const statuses = filter.statuses && filter.statuses.length > 0 ? [...new Set(filter.statuses)] : undefined;
  if (filter.search !== undefined) {
    const parts = searchParts(base, filter, statuses, filter.search);
    return filter.merchantOrderId !== undefined ? parts.map((q) => q.where('merchant_order_id', '=', filter.merchantOrderId!)) : parts;
  }
  if (filter.merchantOrderId !== undefined) {
    let q = base.where('merchant_order_id', '=', filter.merchantOrderId);
    if (filter.walletId !== undefined) q = q.where('wallet_id', '=', filter.walletId);
    if (statuses) q = q.where('status', 'in', statuses);
    return [q];
  }
  if (filter.walletId !== undefined) {
    const wallet = base.where('wallet_id', '=', filter.walletId);
    return (statuses ?? INVOICE_STATUSES).map((status) => wallet.where('status', '=', status));
  }
  if (statuses) return statuses.map((status) => base.where('status', '=', status));
  return [base];
}

/** One page of a merchant's invoices, newest first. */
export async function listInvoicePage(db: Db, merchantId: string, filter: InvoiceFilter, page: PageRequest): Promise<Page<Invoice>> {
  const { items, hasMore } = await readPage(invoiceListParts(db, merchantId, filter), page);
  return { items: await withOptions(db, items), hasMore };
}

/** The SQL of a page's ranges (EXPLAIN QUERY PLAN in tests and the bench). */
export function invoicePageQueries(db: Db, merchantId: string, filter: InvoiceFilter, page: PageRequest) {
  return pageQueries(invoiceListParts(db, merchantId, filter), page);
}

/** Where an invoice of this merchant stands in the list (a paging cursor). */
export async function findInvoiceCursor(db: Db, merchantId: string, id: string): Promise<Cursor | undefined> {
  const row = await db.selectFrom('invoices').select(['created_at', 'id']).where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? { createdAt: row.created_at, id: row.id } : undefined;
}

/** The invoice behind a checkout link, its merchant's display name and checkout QR format. */
export async function findByCheckoutToken(db: Db, token: string): Promise<{ invoice: Invoice; merchantName: string; checkoutQr: CheckoutQr } | undefined> {
  const row = await db
    .selectFrom('invoices')
    .innerJoin('merchants', 'merchants.id', 'invoices.merchant_id')
    .selectAll('invoices')
    .select(['merchants.name as merchant_name', 'merchants.checkout_qr as merchant_checkout_qr'])
    .where('invoices.checkout_token', '=', token)
    .executeTakeFirst();
  if (!row) return undefined;
  const { merchant_name, merchant_checkout_qr, ...invoice } = row;
  return { invoice: (await withOptionsOne(db, invoice))!, merchantName: merchant_name, checkoutQr: merchant_checkout_qr };
}

/**
 * The merchant's cancel: an open invoice without a recorded payment becomes expired, its window
 * closed now (a transfer made later is recorded against it as late). Guarded like every move.
 */
export async function cancelOpenInvoice(trx: Trx, id: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('invoices')
    .set({ status: transition('cancel').to, cancelled_at: now, expires_at: smaller(sql.ref<number>('expires_at'), now) })
    .where('id', '=', id)
    // isOpen is cancel.from (OPEN_STATUSES) written as literals.
    .where(isOpen('status'))
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The owner's decision on a paid review invoice (accept or reject), guarded: only from review, and only once paid. */
export async function moveReviewedInvoice(trx: Trx, id: string, step: 'accept' | 'reject', confirmedAt: number | null): Promise<boolean> {
  const move = transition(step);
  const result = await trx
    .updateTable('invoices')
    .set({ status: move.to, confirmed_at: confirmedAt })
    .where('id', '=', id)
    .where('status', 'in', [...move.from])
    .where('tx_hash', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Creation times, ms: from `createdGte` included to `createdLt` excluded. */
export interface CreationRange {
  createdGte?: number;
  createdLt?: number;
}

export interface CreationCursor {
  createdAt: number;
  id: string;
}

/**
 * One merchant's invoices page by page (keyset), newest first, for the ledger export: the next page
 * after `after`, in the order of invoices_merchant_created_idx (merchant_id, created_at DESC, id).
 * Each page is a short query, so an export never pins the connection while a slow client reads.
 */
export async function merchantInvoicesPage(
  db: Db,
  merchantId: string,
  after: CreationCursor | undefined,
  size: number,
  range: CreationRange = {},
): Promise<Invoice[]> {
  let q = db.selectFrom('invoices').selectAll().where('merchant_id', '=', merchantId);
  if (range.createdGte !== undefined) q = q.where('created_at', '>=', range.createdGte);
  if (range.createdLt !== undefined) q = q.where('created_at', '<', range.createdLt);
  if (after) {
    q = q.where('created_at', '<=', after.createdAt).where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb('id', '>', after.id)]));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(size).execute();
  return withOptions(db, rows);
}

/** Open, unpaid invoices (pending or review) of one network, token contract, address and payable amount: one index range. */
export function openOfAmount(db: Db | Trx, target: { network: string; tokenContract: string }, address: string, amount: Micros) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('network', '=', target.network)
    .where('token_contract', '=', target.tokenContract)
    .where('wallet_address', '=', address)
    .where('payable_amount', '=', toDbAmount(amount))
    .where(isOpen('status'))
    .where('tx_hash', 'is', null);
}

/**
 * Unpaid invoices (pending, expired, review without a payment) asking on one address of one
 * network's token: the base of the wrong-payment rules' queries.
 */
export function unpaidOnAddress(db: Db | Trx, target: AmountTarget) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('network', '=', target.network)
    .where('token_contract', '=', target.tokenContract)
    .where('wallet_address', '=', target.address)
    .where('tx_hash', 'is', null)
    .where('status', 'in', [...transition('resolve').from]);
}

/**
 * The networks on which a wallet's invoices still wait for payment (pending): a network the wallet
 * stopped receiving on would no longer be watched for them. Through the merchant's wallet index.
 */
export async function pendingInvoiceNetworks(db: Db | Trx, merchantId: string, walletId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('invoices')
    .select('network')
    .distinct()
    .where('merchant_id', '=', merchantId)
    .where('wallet_id', '=', walletId)
    .where('status', '=', 'pending')
    .execute();
  return rows.map((r) => r.network);
}
