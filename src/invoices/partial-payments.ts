/**
 * Fee-deducted payments (docs/payments.md, "Partial payments"): a verified transfer below an open
 * invoice's payable amount relates to that invoice only when
 * - it is short by no more than the invoice's merchant's `underpayment_tolerance` (off by default),
 * - its last six decimals equal those of the invoice's payable amount (its unique adjustment), and
 * - exactly one open invoice on the address matches: no other open invoice whose payable amount has
 *   the same last six decimals lies above the transfer within that tolerance, or within its own
 *   merchant's tolerance.
 * "Open" means unpaid (pending, review, or expired by the watcher) with the block time inside its
 * window, as for an exact payment. Anything ambiguous stays unmatched. Such a transfer is recorded
 * against the invoice (kind unmatched, its invoice_id) with `invoice.partially_paid`; it confirms the
 * invoice by itself (`resolution: "tolerance"`) only when the merchant turned on
 * `underpayment_auto_accept` and the invoice is not one the owner reviews.
 */
import { sql, type SqlBool } from 'kysely';
import type { Trx, Tx } from '../db/database.js';
import type { ChainTransferKind } from '../db/schema.js';
import { insertEvent } from '../events/events.repo.js';
import { micros, toDbAmount, type Micros } from '../lib/amounts.js';
import { DIGITS_MODULUS } from './claims.js';
import { rowToInvoice, type Invoice } from './invoice.model.js';
import { unpaidOnAddress } from './invoices.repo.js';
import { toInvoiceResponse } from './invoices.schemas.js';
import { confirmByResolution } from './resolutions.repo.js';
import { allowedShortfall, findPaymentSettings, parseTolerance, type PaymentSettings, type Tolerance } from './underpayment.js';

interface PartialPayment {
  to: string;
  amount: Micros;
  txHash: string;
  blockTimestamp: number;
  transaction: Record<string, unknown>;
}

/** Open invoices on the address above the amount with the same last six decimals, the block time in their window. */
async function digitsCandidates(trx: Trx, network: { id: string; usdtContract: string }, p: PartialPayment): Promise<Invoice[]> {
  const rows = await unpaidOnAddress(trx, network, p.to)
    .where('payable_amount', '>', toDbAmount(p.amount))
    .where(sql<SqlBool>`payable_amount % ${Number(DIGITS_MODULUS)} = ${Number(p.amount % DIGITS_MODULUS)}`)
    .where('created_at', '<=', p.blockTimestamp)
    .where('expires_at', '>=', p.blockTimestamp)
    .execute();
  return rows.map(rowToInvoice);
}

function within(inv: Invoice, amount: bigint, tolerance: Tolerance | undefined): boolean {
  return tolerance !== undefined && inv.payableAmount - amount <= allowedShortfall(tolerance, inv.payableAmount);
}

/** The one open invoice the short transfer relates to, with its merchant's settings; undefined when none or ambiguous. */
export async function findPartialMatch(
  trx: Trx,
  network: { id: string; usdtContract: string },
  p: PartialPayment,
): Promise<{ invoice: Invoice; settings: PaymentSettings } | undefined> {
  if (p.amount <= 0n) return undefined;
  const candidates = await digitsCandidates(trx, network, p);
  if (candidates.length === 0) return undefined;
  const settings = new Map<string, PaymentSettings>();
  for (const inv of candidates) if (!settings.has(inv.merchantId)) settings.set(inv.merchantId, await findPaymentSettings(trx, inv.merchantId));
  const toleranceOf = (inv: Invoice) => {
    const text = settings.get(inv.merchantId)!.underpaymentTolerance;
    return text === null ? undefined : parseTolerance(text);
  };
  const matching = candidates.filter((inv) => within(inv, p.amount, toleranceOf(inv)));
  if (matching.length !== 1) return undefined;
  const [invoice] = matching as [Invoice];
  const tolerance = toleranceOf(invoice);
  if (candidates.some((other) => other.id !== invoice.id && within(other, p.amount, tolerance))) return undefined;
  return { invoice, settings: settings.get(invoice.merchantId)! };
}

/**
 * Records the partial payment against its invoice (amount_received, invoice.partially_paid) and,
 * when the merchant accepts such payments automatically, confirms it (invoice.confirmed with
 * resolution "tolerance"). Returns how the transfer is to be recorded.
 */
export async function applyPartialPayment(
  publicUrl: string,
  trx: Trx,
  tx: Tx,
  p: PartialPayment,
  match: { invoice: Invoice; settings: PaymentSettings },
  now: number,
): Promise<{ kind: ChainTransferKind; invoiceId: string }> {
  const { invoice } = match;
  await trx
    .updateTable('invoices')
    .set((eb) => ({ amount_received: eb('amount_received', '+', toDbAmount(p.amount)) }))
    .where('id', '=', invoice.id)
    .execute();
  const partial: Invoice = { ...invoice, amountReceived: micros(invoice.amountReceived + p.amount) };
  await insertEvent(
    tx,
    {
      merchantId: invoice.merchantId,
      type: 'invoice.partially_paid',
      invoiceId: invoice.id,
      data: { invoice: toInvoiceResponse(partial, publicUrl), transaction: p.transaction },
    },
    now,
  );
  const acceptable = match.settings.underpaymentAutoAccept && (invoice.status === 'pending' || (invoice.status === 'expired' && !invoice.amountReuseReview));
  if (!acceptable || !(await confirmByResolution(trx, invoice.id, p.txHash, p.amount, now, { resolution: 'tolerance', addToReceived: false }))) {
    return { kind: 'unmatched', invoiceId: invoice.id };
  }
  const confirmed: Invoice = { ...partial, status: 'confirmed', txHash: p.txHash, confirmedAt: now, receivedAmount: p.amount, resolution: 'tolerance' };
  await insertEvent(
    tx,
    {
      merchantId: invoice.merchantId,
      type: 'invoice.confirmed',
      invoiceId: invoice.id,
      data: { invoice: toInvoiceResponse(confirmed, publicUrl), transaction: p.transaction, resolution: 'tolerance' },
    },
    now,
  );
  return { kind: 'confirmed', invoiceId: invoice.id };
}
