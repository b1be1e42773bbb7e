/**
 * What a verified transfer does to invoices (docs/payments.md, Invoice states), and safe expiry. Each call is
 * one short write transaction: the guarded invoice move, the recorded transfer and the event
 * commit together or not at all. No network here.
 */
import { queuePaymentNotices } from '../email/payment-notices.js';
import { writeTransaction } from '../db/database.js';
import type { ChainTransferKind } from '../db/schema.js';
import { insertEvent } from '../events/events.repo.js';
import type { AppDeps } from '../deps.js';
import { type Invoice } from '../invoices/invoice.model.js';
import { toInvoiceResponse } from '../invoices/invoices.schemas.js';
import {
  confirmInvoice,
  expireInvoice,
  findExpirable,
  findInvoiceById,
  findInvoicesByAmount,
  insertTransfer,
  isLogRecorded,
  markReviewPaid,
  saveCursor,
} from './chain.repo.js';
import { toTransactionResponse } from './chain.schemas.js';
import type { VerifiedTransfer } from './verifier.js';

export interface RecordedTransfer {
  transfer: VerifiedTransfer;
  kind: ChainTransferKind;
  invoiceId: string | null;
}

/** Largest amount SQLite stores exactly here; a bigger USDT transfer would exceed the token's supply. */
const MAX_STORABLE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Which invoice a transfer belongs to and how:
 * - an invoice of that amount whose window [created_at, expires_at] holds the block time pays it
 *   (pending -> confirmed; review -> review_paid) unless it already took a payment or was closed;
 * - otherwise the newest invoice of that amount created before the block: a late payment;
 * - otherwise (no invoice of that amount existed yet): unmatched.
 */
function classify(candidates: Invoice[], t: VerifiedTransfer): { kind: ChainTransferKind; invoice: Invoice | undefined } {
  const inWindow = candidates.find((inv) => inv.createdAt <= t.blockTimestamp && t.blockTimestamp <= inv.expiresAt);
  if (inWindow) {
    if (inWindow.status === 'pending') return { kind: 'confirmed', invoice: inWindow };
    if (inWindow.status === 'review' && inWindow.txHash === null) return { kind: 'review_paid', invoice: inWindow };
    return { kind: 'late', invoice: inWindow };
  }
  const before = candidates.find((inv) => inv.createdAt <= t.blockTimestamp);
  if (before) return { kind: 'late', invoice: before };
  return { kind: 'unmatched', invoice: undefined };
}

/** Records the verified Transfer logs of one receipt; returns those that were new. */
export async function recordTransfers(deps: AppDeps, transfers: VerifiedTransfer[]): Promise<RecordedTransfer[]> {
  const now = deps.clock.now();
  const publicUrl = deps.config.server.public_url;
  const result = await writeTransaction(deps.db, async (trx, tx) => {
    const recorded: RecordedTransfer[] = [];
    for (const t of transfers) {
      if (await isLogRecorded(trx, t.txHash, t.logIndex)) continue;
      if (t.amount > MAX_STORABLE) {
        deps.log.error({ tx_hash: t.txHash, log_index: t.logIndex, to: t.to }, 'chain: transfer amount too large to store; not recorded');
        continue;
      }
      const candidates = await findInvoicesByAmount(trx, t.to, t.amount);
      let { kind, invoice } = classify(candidates, t);
      // The moves are guarded; inside this immediate transaction they cannot lose a race, but if
      // one ever finds the invoice moved, the money is still recorded against it as late.
      if (invoice && kind === 'confirmed' && !(await confirmInvoice(trx, invoice.id, t.txHash, now))) kind = 'late';
      if (invoice && kind === 'review_paid' && !(await markReviewPaid(trx, invoice.id, t.txHash))) kind = 'late';
      await insertTransfer(trx, t, kind, invoice?.id ?? null, now);
      if (kind === 'late' || kind === 'unmatched') await queuePaymentNotices(deps.config, trx, t, now);
      if (invoice && (kind === 'confirmed' || kind === 'review_paid')) {
        const updated = (await findInvoiceById(trx, invoice.id))!;
        insertEvent(
          tx,
          {
            merchantId: updated.merchantId,
            type: kind === 'confirmed' ? 'invoice.confirmed' : 'invoice.review',
            invoiceId: updated.id,
            data: { invoice: toInvoiceResponse(updated, publicUrl), transaction: toTransactionResponse(t) },
          },
          now,
        );
      }
      recorded.push({ transfer: t, kind, invoiceId: invoice?.id ?? null });
    }
    return recorded;
  });
  // Events were committed with their deliveries: wake the delivery worker now, not at its next poll.
  if (result.some((r) => r.kind === 'confirmed' || r.kind === 'review_paid')) deps.deliveriesQueued.notify();
  return result;
}

export interface Coverage {
  address: string;
  coveredUntil: number;
}

/**
 * Moves the cursors (one transaction for a whole pass: one fsync, not one per address) and, in the
 * same transaction, expires the open, unpaid invoices whose window ended within the covered
 * history: every confirmed transfer up to their expires_at has been seen by then, so none of them
 * was a payment. Transfers are recorded before this runs, so a crash in between only repeats work.
 */
export async function advanceCoverage(deps: AppDeps, coverage: Coverage[]): Promise<Invoice[]> {
  if (coverage.length === 0) return [];
  const now = deps.clock.now();
  const publicUrl = deps.config.server.public_url;
  const result = await writeTransaction(deps.db, async (trx, tx) => {
    const expired: Invoice[] = [];
    for (const { address, coveredUntil } of coverage) {
      await saveCursor(trx, address, coveredUntil, now);
      for (const inv of await findExpirable(trx, address, coveredUntil, now)) {
        if (!(await expireInvoice(trx, inv.id))) continue;
        const updated = (await findInvoiceById(trx, inv.id))!;
        insertEvent(tx, { merchantId: updated.merchantId, type: 'invoice.expired', invoiceId: updated.id, data: { invoice: toInvoiceResponse(updated, publicUrl) } }, now);
        expired.push(updated);
      }
    }
    return expired;
  });
  if (result.length > 0) deps.deliveriesQueued.notify();
  return result;
}
