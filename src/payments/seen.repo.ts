/**
 * Transfers seen above their network's finality that match an open invoice (chain_seen): kept so
 * that the invoice can say "payment seen" before the transfer is final, and so that a block that
 * leaves the chain before then is told as dropped. A row never confirms anything: the final read
 * records the transfer (record.ts), which marks its row final.
 */
import type { Insertable, Selectable } from 'kysely';
import type { NetworkId } from '../chains/networks.js';
import type { Db, Trx } from '../db/database.js';
import type { ChainSeenTable } from '../db/schema.js';

/** The seen row of a transfer that is now recorded as final, if there is one, is final too. */
export async function markSeenFinal(trx: Trx, t: { network: string; txHash: string; logIndex: number }, now: number): Promise<void> {
  await trx
    .updateTable('chain_seen')
    .set({ final_at: now })
    .where('network', '=', t.network)
    .where('tx_hash', '=', t.txHash)
    .where('log_index', '=', t.logIndex)
    .where('final_at', 'is', null)
    .execute();
}

/** A seen transfer as the watcher keeps it. */
export interface SeenRow {
  network: NetworkId;
  txHash: string;
  logIndex: number;
  to: string;
  tokenContract: string;
  amount: bigint;
  rawAmount: bigint;
  blockNumber: number;
  blockHash: string;
  invoiceId: string | null;
  seenAt: number;
  droppedAt: number | null;
  finalAt: number | null;
}

function toRow(r: Selectable<ChainSeenTable>): SeenRow {
  return {
    network: r.network as NetworkId,
    txHash: r.tx_hash,
    logIndex: r.log_index,
    to: r.to_address,
    tokenContract: r.token_contract,
    amount: BigInt(r.amount),
    rawAmount: BigInt(r.raw_amount),
    blockNumber: r.block_number,
    blockHash: r.block_hash,
    invoiceId: r.invoice_id,
    seenAt: r.seen_at,
    droppedAt: r.dropped_at,
    finalAt: r.final_at,
  };
}

export async function findSeen(db: Db | Trx, key: { network: string; txHash: string; logIndex: number }): Promise<SeenRow | undefined> {
  const row = await db
    .selectFrom('chain_seen')
    .selectAll()
    .where('network', '=', key.network)
    .where('tx_hash', '=', key.txHash)
    .where('log_index', '=', key.logIndex)
    .executeTakeFirst();
  return row ? toRow(row) : undefined;
}

type NewSeen = Omit<SeenRow, 'droppedAt' | 'finalAt'>;

function seenValues(s: NewSeen, droppedAt: number | null, finalAt: number | null): Insertable<ChainSeenTable> {
  return {
    network: s.network,
    tx_hash: s.txHash,
    log_index: s.logIndex,
    to_address: s.to,
    token_contract: s.tokenContract,
    amount: Number(s.amount),
    raw_amount: s.rawAmount.toString(),
    block_number: s.blockNumber,
    block_hash: s.blockHash,
    invoice_id: s.invoiceId,
    seen_at: s.seenAt,
    dropped_at: droppedAt,
    final_at: finalAt,
  };
}

/** Stores a seen transfer, or (seen again after its block was dropped, in a block of its own) brings it back. */
export async function saveSeen(trx: Trx, s: NewSeen): Promise<void> {
  await trx
    .insertInto('chain_seen')
    .values(seenValues(s, null, null))
    .onConflict((oc) =>
      oc
        .columns(['network', 'tx_hash', 'log_index'])
        .doUpdateSet({ block_number: s.blockNumber, block_hash: s.blockHash, seen_at: s.seenAt, dropped_at: null }),
    )
    .execute();
}

/** A seen transfer's block left the chain before it was final: true when it was still waiting. */
export async function markSeenDropped(trx: Trx, key: { network: string; txHash: string; logIndex: number }, now: number): Promise<boolean> {
  const r = await trx
    .updateTable('chain_seen')
    .set({ dropped_at: now })
    .where('network', '=', key.network)
    .where('tx_hash', '=', key.txHash)
    .where('log_index', '=', key.logIndex)
    .where('dropped_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

/** The seen transfers of a network still waiting to be final (neither final nor dropped), lowest block first. */
export async function listWaitingSeen(db: Db | Trx, network: string): Promise<SeenRow[]> {
  const rows = await db
    .selectFrom('chain_seen')
    .selectAll()
    .where('network', '=', network)
    .where('dropped_at', 'is', null)
    .where('final_at', 'is', null)
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
  return rows.map(toRow);
}

/** For each invoice, its newest seen transfer still waiting to be final (the invoice's `payment_seen`). */
export async function waitingSeenOf(db: Db | Trx, invoiceIds: readonly string[]): Promise<Map<string, SeenRow>> {
  const out = new Map<string, SeenRow>();
  if (invoiceIds.length === 0) return out;
  const rows = await db
    .selectFrom('chain_seen')
    .selectAll()
    .where('invoice_id', 'in', [...new Set(invoiceIds)])
    .where('dropped_at', 'is', null)
    .where('final_at', 'is', null)
    .orderBy('seen_at')
    .execute();
  for (const r of rows) out.set(r.invoice_id!, toRow(r));
  return out;
}

/** Records that a confirmed transfer's block left the chain (once: the row is final and dropped). */
export async function markFinalDropped(trx: Trx, s: NewSeen, now: number): Promise<boolean> {
  const r = await trx
    .insertInto('chain_seen')
    .values(seenValues(s, now, now))
    .onConflict((oc) => oc.columns(['network', 'tx_hash', 'log_index']).doUpdateSet({ dropped_at: now }).where('chain_seen.dropped_at', 'is', null))
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Whether a seen transfer of this invoice left the chain before it was final (and was not recorded since). */
export async function hasDroppedSeen(db: Db | Trx, invoiceId: string): Promise<boolean> {
  const row = await db
    .selectFrom('chain_seen')
    .select('tx_hash')
    .where('invoice_id', '=', invoiceId)
    .where('dropped_at', 'is not', null)
    .where('final_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
