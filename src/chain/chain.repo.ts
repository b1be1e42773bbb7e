/**
 * All SQL of the chain watcher: which addresses to watch, their durable cursors, the recorded
 * transfers, and the guarded invoice moves the watcher makes (confirm, review paid, expire).
 */
import { sql, type Selectable, type SqlBool } from 'kysely';
import type { Db, Trx } from '../db/database.js';
import type { ChainTransferKind, ChainTransfersTable } from '../db/schema.js';
import { fromDbAmount, toDbAmount } from '../lib/amounts.js';
import { newId } from '../lib/ids.js';
import type { TronNetwork } from '../lib/tron.js';
import { rowToInvoice, type Invoice } from '../invoices/invoice.model.js';
import { isOpen } from '../invoices/invoices.repo.js';
import type { VerifiedTransfer } from './verifier.js';
import type { ChainTransfer } from './chain.model.js';

export interface WatchedAddress {
  address: string;
  /** Creation time of the oldest open invoice on the address: where a first poll starts. */
  earliestCreatedAt: number;
  /** The cursor: history up to this block time (ms, inclusive) is covered; null before the first poll. */
  coveredUntil: number | null;
  /**
   * Creation time of the oldest open invoice added since the cursor last moved, when it lies
   * inside the covered history (possible only if the server clock is behind the chain's): that
   * window must be read again. Null otherwise.
   */
  rewindTo: number | null;
}

/** The query behind listWatchedAddresses (exported for the query-plan test). */
export function watchedAddressesQuery(db: Db, network: TronNetwork) {
  return db
    .selectFrom('invoices as i')
    .leftJoin('chain_cursors as c', (join) =>
      join.onRef('c.address', '=', 'i.wallet_address').onRef('c.network', '=', 'i.network').onRef('c.token_contract', '=', 'i.token_contract'),
    )
    .select((eb) => [
      'i.wallet_address as address',
      eb.fn.min('i.created_at').as('earliest'),
      eb.fn.max('c.covered_until').as('covered'),
      eb.fn.min(eb.case().when('i.created_at', '>', eb.ref('c.updated_at')).then(eb.ref('i.created_at')).end()).as('newest_open'),
    ])
    .where('i.network', '=', network.id)
    .where('i.token_contract', '=', network.usdtContract)
    .where(isOpen('i.status'))
    .groupBy('i.wallet_address')
    .orderBy('i.wallet_address');
}

/** Addresses with at least one open (pending or review) invoice, with their cursors. */
export async function listWatchedAddresses(db: Db, network: TronNetwork): Promise<WatchedAddress[]> {
  const rows = await watchedAddressesQuery(db, network).execute();
  return rows.map((r) => {
    const covered = r.covered === null ? null : Number(r.covered);
    const newest = r.newest_open === null ? null : Number(r.newest_open);
    return { address: r.address, earliestCreatedAt: Number(r.earliest), coveredUntil: covered, rewindTo: covered !== null && newest !== null && newest <= covered ? newest : null };
  });
}

export async function findCursor(db: Db, network: TronNetwork, address: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('chain_cursors')
    .select('covered_until')
    .where('network', '=', network.id)
    .where('token_contract', '=', network.usdtContract)
    .where('address', '=', address)
    .executeTakeFirst();
  return row?.covered_until;
}

