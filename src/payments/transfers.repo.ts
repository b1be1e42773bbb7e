/**
 * The recorded transfers (chain_transfers) of every network: one row per Transfer log, keyed by
 * (network, tx hash, log index), written by the payments layer (record.ts) and read by the
 * Dashboard, the ledger, the console and the invoices feature through these functions.
 */
import { sql, type ExpressionBuilder, type Selectable, type SqlBool } from 'kysely';
import { findNetwork, tokenByContract, type NetworkId } from '../chains/networks.js';
import type { Db, Trx } from '../db/database.js';
import type { ChainTransferKind, ChainTransfersTable, Database } from '../db/schema.js';
import { fromDbAmount, toDbAmount } from '../lib/amounts.js';
import { newId } from '../lib/ids.js';
import { merchantLatePaymentsQuery } from '../invoices/invoice-payments.js';
import type { ChainTransfer } from './transfer.model.js';

/** A network as these queries need it: its id. */
export type NetworkRef = { readonly id: string };

/** True when this Transfer log of this network is recorded already: (network, tx hash, log index) is a transfer's key. */
export async function isLogRecorded(trx: Trx, network: string, txHash: string, logIndex: number): Promise<boolean> {
  const row = await trx
    .selectFrom('chain_transfers')
    .select('id')
    .where('tx_hash', '=', txHash)
    .where('log_index', '=', logIndex)
    .where('network', '=', network)
    .executeTakeFirst();
  return row !== undefined;
}

/** One transfer as it is recorded (its id and record time are the insert's). */
export type TransferRecord = Omit<ChainTransfer, 'id' | 'recordedAt'>;

export async function insertTransfer(trx: Trx, r: TransferRecord, now: number): Promise<void> {
  await trx
    .insertInto('chain_transfers')
    .values({
      id: newId('trf'),
      network: r.network,
      token_contract: r.tokenContract,
      tx_hash: r.txHash,
      log_index: r.logIndex,
      from_address: r.from,
      to_address: r.to,
      amount: toDbAmount(r.amount),
      kind: r.kind,
      invoice_id: r.invoiceId,
      block_number: r.blockNumber,
      block_timestamp: r.blockTimestamp,
      recorded_at: now,
      raw_amount: r.rawAmount.toString(),
      block_hash: r.blockHash,
      token: r.token,
      reason: r.reason,
    })
    .execute();
}

// ---- Reads for the Dashboard and the ledger -------------------------------------------------

/**
 * The addresses the merchant's wallets receive on a network (archived wallets too): through
 * wallet_networks, since one EVM wallet receives on several networks under one address.
 */
function merchantAddressesOn(eb: ExpressionBuilder<Database, 'chain_transfers'>, merchantId: string, network: NetworkRef) {
  return eb
    .selectFrom('wallet_networks')
    .innerJoin('wallets', 'wallets.id', 'wallet_networks.wallet_id')
    .select('wallet_networks.address')
    .where('wallets.merchant_id', '=', merchantId)
    .where('wallet_networks.network', '=', network.id);
}

/** A row's raw value: stored, or (rows written before migration 0031) the micro-units scaled to the token's decimals. */
function rawOf(row: Selectable<ChainTransfersTable>): bigint {
  if (row.raw_amount !== null) return BigInt(row.raw_amount);
  const network = findNetwork(row.network);
  const decimals = (network && tokenByContract(network, row.token_contract)?.decimals) ?? 6;
  return BigInt(row.amount) * 10n ** BigInt(decimals - 6);
}

