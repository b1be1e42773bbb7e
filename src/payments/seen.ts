/**
 * Seen, then final (docs/payments.md), the chain-neutral part: a family's watcher hands over the
 * transfers it read above its network's finality (`finality: 'seen'`) and, later, which of them
 * left the chain; this records them (chain_seen), matches them to the open invoice they will pay
 * and tells the integrator (invoice.payment_seen, invoice.payment_dropped). The invoice stays
 * pending: only the final read, through record.ts, confirms it. Any family's watcher that reads
 * its latest blocks can call these.
 */
import { transferKey, type VerifiedTransfer } from '../chains/family.js';
import { findNetwork, type FinalityRule, type Network } from '../chains/networks.js';
import { writeTransaction, type Trx, type Tx } from '../db/database.js';
import { formatAmount, micros } from '../lib/amounts.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import { findSeenInvoice, insertSeenEvent, type SeenTransferData } from '../invoices/seen-payments.js';
import { findSeen, listWaitingSeen, markSeenDropped, saveSeen, waitingSeenOf, type SeenRow } from './seen.repo.js';
import { isLogRecorded } from './transfers.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'>;

type SeenDeps = Pick<Deps, 'db' | 'clock' | 'log' | 'config' | 'deliveriesQueued'>;

/** About how long after its block a transfer is final by the rule: the network's own time for a tag, the count of blocks otherwise. */
export function finalityDelayMs(network: Readonly<Network>, rule: FinalityRule): number {
  if (rule.kind === 'confirmations') return rule.blocks * network.blockTimeMs;
  // `safe` comes about half as far behind the head as `finalized` on the chains that have both.
  return rule.tag === 'safe' ? Math.ceil(network.finalityTimeMs / 2) : network.finalityTimeMs;
}

function transferData(s: Pick<SeenRow, 'network' | 'txHash' | 'logIndex' | 'blockNumber' | 'amount' | 'rawAmount'>, token: string): SeenTransferData {
  return {
    network: s.network,
    token,
    tx_hash: s.txHash,
    log_index: s.logIndex,
    block_number: s.blockNumber,
    amount: formatAmount(micros(s.amount)),
    raw_amount: s.rawAmount.toString(),
  };
}

function tokenOf(network: Readonly<Network>, contract: string): string {
  return network.tokens.find((t) => t.contract.toLowerCase() === contract.toLowerCase())?.symbol ?? 'USDT';
}

/** One seen transfer: stored and told when it matches an open invoice and is neither recorded nor known already. */
async function noteOne(deps: SeenDeps, trx: Trx, tx: Tx, network: Readonly<Network>, rule: FinalityRule, t: VerifiedTransfer, now: number): Promise<boolean> {
  if (!t.amount.exact) return false;
  const known = await findSeen(trx, t);
  if (known && known.droppedAt === null && known.blockHash === t.blockHash) return false;
  if (await isLogRecorded(trx, t.network, t.txHash, t.logIndex)) return false;
  const invoice = await findSeenInvoice(trx, {
    network: t.network,
    tokenContract: t.contract,
    to: t.to,
    amount: t.amount.micros,
    blockTimestamp: t.blockTimeMs,
  });
  if (!invoice) return false;
  const row = {
    network: t.network,
    txHash: t.txHash,
    logIndex: t.logIndex,
    to: t.to,
    tokenContract: t.contract,
    amount: t.amount.micros,
    rawAmount: t.raw,
    blockNumber: Number(t.blockNumber),
    blockHash: t.blockHash,
    invoiceId: invoice.id,
    seenAt: now,
  };
  await saveSeen(trx, row);
  const expectedFinalAt = now + finalityDelayMs(network, rule);
  const seen: Invoice = { ...invoice, paymentSeen: { network: t.network, txHash: t.txHash, blockNumber: row.blockNumber, seenAt: now, expectedFinalAt } };
  await insertSeenEvent(deps, tx, 'invoice.payment_seen', seen, transferData(row, t.token), now, Math.round((expectedFinalAt - now) / 1000));
  deps.log.info(
    { network: t.network, tx_hash: t.txHash, log_index: t.logIndex, block: row.blockNumber, invoice_id: invoice.id },
    'chain: payment seen, waiting for finality',
  );
  return true;
}

