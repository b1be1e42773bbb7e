/**
 * The chain feature's SQL: the scanner's durable cursor and unread ranges, the watched wallet
 * addresses, and the recorded transfers. Invoice state changes live in src/invoices/.
 */
import { findNetwork, tokenByContract, type NetworkId } from '../chains/networks.js';
import { listNetworkAddresses } from '../wallets/wallets.repo.js';
import { larger, smaller } from '../db/portable-sql.js';
import { sql, type Selectable, type SqlBool } from 'kysely';
import { writeTransaction, type Db, type Trx } from '../db/database.js';
import type { ChainDisputesTable, ChainTransferKind, ChainTransfersTable } from '../db/schema.js';
import { fromDbAmount, toDbAmount } from '../lib/amounts.js';
import { newId } from '../lib/ids.js';
import type { TronNetwork } from '../lib/tron.js';
import { merchantLatePaymentsQuery } from '../invoices/invoice-payments.js';
import type { VerifiedTransfer } from './verifier.js';
import type { ChainTransfer } from './chain.model.js';

/** The scanner's durable state: the head follower's cursor and the linger end. */
export interface ScanState {
  cursorBlock: number;
  cursorTime: number;
  activeUntil: number;
}

export interface ScanGap {
  fromBlock: number;
  toBlock: number;
  afterTime: number;
  beforeTime: number;
}

export async function loadScanState(db: Db | Trx, network: TronNetwork): Promise<ScanState | undefined> {
  const row = await db.selectFrom('chain_scan').selectAll().where('network', '=', network.id).executeTakeFirst();
  return row ? { cursorBlock: row.cursor_block, cursorTime: row.cursor_time, activeUntil: row.active_until } : undefined;
}

export async function saveScanState(trx: Db | Trx, network: TronNetwork, s: ScanState, now: number): Promise<void> {
  await trx
    .insertInto('chain_scan')
    .values({ network: network.id, cursor_block: s.cursorBlock, cursor_time: s.cursorTime, active_until: s.activeUntil, updated_at: now })
    .onConflict((oc) =>
      oc.column('network').doUpdateSet({ cursor_block: s.cursorBlock, cursor_time: s.cursorTime, active_until: s.activeUntil, updated_at: now }),
    )
    .execute();
}

/** Unread block ranges, oldest first. */
export async function listGaps(db: Db | Trx, network: TronNetwork): Promise<ScanGap[]> {
  const rows = await db.selectFrom('chain_scan_gaps').selectAll().where('network', '=', network.id).orderBy('from_block').execute();
  return rows.map((r) => ({ fromBlock: r.from_block, toBlock: r.to_block, afterTime: r.after_time, beforeTime: r.before_time }));
}

/**
 * Records an unread range. The follower inserts its gap before the pass commits its cursor, so a
 * crash in between leaves that gap behind and the next start inserts one from the same block again:
 * the two become one range up to the later end (a plain insert failed on the UNIQUE key at every
 * pass after such a crash, and the scanner never read a block again).
 */
export async function insertGap(trx: Db | Trx, network: TronNetwork, g: ScanGap): Promise<void> {
  await trx
    .insertInto('chain_scan_gaps')
    .values({ network: network.id, from_block: g.fromBlock, to_block: g.toBlock, after_time: g.afterTime, before_time: g.beforeTime })
    .onConflict((oc) =>
      oc.columns(['network', 'from_block']).doUpdateSet((eb) => ({
        to_block: larger(eb.ref('chain_scan_gaps.to_block'), eb.ref('excluded.to_block')),
        after_time: smaller(eb.ref('chain_scan_gaps.after_time'), eb.ref('excluded.after_time')),
        before_time: larger(eb.ref('chain_scan_gaps.before_time'), eb.ref('excluded.before_time')),
      })),
    )
    .execute();
}

/** The gap that started at `oldFrom` now starts at `g.fromBlock` (or is gone when g is undefined). */
export async function updateGap(trx: Db | Trx, network: TronNetwork, oldFrom: number, g: ScanGap | undefined): Promise<void> {
  await trx.deleteFrom('chain_scan_gaps').where('network', '=', network.id).where('from_block', '=', oldFrom).execute();
  if (g) await insertGap(trx, network, g);
}

/**
 * A disputed block taken out of the unread range that starts at it: in one transaction, the range
 * becomes `single` (that block alone) and `rest` (the blocks after it, unless none are left), so a
 * crash never leaves the block out of every range.
 */
export async function splitGap(db: Db, network: TronNetwork, single: ScanGap, rest: ScanGap): Promise<void> {
  await writeTransaction(db, async (trx) => {
    await updateGap(trx, network, single.fromBlock, single);
    if (rest.fromBlock <= rest.toBlock) await insertGap(trx, network, rest);
  });
}

/** Every registered wallet address (watched while the scanner runs). */
export async function listWalletAddresses(db: Db, network: TronNetwork): Promise<string[]> {
  return listNetworkAddresses(db, network.id);
}

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

