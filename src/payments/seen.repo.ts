/**
 * Transfers seen above their network's finality that match an open invoice (chain_seen): kept so
 * that the invoice can say "payment seen" before the transfer is final, and so that a block that
 * leaves the chain before then is told as dropped. A row never confirms anything: the final read
 * records the transfer (record.ts), which marks its row final.
 */
import type { Trx } from '../db/database.js';

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
