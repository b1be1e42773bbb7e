/**
 * Where each network's watcher stands, durably: its cursor (chain_scan), the block ranges it has
 * still to read behind it (chain_scan_gaps) and the blocks its providers disagree about
 * (chain_disputes), each keyed by network. The TRON block scanner and the EVM watcher keep theirs
 * here alike.
 */
import type { Selectable } from 'kysely';
import { writeTransaction, type Db, type Trx } from '../db/database.js';
import { larger, smaller } from '../db/portable-sql.js';
import type { ChainDisputesTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';

/** A network as these queries need it: its id. */
type NetworkRef = { readonly id: string };

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

export async function loadScanState(db: Db | Trx, network: NetworkRef): Promise<ScanState | undefined> {
  const row = await db.selectFrom('chain_scan').selectAll().where('network', '=', network.id).executeTakeFirst();
  return row ? { cursorBlock: row.cursor_block, cursorTime: row.cursor_time, activeUntil: row.active_until } : undefined;
}

export async function saveScanState(trx: Db | Trx, network: NetworkRef, s: ScanState, now: number): Promise<void> {
  await trx
    .insertInto('chain_scan')
    .values({ network: network.id, cursor_block: s.cursorBlock, cursor_time: s.cursorTime, active_until: s.activeUntil, updated_at: now })
    .onConflict((oc) =>
      oc.column('network').doUpdateSet({ cursor_block: s.cursorBlock, cursor_time: s.cursorTime, active_until: s.activeUntil, updated_at: now }),
    )
    .execute();
}

/** Unread block ranges, oldest first. */
export async function listGaps(db: Db | Trx, network: NetworkRef): Promise<ScanGap[]> {
  const rows = await db.selectFrom('chain_scan_gaps').selectAll().where('network', '=', network.id).orderBy('from_block').execute();
  return rows.map((r) => ({ fromBlock: r.from_block, toBlock: r.to_block, afterTime: r.after_time, beforeTime: r.before_time }));
}

/**
 * Records an unread range. The follower inserts its gap before the pass commits its cursor, so a
 * crash in between leaves that gap behind and the next start inserts one from the same block again:
 * the two become one range up to the later end (a plain insert failed on the UNIQUE key at every
 * pass after such a crash, and the scanner never read a block again).
 */
export async function insertGap(trx: Db | Trx, network: NetworkRef, g: ScanGap): Promise<void> {
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
export async function updateGap(trx: Db | Trx, network: NetworkRef, oldFrom: number, g: ScanGap | undefined): Promise<void> {
  await trx.deleteFrom('chain_scan_gaps').where('network', '=', network.id).where('from_block', '=', oldFrom).execute();
  if (g) await insertGap(trx, network, g);
}

/**
 * A disputed block taken out of the unread range that starts at it: in one transaction, the range
 * becomes `single` (that block alone) and `rest` (the blocks after it, unless none are left), so a
 * crash never leaves the block out of every range.
 */
export async function splitGap(db: Db, network: NetworkRef, single: ScanGap, rest: ScanGap): Promise<void> {
  await writeTransaction(db, async (trx) => {
    await updateGap(trx, network, single.fromBlock, single);
    if (rest.fromBlock <= rest.toBlock) await insertGap(trx, network, rest);
  });
}

// ---- Disputes (blocks the providers do not agree on) -----------------------------------------

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
export async function listOpenDisputes(db: Db | Trx, network: NetworkRef): Promise<DisputeRow[]> {
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
  network: NetworkRef,
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
export async function resolveDispute(db: Db, network: NetworkRef, block: number, now: number): Promise<boolean> {
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