export async function insertTransfer(
  trx: Trx,
  network: TronNetwork,
  t: VerifiedTransfer,
  kind: ChainTransferKind,
  invoiceId: string | null,
  now: number,
): Promise<void> {
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
      // TRON's USDT has 6 decimals: the raw value is the micro-units; its block reads carry no block hash.
      raw_amount: t.amount.toString(),
      block_hash: null,
      token: 'USDT',
    })
    .execute();
}

// ---- Reads for the Dashboard and the ledger -------------------------------------------------

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
export async function listUnmatchedTransfers(db: Db, network: TronNetwork, merchantId: string, limit = 100, minAmount = 0): Promise<ChainTransfer[]> {
  const rows = await unmatchedTransfersQuery(db, network, merchantId, limit, minAmount).execute();
  return rows.map(rowToTransfer);
}

/** How many unmatched transfers to the merchant's wallets are below `minAmount` micro-units (dust, folded away in the console). */
export async function countUnmatchedDust(db: Db, network: TronNetwork, merchantId: string, minAmount: number): Promise<number> {
  const row = await db
    .selectFrom('chain_transfers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(sql<SqlBool>`kind = 'unmatched'`)
    .where('amount', '<', minAmount)
    .where('network', '=', network.id)
    .where('to_address', 'in', (eb) => eb.selectFrom('wallets').select('address').where('merchant_id', '=', merchantId).where('network', '=', network.id))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Through the partial index of unmatched transfers (the kind a literal). Exported for the query-plan test. */
export function unmatchedTransfersQuery(db: Db, network: TronNetwork, merchantId: string, limit = 100, minAmount = 0) {
  return db
    .selectFrom('chain_transfers')
    .selectAll()
    .where(sql<SqlBool>`kind = 'unmatched'`)
    .where('amount', '>=', minAmount)
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

// ---- Disputes (held blocks the providers do not agree on) -----------------------------------

/** An open or resolved dispute as the scanner, /health, the metrics and `gatewayd chain status` see it. */
export interface DisputeRow {
  id: string;
  block: number | null;
  txHash: string | null;
  reason: string;
  since: number;
  lastSeen: number;
  resolvedAt: number | null;
  notifiedAt: number | null;
}

export function disputeSubject(block: number): string {
  return `block ${block}`;
}

function rowToDispute(r: Selectable<ChainDisputesTable>): DisputeRow {
  return {
    id: r.id,
    block: r.block_number,
    txHash: r.tx_hash,
    reason: r.reason,
    since: r.first_seen_at,
    lastSeen: r.last_seen_at,
    resolvedAt: r.resolved_at,
    notifiedAt: r.notified_at,
  };
}

/** The open disputes, oldest block first. */
export async function listOpenDisputes(db: Db | Trx, network: TronNetwork): Promise<DisputeRow[]> {
  const rows = await db
    .selectFrom('chain_disputes')
    .selectAll()
    .where('network', '=', network.id)
    .where('resolved_at', 'is', null)
    .orderBy('block_number')
    .orderBy('first_seen_at')
    .execute();
  return rows.map(rowToDispute);
}

/**
 * Holds block `block` as disputed: a new open row, or the open one seen again (its reason and
 * last_seen_at updated). `created` tells a new dispute (the one moment the support staff are told).
 */
export async function holdDispute(
  db: Db,
  network: TronNetwork,
  d: { block: number; txHash: string | null; reason: string },
  now: number,
): Promise<{ dispute: DisputeRow; created: boolean }> {
  const subject = disputeSubject(d.block);
  const open = await db
    .selectFrom('chain_disputes')
    .selectAll()
    .where('network', '=', network.id)
    .where('subject', '=', subject)
    .where('resolved_at', 'is', null)
    .executeTakeFirst();
  if (open) {
    const txHash = d.txHash ?? open.tx_hash;
    await db.updateTable('chain_disputes').set({ reason: d.reason, tx_hash: txHash, last_seen_at: now }).where('id', '=', open.id).execute();
    return { dispute: rowToDispute({ ...open, reason: d.reason, tx_hash: txHash, last_seen_at: now }), created: false };
  }
  const row = {
    id: newId('dsp'),
    network: network.id,
    subject,
    block_number: d.block,
    tx_hash: d.txHash,
    reason: d.reason,
    first_seen_at: now,
    last_seen_at: now,
    resolved_at: null,
    notified_at: null,
  };
  await db.insertInto('chain_disputes').values(row).execute();
  return { dispute: rowToDispute(row), created: true };
}

/** The open dispute of block `block`, if any, is resolved now (the providers agree on it). */
export async function resolveDispute(db: Db, network: TronNetwork, block: number, now: number): Promise<boolean> {
  const res = await db
    .updateTable('chain_disputes')
    .set({ resolved_at: now, last_seen_at: now })
    .where('network', '=', network.id)
    .where('subject', '=', disputeSubject(block))
    .where('resolved_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The support staff were mailed about this dispute. */
export async function markDisputeNotified(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('chain_disputes').set({ notified_at: now }).where('id', '=', id).execute();
}
