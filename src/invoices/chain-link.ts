/**
 * What the invoices feature needs from the chain's recorded transfers: the ledger's late payments
 * and the transaction of a paid review invoice when its owner accepts it.
 */
import type { Db, Trx } from '../db/database.js';
import { findReviewPayment, latePaymentHashes as lateHashesByInvoice } from '../chain/chain.repo.js';
import { toTransactionResponse } from '../chain/chain.schemas.js';
import type { Invoice } from './invoice.model.js';

/** Ledger `late_payments`: hashes of transfers that paid this invoice's amount after its window, joined by `;`. */
export async function latePaymentHashes(db: Db, invoiceIds: readonly string[]): Promise<Map<string, string>> {
  const byInvoice = await lateHashesByInvoice(db, invoiceIds);
  return new Map([...byInvoice].map(([id, hashes]) => [id, hashes.join(';')]));
}

/** `data.transaction` of invoice.confirmed when an owner accepts a paid review invoice (decisions.md section 7). */
export async function matchedTransaction(trx: Trx, invoice: Invoice): Promise<Record<string, unknown> | undefined> {
  const transfer = await findReviewPayment(trx, invoice.id);
  return transfer ? toTransactionResponse(transfer) : undefined;
}