export function rowToTransfer(row: Selectable<ChainTransfersTable>): ChainTransfer {
  return {
    id: row.id,
    network: row.network as NetworkId,
    token: row.token ?? 'USDT',
    txHash: row.tx_hash,
    logIndex: row.log_index,
    from: row.from_address,
    to: row.to_address,
    amount: fromDbAmount(row.amount),
    rawAmount: rawOf(row),
    tokenContract: row.token_contract,
    kind: row.kind,
    invoiceId: row.invoice_id,
    blockNumber: row.block_number,
    blockHash: row.block_hash,
    blockTimestamp: row.block_timestamp,
    recordedAt: row.recorded_at,
    reason: row.reason,
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

/** Late payments against any of the merchant's invoices at or above `minAmount` micro-units, newest first (the Dashboard's list). */
export async function listMerchantLatePayments(db: Db, merchantId: string, limit = 100, minAmount = 0): Promise<ChainTransfer[]> {
  const rows = await merchantLatePaymentsQuery(db, merchantId, limit, minAmount).execute();
  return rows.map(rowToTransfer);
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
export async function listUnmatchedTransfers(db: Db, network: NetworkRef, merchantId: string, limit = 100, minAmount = 0): Promise<ChainTransfer[]> {
  const rows = await unmatchedTransfersQuery(db, network, merchantId, limit, minAmount).execute();
  return rows.map(rowToTransfer);
}

/** How many unmatched transfers to the merchant's wallets are below `minAmount` micro-units (dust, folded away in the console). */
export async function countUnmatchedDust(db: Db, network: NetworkRef, merchantId: string, minAmount: number): Promise<number> {
  const row = await db
    .selectFrom('chain_transfers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(sql<SqlBool>`kind = 'unmatched'`)
    .where('amount', '<', minAmount)
    .where('network', '=', network.id)
    .where('to_address', 'in', (eb) => merchantAddressesOn(eb, merchantId, network))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Through the partial index of unmatched transfers (the kind a literal). Exported for the query-plan test. */
export function unmatchedTransfersQuery(db: Db, network: NetworkRef, merchantId: string, limit = 100, minAmount = 0) {
  return db
    .selectFrom('chain_transfers')
    .selectAll()
    .where(sql<SqlBool>`kind = 'unmatched'`)
    .where('amount', '>=', minAmount)
    .where('network', '=', network.id)
    .where('to_address', 'in', (eb) => merchantAddressesOn(eb, merchantId, network))
    .orderBy('block_timestamp', 'desc')
    .orderBy('id')
    .limit(limit);
}

/** The transfer that paid a review invoice (kind review_paid), for the owner's accept decision. */
export async function findReviewPayment(db: Db | Trx, invoiceId: string): Promise<ChainTransfer | undefined> {
  return (await listInvoiceTransfers(db, invoiceId, 'review_paid'))[0];
}

/**
 * One recorded transfer by its Transfer log, on `network` when given (a transfer's key); without
 * one, the oldest recorded with that hash and index (a manual resolution names a log by those two).
 */
export async function findTransferByLog(db: Db | Trx, txHash: string, logIndex: number, network?: string): Promise<ChainTransfer | undefined> {
  let q = db.selectFrom('chain_transfers').selectAll().where('tx_hash', '=', txHash).where('log_index', '=', logIndex);
  if (network !== undefined) q = q.where('network', '=', network);
  const row = await q.orderBy('recorded_at').orderBy('id').executeTakeFirst();
  return row ? rowToTransfer(row) : undefined;
}

/** Recorded transfers of these transactions of a network in another block than `block` (a transaction lives in one block). */
export async function findTransferBlocks(
  db: Db | Trx,
  network: string,
  txHashes: readonly string[],
  block: number,
): Promise<Array<{ txHash: string; block: number }>> {
  if (txHashes.length === 0) return [];
  const rows = await db
    .selectFrom('chain_transfers')
    .select(['tx_hash', 'block_number'])
    .where('tx_hash', 'in', [...txHashes])
    .where('network', '=', network)
    .where('block_number', '!=', block)
    .limit(1)
    .execute();
  return rows.map((r) => ({ txHash: r.tx_hash, block: r.block_number }));
}

/** The transfers recorded on a network in blocks from `fromBlock` on that carry their block's hash (to check they are still canonical). */
export async function listRecordedSince(db: Db | Trx, network: string, fromBlock: number): Promise<ChainTransfer[]> {
  const rows = await db
    .selectFrom('chain_transfers')
    .selectAll()
    .where('network', '=', network)
    .where('block_number', '>=', fromBlock)
    .where('block_hash', 'is not', null)
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
  return rows.map(rowToTransfer);
}