/** Moves the cursor forward (never back: a concurrent or repeated pass cannot undo coverage). */
export async function saveCursor(trx: Trx, network: TronNetwork, address: string, coveredUntil: number, now: number): Promise<void> {
  await trx
    .insertInto('chain_cursors')
    .values({ network: network.id, token_contract: network.usdtContract, address, covered_until: coveredUntil, updated_at: now })
    .onConflict((oc) =>
      oc.columns(['network', 'token_contract', 'address']).doUpdateSet((eb) => ({
        covered_until: eb.fn('max', [eb.ref('chain_cursors.covered_until'), eb.ref('excluded.covered_until')]),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** True when this transaction's logs to this address were already recorded (its receipt was read). */
export async function isTxRecorded(db: Db, txHash: string, toAddress: string): Promise<boolean> {
  const row = await db.selectFrom('chain_transfers').select('id').where('tx_hash', '=', txHash).where('to_address', '=', toAddress).executeTakeFirst();
  return row !== undefined;
}

export async function isLogRecorded(trx: Trx, txHash: string, logIndex: number): Promise<boolean> {
  const row = await trx.selectFrom('chain_transfers').select('id').where('tx_hash', '=', txHash).where('log_index', '=', logIndex).executeTakeFirst();
  return row !== undefined;
}

/** Invoices on `address` whose payable amount is `amount` (several only after a 90-day reuse). */
export async function findInvoicesByAmount(trx: Trx, network: TronNetwork, address: string, amount: bigint): Promise<Invoice[]> {
  const rows = await trx
    .selectFrom('invoices')
    .selectAll()
    .where('network', '=', network.id)
    .where('token_contract', '=', network.usdtContract)
    .where('wallet_address', '=', address)
    .where('payable_amount', '=', toDbAmount(amount))
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(rowToInvoice);
}

export async function findInvoiceById(trx: Trx, id: string): Promise<Invoice | undefined> {
  const row = await trx.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? rowToInvoice(row) : undefined;
}

export async function insertTransfer(trx: Trx, network: TronNetwork, t: VerifiedTransfer, kind: ChainTransferKind, invoiceId: string | null, now: number): Promise<void> {
  await trx
    .insertInto('chain_transfers')
    .values({
      id: newId('trf'),
      network: network.id,
      token_contract: t.tokenContract,
      tx_hash: t.txHash,
      log_index: t.logIndex,
      from_address: t.from,
      to_address: t.to,
      amount: toDbAmount(t.amount),
      kind,
      invoice_id: invoiceId,
      block_number: t.blockNumber,
      block_timestamp: t.blockTimestamp,
      recorded_at: now,
    })
    .execute();
}

/** pending -> confirmed, guarded: false when the invoice was no longer pending. */
export async function confirmInvoice(trx: Trx, id: string, txHash: string, now: number): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set({ status: 'confirmed', tx_hash: txHash, confirmed_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

/** A review invoice is paid: record the transaction, keep the status (the owner decides). */
export async function markReviewPaid(trx: Trx, id: string, txHash: string): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set({ tx_hash: txHash })
    .where('id', '=', id)
    .where('status', '=', 'review')
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

/**
 * Open, unpaid invoices on `address` whose whole window lies within the covered history and the
 * past. A paid review invoice waits for its owner and never expires here.
 */
export async function findExpirable(trx: Trx, network: TronNetwork, address: string, coveredUntil: number, now: number): Promise<Invoice[]> {
  const rows = await expirableQuery(trx, network, address, coveredUntil, now).execute();
  return rows.map(rowToInvoice);
}

/** The query behind findExpirable (exported for the query-plan test). */
export function expirableQuery(db: Db | Trx, network: TronNetwork, address: string, coveredUntil: number, now: number) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('network', '=', network.id)
    .where('token_contract', '=', network.usdtContract)
    .where('wallet_address', '=', address)
    .where(isOpen('status'))
    .where('tx_hash', 'is', null)
    .where('expires_at', '<=', coveredUntil)
    .where('expires_at', '<', now);
}

/** pending (or unpaid review) -> expired, guarded. */
export async function expireInvoice(trx: Trx, id: string): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set({ status: 'expired' })
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'review'])
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

// ---- Reads for the Dashboard and the ledger -------------------------------------------------

function rowToTransfer(row: Selectable<ChainTransfersTable>): ChainTransfer {
  return {
    id: row.id,
    txHash: row.tx_hash,
    logIndex: row.log_index,
    from: row.from_address,
    to: row.to_address,
    amount: fromDbAmount(row.amount),
    tokenContract: row.token_contract,
    kind: row.kind,
    invoiceId: row.invoice_id,
    blockNumber: row.block_number,
    blockTimestamp: row.block_timestamp,
    recordedAt: row.recorded_at,
  };
}

/** Transfers of one kind recorded against one invoice, oldest first. */
async function listInvoiceTransfers(db: Db | Trx, invoiceId: string, kind: ChainTransferKind): Promise<ChainTransfer[]> {
  const rows = await db
    .selectFrom('chain_transfers')
    .selectAll()
    .where('invoice_id', '=', invoiceId)
    .where('kind', '=', kind)
    .orderBy('block_timestamp')
    .orderBy('log_index')
    .execute();
  return rows.map(rowToTransfer);
}

/** Late payments recorded against one invoice, oldest first. */
export function listLatePayments(db: Db, invoiceId: string): Promise<ChainTransfer[]> {
  return listInvoiceTransfers(db, invoiceId, 'late');
}

/** Late payments against any of the merchant's invoices, newest first (the Dashboard's list). */
export async function listMerchantLatePayments(db: Db, merchantId: string, limit = 100): Promise<ChainTransfer[]> {
  const rows = await merchantLatePaymentsQuery(db, merchantId, limit).execute();
  return rows.map(rowToTransfer);
}

/**
 * Walks the late transfers newest first through their partial index and keeps the merchant's
 * (CROSS JOIN keeps that order: starting from the merchant's invoices read all of them, 90 ms at
 * 1 000 000). Exported for the query-plan test.
 */
export function merchantLatePaymentsQuery(db: Db, merchantId: string, limit = 100) {
  return db
    .selectFrom('chain_transfers as t')
    .crossJoin('invoices as i')
    .selectAll('t')
    .where(sql<SqlBool>`t.kind = 'late'`)
    .whereRef('i.id', '=', 't.invoice_id')
    .where('i.merchant_id', '=', merchantId)
    .orderBy('t.block_timestamp', 'desc')
    .orderBy('t.id')
    .limit(limit);
}

/** The ledger's `late_payments` cells for many invoices at once: invoice id -> tx hashes. */
export async function latePaymentHashes(db: Db, invoiceIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (invoiceIds.length === 0) return out;
  const rows = await db
    .selectFrom('chain_transfers')
    .select(['invoice_id', 'tx_hash'])
    .where('invoice_id', 'in', [...invoiceIds])
    .where('kind', '=', 'late')
    .orderBy('block_timestamp')
    .orderBy('log_index')
    .execute();
  for (const r of rows) {
    const list = out.get(r.invoice_id!) ?? [];
    if (!list.includes(r.tx_hash)) list.push(r.tx_hash);
    out.set(r.invoice_id!, list);
  }
  return out;
}

/**
 * Unmatched transfers to any of the merchant's wallet addresses, newest first. An address shared
 * by several merchants shows its unmatched transfers to each of them (nobody can tell whose they are).
 */
export async function listUnmatchedTransfers(db: Db, network: TronNetwork, merchantId: string, limit = 100): Promise<ChainTransfer[]> {
  const rows = await unmatchedTransfersQuery(db, network, merchantId, limit).execute();
  return rows.map(rowToTransfer);
}

/** Through the partial index of unmatched transfers (the kind a literal). Exported for the query-plan test. */
export function unmatchedTransfersQuery(db: Db, network: TronNetwork, merchantId: string, limit = 100) {
  return db
    .selectFrom('chain_transfers')
    .selectAll()
    .where(sql<SqlBool>`kind = 'unmatched'`)
    .where('network', '=', network.id)
    .where('to_address', 'in', (eb) => eb.selectFrom('wallets').select('address').where('merchant_id', '=', merchantId).where('network', '=', network.id))
    .orderBy('block_timestamp', 'desc')
    .orderBy('id')
    .limit(limit);
}

/** The transfer that paid a review invoice (kind review_paid), for the owner's accept decision. */
export async function findReviewPayment(db: Db | Trx, invoiceId: string): Promise<ChainTransfer | undefined> {
  return (await listInvoiceTransfers(db, invoiceId, 'review_paid'))[0];
}
