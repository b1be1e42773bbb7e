/**
 * Payments the owner applied by hand (POST /invoices/{id}/resolve): one row per resolved invoice,
 * the transfer UNIQUE, so a transfer pays at most one invoice.
 */
import type { Db, Trx } from '../db/database.js';
import type { InvoiceStatus, ResolutionKind } from '../db/schema.js';
import { toDbAmount, type Micros } from '../lib/amounts.js';
import { transition } from './invoice.states.js';
import type { InvoiceOption } from './invoice.model.js';
import { optionColumns } from './invoice-options.repo.js';

const resolve = transition('resolve');

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

/** Records that `merchantId` contests the transfer's application (once: a repeat changes nothing). */
export async function insertContest(db: Db | Trx, transferId: string, merchantId: string, now: number): Promise<void> {
  await db
    .insertInto('transfer_contests')
    .values({ transfer_id: transferId, merchant_id: merchantId, created_at: now })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function insertResolution(trx: Trx, r: InvoiceResolution): Promise<void> {
  await trx
    .insertInto('invoice_resolutions')
    .values({ invoice_id: r.invoiceId, transfer_id: r.transferId, merchant_id: r.merchantId, previous_status: r.previousStatus, resolved_at: r.resolvedAt })
    .execute();
}

/**
 * An unpaid invoice (pending, expired, or review without a payment) becomes confirmed with the
 * applied transfer (by hand, or a partial payment accepted within the merchant's tolerance), and
 * counts it as received unless it was already recorded against this invoice; guarded, so false
 * when it was paid or changed meanwhile. Paid `through` another of its options, the row takes that
 * option's network, token, wallet and amounts (the caller then settles the options).
 */
export async function confirmByResolution(
  trx: Trx,
  id: string,
  txHash: string,
  received: Micros,
  now: number,
  how: { resolution: ResolutionKind; addToReceived: boolean; through?: InvoiceOption },
): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set((eb) => ({
      ...(how.through !== undefined && how.through.position !== 0 ? optionColumns(how.through) : {}),
      status: resolve.to,
      tx_hash: txHash,
      confirmed_at: now,
      received_amount: toDbAmount(received),
      resolution: how.resolution,
      amount_received: how.addToReceived ? eb('amount_received', '+', toDbAmount(received)) : eb.ref('amount_received'),
    }))
    .where('id', '=', id)
    .where('status', 'in', [...resolve.from])
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}
