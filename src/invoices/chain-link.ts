/**
 * PLACEHOLDERS until the chain feature is merged: the lead wires these to the chain developer's
 * transfers table. Until then they report "nothing recorded".
 */
import type { Db, Trx } from '../db/database.js';
import type { Invoice } from './invoice.model.js';

/** Ledger `late_payments`: hashes of transfers that paid this invoice's amount after its window, joined by `;`. */
export async function latePaymentHashes(db: Db, invoiceIds: readonly string[]): Promise<Map<string, string>> {
  void db;
  void invoiceIds;
  return new Map();
}

/** `data.transaction` of invoice.confirmed when an owner accepts a paid review invoice (decisions.md section 7). */
export async function matchedTransaction(trx: Trx, invoice: Invoice): Promise<Record<string, unknown> | undefined> {
  void trx;
  void invoice;
  return undefined;
}
