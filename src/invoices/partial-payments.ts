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
import { micros, parseAmount, toDbAmount, type Micros } from '../lib/amounts.js';
import type { AmountTarget } from './allocation.repo.js';
import { DIGITS_MODULUS } from './claims.js';
import { settleOptions, unpaidOptionsOnTarget, withOptions } from './invoice-options.repo.js';
import type { Invoice, InvoiceOption } from './invoice.model.js';
import { unpaidOnAddress } from './invoices.repo.js';
import { paymentEventData } from './invoices.schemas.js';
import { confirmByResolution } from './resolutions.repo.js';
import { allowedShortfall, findPaymentSettings, parseTolerance, type PaymentSettings, type Tolerance } from '../accounts/underpayment.js';

interface PartialPayment {
  to: string;
  amount: Micros;
  txHash: string;
  blockTimestamp: number;
  transaction: Record<string, unknown>;
}

/** An invoice and the option of it a transfer may pay (undefined: the invoice row, option 0). */
interface Candidate {
  invoice: Invoice;
  option: InvoiceOption | undefined;
}

const payableOf = (c: Candidate) => c.option?.payableAmount ?? c.invoice.payableAmount;

/**
 * Open invoices asking on the target above the amount with the same last six decimals, the block
 * time in their window: by their own amount, or by one of their other options.
 */
async function digitsCandidates(trx: Trx, target: AmountTarget, p: PartialPayment): Promise<Candidate[]> {
  const digits = p.amount % DIGITS_MODULUS;
  const rows = await unpaidOnAddress(trx, target)
    .where('payable_amount', '>', toDbAmount(p.amount))
    .where(sql<SqlBool>`payable_amount % ${Number(DIGITS_MODULUS)} = ${Number(digits)}`)
    .where('created_at', '<=', p.blockTimestamp)
    .where('expires_at', '>=', p.blockTimestamp)
    .execute();
  const own = (await withOptions(trx, rows)).map((invoice) => ({ invoice, option: undefined }));
  const options = await unpaidOptionsOnTarget(trx, target, { above: p.amount, digits: { modulus: DIGITS_MODULUS, value: digits }, at: p.blockTimestamp });
  return [...own, ...options];
}

function within(c: Candidate, amount: bigint, tolerance: Tolerance | undefined): boolean {
  const payable = payableOf(c);
  return tolerance !== undefined && payable - amount <= allowedShortfall(tolerance, payable);
}

/** The one open invoice (and option) the short transfer relates to, with its merchant's settings; undefined when none or ambiguous. */
export async function findPartialMatch(
  trx: Trx,
  target: AmountTarget,
  p: PartialPayment,
): Promise<{ invoice: Invoice; option: InvoiceOption | undefined; settings: PaymentSettings } | undefined> {
  if (p.amount <= 0n) return undefined;
  const candidates = await digitsCandidates(trx, target, p);
  if (candidates.length === 0) return undefined;
  const settings = new Map<string, PaymentSettings>();
  for (const c of candidates) if (!settings.has(c.invoice.merchantId)) settings.set(c.invoice.merchantId, await findPaymentSettings(trx, c.invoice.merchantId));
  const toleranceOf = (c: Candidate) => {
    const text = settings.get(c.invoice.merchantId)!.underpaymentTolerance;
    return text === null ? undefined : parseTolerance(text);
  };
  const matching = candidates.filter((c) => within(c, p.amount, toleranceOf(c)));
  if (matching.length !== 1) return undefined;
  const [match] = matching as [Candidate];
  const tolerance = toleranceOf(match);
  if (candidates.some((other) => other !== match && within(other, p.amount, tolerance))) return undefined;
  return { ...match, settings: settings.get(match.invoice.merchantId)! };
}

/**
 * Records the partial payment against its invoice (amount_received, invoice.partially_paid) and,
 * when the merchant accepts such payments automatically, confirms it (invoice.confirmed with
 * resolution "tolerance"; through another option, the invoice takes that option's network, token
 * and amounts, and its other options are released). Returns how the transfer is to be recorded.
 */
export async function applyPartialPayment(
  deps: { config: { server: { public_url: string }; invoices: { max_adjustment: string } } },
  trx: Trx,
  tx: Tx,
  p: PartialPayment,
  match: { invoice: Invoice; option: InvoiceOption | undefined; settings: PaymentSettings },
  now: number,
): Promise<{ kind: ChainTransferKind; invoiceId: string }> {
  const publicUrl = deps.config.server.public_url;
  const { invoice, option } = match;
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
      data: paymentEventData(partial, publicUrl, p.transaction, option),
    },
    now,
  );
  const acceptable = match.settings.underpaymentAutoAccept && (invoice.status === 'pending' || (invoice.status === 'expired' && !invoice.amountReuseReview));
  const how = { resolution: 'tolerance' as const, addToReceived: false, through: option };
  if (!acceptable || !(await confirmByResolution(trx, invoice.id, p.txHash, p.amount, now, how))) {
    return { kind: 'unmatched', invoiceId: invoice.id };
  }
  await settleOptions(trx, invoice, option, now, parseAmount(deps.config.invoices.max_adjustment)!);
  const confirmed = (await withOptions(trx, [await trx.selectFrom('invoices').selectAll().where('id', '=', invoice.id).executeTakeFirstOrThrow()]))[0]!;
  await insertEvent(
    tx,
    {
      merchantId: invoice.merchantId,
      type: 'invoice.confirmed',
      invoiceId: invoice.id,
      data: { ...paymentEventData(confirmed, publicUrl, p.transaction, option), resolution: 'tolerance' },
    },
    now,
  );
  return { kind: 'confirmed', invoiceId: invoice.id };
}
