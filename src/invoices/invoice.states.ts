/**
 * The invoice state machine, declared once: the statuses and every move between them, each named
 * by the step that makes it. The guarded updates (invoice-payments.ts, invoices.repo.ts,
 * resolutions.repo.ts) take their `WHERE status IN (...)` and their new status from this table, so
 * a move that is not listed here cannot be written: the update matches no row and the caller sees
 * `false` (the invoice moved meanwhile, or the move is not allowed).
 *
 * In short: pending and review are open; confirmed is final; expired can still be paid (the
 * watcher confirms an unpaid expired invoice it sees paid, and a transfer can be applied to it).
 *
 * Payment guards (tx_hash IS NULL or IS NOT NULL) stay in the queries: they
 * are about the row's payment, not its status.
 */
import type { InvoiceStatus } from '../db/schema.js';

export const INVOICE_STATUSES = ['pending', 'review', 'confirmed', 'expired'] as const satisfies readonly InvoiceStatus[];

/** Invoices still waiting for a payment or a decision (the partial index invoices_open_idx). */
export const OPEN_STATUSES = ['pending', 'review'] as const satisfies readonly InvoiceStatus[];

interface Transition {
  readonly from: readonly InvoiceStatus[];
  readonly to: InvoiceStatus;
}

export const INVOICE_TRANSITIONS = {
  /** The watcher sees the exact amount in the window (or while watching an expired, unpaid invoice). */
  pay: { from: ['pending', 'expired'], to: 'confirmed' },
  /** A payment to an invoice whose amount was reused: recorded, the owner decides. */
  payInReview: { from: ['review', 'expired'], to: 'review' },
  /** Its whole window scanned without a payment. */
  expire: { from: OPEN_STATUSES, to: 'expired' },
  /** The merchant cancels an open invoice. */
  cancel: { from: OPEN_STATUSES, to: 'expired' },
  /** A transfer applied by hand, or a partial payment within the merchant's tolerance. */
  resolve: { from: ['pending', 'expired', 'review'], to: 'confirmed' },
  /** The owner accepts a paid review invoice. */
  accept: { from: ['review'], to: 'confirmed' },
  /** The owner rejects a paid review invoice. */
  reject: { from: ['review'], to: 'expired' },
} as const satisfies Record<string, Transition>;

export type InvoiceTransition = keyof typeof INVOICE_TRANSITIONS;

/** Whether the table allows an invoice in `from` to move to `to` by any step. */
export function isAllowedMove(from: InvoiceStatus, to: InvoiceStatus): boolean {
  return Object.values(INVOICE_TRANSITIONS).some((t: Transition) => t.to === to && t.from.includes(from));
}

/** Whether `step` may start from an invoice in `status` (a check before the guarded update, for a clear error). */
export function canStart(step: InvoiceTransition, status: InvoiceStatus): boolean {
  return (INVOICE_TRANSITIONS[step].from as readonly InvoiceStatus[]).includes(status);
}

/** The statuses a step may start from (the guard of its update) and the status it writes. */
export function transition<T extends InvoiceTransition>(name: T): (typeof INVOICE_TRANSITIONS)[T] {
  return INVOICE_TRANSITIONS[name];
}

/** The step that turns a review decision into its status move. */
export function reviewDecision(accept: boolean): 'accept' | 'reject' {
  return accept ? 'accept' : 'reject';
}
