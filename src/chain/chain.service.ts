/**
 * Recording what the scanner found: each call is one short write transaction in which the
 * verified transfers are recorded (each log once: UNIQUE tx hash + log index), the invoices they
 * pay move (through the invoices feature, with their events), the scan state moves, and the
 * invoices whose whole window is now scanned expire. A crash anywhere repeats work, never loses
 * it or counts it twice. No network here.
 */
import { writeTransaction, type Db, type Trx } from '../db/database.js';
import type { ChainTransferKind } from '../db/schema.js';
import type { AppDeps } from '../app-deps.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { applyChainPayment, expireScanned } from '../invoices/invoice-payments.js';
import { findReviewPayment, insertTransfer, isLogRecorded, saveScanState, updateGap, type ScanGap, type ScanState } from './chain.repo.js';
import { toTransactionResponse } from './chain.schemas.js';
import { afterTransferRecorded } from '../transfers/transfer-events.js';
import type { VerifiedTransfer } from './verifier.js';

export interface RecordedTransfer {
  transfer: VerifiedTransfer;
  kind: ChainTransferKind;
  invoiceId: string | null;
}

/** Largest amount SQLite stores exactly here; a bigger USDT transfer would exceed the token's supply. */
const MAX_STORABLE = BigInt(Number.MAX_SAFE_INTEGER);

export interface ScanCommit {
  transfers: VerifiedTransfer[];
  state?: ScanState;
  /** A gap that shrank (or closed: `gap` undefined). */
  gap?: { oldFrom: number; gap: ScanGap | undefined };
  /** Where the scan stands once this commits, for expiry; absent (nothing expires) for a payer's transaction id. */
  unscanned?: { scannedUntil: number; gaps: Array<{ after: number; before: number }> };
}

export async function commitScan(deps: AppDeps, c: ScanCommit): Promise<{ recorded: RecordedTransfer[]; expired: Invoice[] }> {
  const now = deps.clock.now();
  const result = await writeTransaction(deps.db, async (trx, tx) => {
    const recorded: RecordedTransfer[] = [];
    for (const t of c.transfers) {
      if (await isLogRecorded(trx, deps.config.network.id, t.txHash, t.logIndex)) continue;
      if (t.amount > MAX_STORABLE) {
        deps.log.error({ tx_hash: t.txHash, log_index: t.logIndex, to: t.to }, 'chain: transfer amount too large to store; not recorded');
        continue;
      }
      const { kind, invoiceId } = await applyChainPayment(
        deps,
        trx,
        tx,
        { to: t.to, amount: t.amount, txHash: t.txHash, blockTimestamp: t.blockTimestamp, transaction: toTransactionResponse(t) },
        now,
      );
      await insertTransfer(trx, deps.config.network, t, kind, invoiceId, now);
      if (kind === 'late' || kind === 'unmatched')
        await afterTransferRecorded(deps.config, trx, tx, { network: deps.config.network.id, txHash: t.txHash, logIndex: t.logIndex }, now);
      recorded.push({ transfer: t, kind, invoiceId });
    }
    if (c.state) await saveScanState(trx, deps.config.network, c.state, now);
    if (c.gap) await updateGap(trx, deps.config.network, c.gap.oldFrom, c.gap.gap);
    const expired = c.unscanned ? await expireScanned(deps, trx, tx, c.unscanned, now) : [];
    return { recorded, expired };
  });
  // Events were committed with their deliveries: wake the delivery worker now, not at its next poll.
  if (result.expired.length > 0 || result.recorded.length > 0) deps.deliveriesQueued.notify();
  return result;
}

/**
 * The transaction that paid a review invoice, as events show it (`data.transaction` of the owner's
 * accept decision); undefined when none is recorded. The invoices feature asks here rather than
 * reading chain_transfers, which the chain feature owns (docs/architecture.md, one owner per table).
 */
export async function reviewPaymentTransaction(db: Db | Trx, invoiceId: string): Promise<ReturnType<typeof toTransactionResponse> | undefined> {
  const transfer = await findReviewPayment(db, invoiceId);
  return transfer ? toTransactionResponse(transfer) : undefined;
}
