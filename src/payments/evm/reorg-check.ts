/**
 * Under a confirmation-count rule (`finality = 64` in [[evm.networks]]) a block counted final can
 * still leave the chain in a reorganization deeper than the count; under `finalized` or `safe` it
 * cannot without the chain's own finality failing. So with a count, each final read looks again at
 * the transfers recorded in the last blocks below the final head (twice the count): one whose block
 * hash is no longer the one at its height was reorged away after it was recorded. A confirmed
 * invoice stays confirmed (confirmed is final in the invoice state machine: the goods may be gone),
 * and the merchant and the integrator are told, once: invoice.payment_dropped with the confirmed
 * invoice, and an error in the log.
 */
import type { EvmProvider, EvmWatch } from '../../chains/evm/watch.js';
import type { VerifiedTransfer } from '../../chains/family.js';
import { writeTransaction } from '../../db/database.js';
import { findInvoiceAnyMerchant } from '../../invoices/invoices.repo.js';
import { insertSeenEvent } from '../../invoices/seen-payments.js';
import { formatAmount } from '../../lib/amounts.js';
import { markFinalDropped } from '../seen.repo.js';
import { listRecordedSince } from '../transfers.repo.js';
import type { ChainTransfer } from '../transfer.model.js';
import { attempt } from './evm-providers.js';
import type { CoreDeps } from '../../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'>;

function asVerified(t: ChainTransfer): VerifiedTransfer {
  return {
    network: t.network,
    token: t.token,
    contract: t.tokenContract,
    from: t.from,
    to: t.to,
    raw: t.rawAmount,
    amount: { exact: true, micros: t.amount },
    txHash: t.txHash,
    logIndex: t.logIndex,
    blockNumber: BigInt(t.blockNumber),
    blockHash: t.blockHash!,
    blockTimeMs: t.blockTimestamp,
    finality: 'final',
  };
}

/** Checks the recently recorded transfers' blocks through one provider; tells each one reorged away, once. */
export async function checkRecordedBlocks(deps: Deps, w: EvmWatch, p: EvmProvider, finalHead: bigint): Promise<void> {
  if (w.finality.kind !== 'confirmations') return;
  const since = Number(finalHead) - 2 * w.finality.blocks;
  const recorded = await listRecordedSince(deps.db, w.network.id, Math.max(0, since));
  if (recorded.length === 0) return;
  const checked = await attempt(
    p,
    () => deps.clock.now(),
    () => p.reader.recheck(recorded.map(asVerified)),
  );
  if (!checked.ok || checked.value.reorged.length === 0) return;
  const gone = new Set(checked.value.reorged.map((t) => `${t.txHash}:${t.logIndex}`));
  const now = deps.clock.now();
  await writeTransaction(deps.db, async (trx, tx) => {
    for (const t of recorded.filter((r) => gone.has(`${r.txHash}:${r.logIndex}`))) {
      const row = { ...t, rawAmount: t.rawAmount, blockHash: t.blockHash!, seenAt: t.recordedAt };
      if (!(await markFinalDropped(trx, row, now))) continue;
      deps.log.error(
        { network: t.network, tx_hash: t.txHash, log_index: t.logIndex, block: t.blockNumber, invoice_id: t.invoiceId, kind: t.kind },
        'chain: A RECORDED TRANSFER LEFT THE CHAIN: its block was reorganized away after it counted as final under the confirmation count; the invoice keeps its status',
      );
      const invoice = t.invoiceId ? await findInvoiceAnyMerchant(trx, t.invoiceId) : undefined;
      if (!invoice) continue;
      const transfer = {
        network: t.network,
        token: t.token,
        tx_hash: t.txHash,
        log_index: t.logIndex,
        block_number: t.blockNumber,
        amount: formatAmount(t.amount),
        raw_amount: t.rawAmount.toString(),
      };
      await insertSeenEvent(deps, tx, 'invoice.payment_dropped', { ...invoice, paymentSeen: null }, transfer, now);
    }
  });
  deps.deliveriesQueued.notify();
}