/** Records the seen transfers that will pay an open invoice, with invoice.payment_seen each; how many were new. */
export async function noteSeen(deps: SeenDeps, network: Readonly<Network>, rule: FinalityRule, transfers: readonly VerifiedTransfer[]): Promise<number> {
  const seen = transfers.filter((t) => t.finality === 'seen' && t.network === network.id);
  if (seen.length === 0) return 0;
  const now = deps.clock.now();
  const told = await writeTransaction(deps.db, async (trx, tx) => {
    let n = 0;
    for (const t of seen) if (await noteOne(deps, trx, tx, network, rule, t, now)) n += 1;
    return n;
  });
  if (told > 0) deps.deliveriesQueued.notify();
  return told;
}

/** The finality rule the instance follows on a network: the operator's for an EVM network, else the registry's. */
function ruleOf(config: SeenDeps['config'], network: Readonly<Network>): FinalityRule {
  return config.evmNetworks.find((e) => e.network.id === network.id)?.finality ?? network.finality;
}

/** The invoices with their `payment_seen` (the newest seen transfer of each that waits to be final). */
export async function withPaymentSeen(deps: Pick<SeenDeps, 'db' | 'config'>, invoices: readonly Invoice[]): Promise<Invoice[]> {
  const waiting = await waitingSeenOf(
    deps.db,
    invoices.map((i) => i.id),
  );
  return invoices.map((inv) => {
    const s = waiting.get(inv.id);
    const network = s ? findNetwork(s.network) : undefined;
    if (!s || !network) return { ...inv, paymentSeen: null };
    const expectedFinalAt = s.seenAt + finalityDelayMs(network, ruleOf(deps.config, network));
    return { ...inv, paymentSeen: { network: s.network, txHash: s.txHash, blockNumber: s.blockNumber, seenAt: s.seenAt, expectedFinalAt } };
  });
}

/** The seen transfers whose block left the chain: each marked dropped once, with invoice.payment_dropped. */
export async function dropSeen(deps: SeenDeps, network: Readonly<Network>, rows: readonly SeenRow[], why: string): Promise<number> {
  if (rows.length === 0) return 0;
  const now = deps.clock.now();
  const told = await writeTransaction(deps.db, async (trx, tx) => {
    let n = 0;
    for (const r of rows) {
      if (await isLogRecorded(trx, r.network, r.txHash, r.logIndex)) continue;
      if (!(await markSeenDropped(trx, r, now))) continue;
      n += 1;
      const invoice = r.invoiceId ? await findInvoiceAnyMerchant(trx, r.invoiceId) : undefined;
      deps.log.warn(
        { network: r.network, tx_hash: r.txHash, log_index: r.logIndex, block: r.blockNumber, invoice_id: r.invoiceId, why },
        'chain: seen payment dropped',
      );
      if (invoice)
        await insertSeenEvent(deps, tx, 'invoice.payment_dropped', { ...invoice, paymentSeen: null }, transferData(r, tokenOf(network, r.tokenContract)), now);
    }
    return n;
  });
  if (told > 0) deps.deliveriesQueued.notify();
  return told;
}

/**
 * After a final read of [.., to]: a waiting seen transfer at or below `to` that the providers did not
 * read as final (and do not dispute, in a block they still hold) is not in the final chain: it is dropped.
 */
export async function settleFinalRange(
  deps: SeenDeps,
  network: Readonly<Network>,
  range: { to: bigint; final: readonly VerifiedTransfer[]; held: readonly string[]; heldBlocks: ReadonlyArray<{ fromBlock: number; toBlock: number }> },
): Promise<number> {
  const taken = new Set([...range.final.map(transferKey), ...range.held]);
  const inHeld = (n: number) => range.heldBlocks.some((g) => g.fromBlock <= n && n <= g.toBlock);
  const gone = (await listWaitingSeen(deps.db, network.id)).filter(
    (r) => BigInt(r.blockNumber) <= range.to && !taken.has(transferKey(r)) && !inHeld(r.blockNumber),
  );
  return dropSeen(deps, network, gone, 'not in the final read of its block');
}
