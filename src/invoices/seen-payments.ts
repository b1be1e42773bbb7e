/**
 * Payments seen before they are final (docs/payments.md, "Seen, then final"), the invoices
 * feature's side: which open invoice a transfer in a block above its network's finality would pay,
 * and the events that tell the integrator: `invoice.payment_seen` (the invoice stays pending) and
 * `invoice.payment_dropped` (that block left the chain before it was final). Nothing here moves an
 * invoice: only a final transfer does (invoice-payments.ts).
 */
import type { Trx, Tx } from '../db/database.js';
import { insertEvent } from '../events/events.repo.js';
import type { Micros } from '../lib/amounts.js';
import type { Invoice } from './invoice.model.js';
import { withOptionsOne } from './invoice-options.repo.js';
import { openOfAmount } from './invoices.repo.js';
import { toInvoiceResponse } from './invoices.schemas.js';
import type { PaymentDeps } from './invoice-payments.js';

/**
 * The open invoice (pending or review, unpaid) of this network, token contract, address and exact
 * amount whose window holds the block time, newest first: the one the transfer will pay once final.
 */
export async function findSeenInvoice(
  trx: Trx,
  p: { network: string; tokenContract: string; to: string; amount: Micros; blockTimestamp: number },
): Promise<Invoice | undefined> {
  if (p.amount <= 0n) return undefined;
  const row = await openOfAmount(trx, p, p.to, p.amount)
    .where('created_at', '<=', p.blockTimestamp)
    .where('expires_at', '>=', p.blockTimestamp)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return withOptionsOne(trx, row);
}

/** The transfer as the two events show it. */
export interface SeenTransferData {
  network: string;
  token: string;
  tx_hash: string;
  log_index: number;
  block_number: number;
  amount: string;
  raw_amount: string;
}

/** Writes invoice.payment_seen (with final_in_seconds) or invoice.payment_dropped for one invoice, in the caller's transaction. */
export async function insertSeenEvent(
  deps: PaymentDeps,
  tx: Tx,
  type: 'invoice.payment_seen' | 'invoice.payment_dropped',
  invoice: Invoice,
  transfer: SeenTransferData,
  now: number,
  finalInSeconds?: number,
): Promise<void> {
  const data: Record<string, unknown> = { invoice: toInvoiceResponse(invoice, deps.config.server.public_url), transfer };
  if (finalInSeconds !== undefined) data.final_in_seconds = finalInSeconds;
  await insertEvent(tx, { merchantId: invoice.merchantId, type, invoiceId: invoice.id, data }, now);
}
