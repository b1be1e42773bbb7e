/** Ledger reads: one merchant's invoices page by page (keyset), so an export never holds them all. */
import type { Db } from '../db/database.js';
import { rowToInvoice, type Invoice } from '../invoices/invoice.model.js';

/** Creation times, ms: from `createdGte` included to `createdLt` excluded. */
export interface LedgerRange {
  createdGte?: number;
  createdLt?: number;
}

export interface LedgerCursor {
  createdAt: number;
  id: string;
}

/**
 * The next page after `after`, newest first, in the order of invoices_merchant_created_idx
 * (merchant_id, created_at DESC, id). Each page is a short query: the export never pins the
 * connection while a slow client reads.
 */
export async function ledgerPage(db: Db, merchantId: string, after: LedgerCursor | undefined, size: number, range: LedgerRange = {}): Promise<Invoice[]> {
  let q = db.selectFrom('invoices').selectAll().where('merchant_id', '=', merchantId);
  if (range.createdGte !== undefined) q = q.where('created_at', '>=', range.createdGte);
  if (range.createdLt !== undefined) q = q.where('created_at', '<', range.createdLt);
  if (after) {
    q = q
      .where('created_at', '<=', after.createdAt)
      .where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb('id', '>', after.id)]));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(size).execute();
  return rows.map(rowToInvoice);
}
