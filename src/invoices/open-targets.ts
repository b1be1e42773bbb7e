/** What a per-token-account watcher (Solana) polls while invoices are open: the pairs they ask or offer. */
import type { Db } from '../db/database.js';
import { isOpen } from './invoices.repo.js';

/** The (address, token contract) pairs open invoices ask or offer on a network: what a per-token-account watcher polls. */
export async function openInvoiceTargets(db: Db, network: { id: string }): Promise<Array<{ address: string; tokenContract: string }>> {
  const own = await db
    .selectFrom('invoices')
    .select(['wallet_address', 'token_contract'])
    .distinct()
    .where(isOpen('status'))
    .where('network', '=', network.id)
    .execute();
  const offered = await db
    .selectFrom('invoice_options as o')
    .innerJoin('invoices as i', 'i.id', 'o.invoice_id')
    .select(['o.wallet_address', 'o.token_contract'])
    .distinct()
    .where(isOpen('i.status'))
    .where('o.network', '=', network.id)
    .where('o.status', '=', 'open')
    .execute();
  const pairs = new Map(
    [...own, ...offered].map((r) => [`${r.wallet_address} ${r.token_contract}`, { address: r.wallet_address, tokenContract: r.token_contract }]),
  );
  return [...pairs.values()];
}
