/**
 * Payments the owner applied by hand (POST /invoices/{id}/resolve): one row per resolved invoice,
 * the transfer UNIQUE, so a transfer pays at most one invoice.
 */
import type { Db, Trx } from '../db/database.js';
import type { InvoiceStatus } from '../db/schema.js';
import { toDbAmount } from '../lib/amounts.js';

export interface InvoiceResolution {
  invoiceId: string;
  transferId: string;
  merchantId: string;
  previousStatus: InvoiceStatus;
  resolvedAt: number;
}

export async function findResolutionByTransfer(db: Db | Trx, transferId: string): Promise<InvoiceResolution | undefined> {
  const row = await db.selectFrom('invoice_resolutions').selectAll().where('transfer_id', '=', transferId).executeTakeFirst();
  return row
    ? { invoiceId: row.invoice_id, transferId: row.transfer_id, merchantId: row.merchant_id, previousStatus: row.previous_status, resolvedAt: row.resolved_at }
    : undefined;
}

/** transfer id -> invoice id, for the transfers of a page that were applied by hand. */
export async function resolvedTransfers(db: Db, transferIds: readonly string[]): Promise<Map<string, string>> {
  if (transferIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('invoice_resolutions')
    .select(['transfer_id', 'invoice_id'])
    .where('transfer_id', 'in', [...transferIds])
    .execute();
  return new Map(rows.map((r) => [r.transfer_id, r.invoice_id]));
}

export async function insertResolution(trx: Trx, r: InvoiceResolution): Promise<void> {
  await trx
    .insertInto('invoice_resolutions')
    .values({ invoice_id: r.invoiceId, transfer_id: r.transferId, merchant_id: r.merchantId, previous_status: r.previousStatus, resolved_at: r.resolvedAt })
    .execute();
}

/**
 * An unpaid invoice (pending, expired, or review without a payment) becomes confirmed with the
 * applied transfer; guarded, so false when it was paid or changed meanwhile.
 */
export async function confirmByResolution(trx: Trx, id: string, txHash: string, received: bigint, now: number): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set({ status: 'confirmed', tx_hash: txHash, confirmed_at: now, received_amount: toDbAmount(received) })
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'expired', 'review'])
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}
