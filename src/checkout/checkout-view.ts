/**
 * What the payer's page and the checkout API say beyond the invoice's own fields: whether a
 * transfer that pays no invoice arrived at its address while it was open (so a payer whose wallet or
 * exchange sent a wrong amount is told not to pay again), and what became of a transaction a payer
 * named ("I already paid"). Nothing here names another payer's amount, invoice or address.
 */
import type { Db } from '../db/database.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { toCheckoutInvoiceResponse } from '../invoices/invoices.schemas.js';
import { formatAmount, micros, parseAmount } from '../lib/amounts.js';
import { hasDroppedSeen } from '../payments/seen.repo.js';
import { withPaymentSeen } from '../payments/seen.js';
import { toPaymentSeenResponse } from '../invoices/invoices.schemas.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config'>;

/**
 * True when an unmatched transfer of at least `dustThreshold` (smaller ones are mostly address
 * poisoning) reached the invoice's address inside its window and was not applied to any invoice
 * since. Through chain_transfers_to_idx (network, token, address, block time).
 */
export async function unmatchedPaymentSeen(db: Db, inv: Invoice, dustThreshold: bigint): Promise<boolean> {
  if (inv.txHash !== null || inv.amountReceived > 0n) return false;
  const row = await db
    .selectFrom('chain_transfers')
    .select('chain_transfers.id')
    .where('chain_transfers.network', '=', inv.network)
    .where('chain_transfers.token_contract', '=', inv.tokenContract)
    .where('chain_transfers.to_address', '=', inv.walletAddress)
    .where('chain_transfers.block_timestamp', '>=', inv.createdAt)
    .where('chain_transfers.block_timestamp', '<=', inv.expiresAt)
    .where('chain_transfers.kind', '=', 'unmatched')
    .where('chain_transfers.invoice_id', 'is', null)
    .where('chain_transfers.amount', '>=', Number(dustThreshold))
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('invoice_resolutions').select('transfer_id').whereRef('invoice_resolutions.transfer_id', '=', 'chain_transfers.id'))),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export function dustOf(threshold: string): bigint {
  return parseAmount(threshold) ?? 0n;
}

/**
 * The CheckoutInvoice resource with `unmatched_payment_seen`, `payment_seen` (a transfer that will
 * pay it, seen before its block is final) and `payment_dropped`: a transfer seen for it left the
 * chain before it was final and none waits now, on an invoice still unpaid (the page tells the
 * payer to check their wallet).
 */
export async function checkoutView(deps: Pick<Deps, 'db' | 'config'>, inv: Invoice, merchantName: string, dustThreshold: bigint) {
  const [shown] = await withPaymentSeen(deps, [inv]);
  const seen = shown!.paymentSeen ?? null;
  const open = inv.status === 'pending' && inv.txHash === null;
  return {
    ...toCheckoutInvoiceResponse(inv, merchantName),
    unmatched_payment_seen: await unmatchedPaymentSeen(deps.db, inv, dustThreshold),
    payment_seen: open && seen ? toPaymentSeenResponse(seen) : null,
    payment_dropped: open && !seen ? await hasDroppedSeen(deps.db, inv.id) : false,
  };
}

export type PaidTo = 'this_invoice' | 'another_invoice' | 'no_invoice';

/**
 * Where the USDT a recorded transaction sent to the invoice's address went: to this invoice (matched,
 * a partial payment, or applied by hand), to another invoice, or to none (a wrong amount), with the
 * amount it sent there. Null when nothing of it is recorded.
 */
export async function paidTo(db: Db, inv: Invoice, txHash: string): Promise<{ paid_to: PaidTo; amount: string } | null> {
  const rows = await db
    .selectFrom('chain_transfers')
    .leftJoin('invoice_resolutions', 'invoice_resolutions.transfer_id', 'chain_transfers.id')
    .select(['chain_transfers.amount', 'chain_transfers.invoice_id', 'invoice_resolutions.invoice_id as resolved_invoice_id'])
    .where('chain_transfers.tx_hash', '=', txHash)
    .where('chain_transfers.to_address', '=', inv.walletAddress)
    .where('chain_transfers.token_contract', '=', inv.tokenContract)
    .execute();
  if (rows.length === 0) return null;
  const amount = formatAmount(micros(rows.reduce((sum, r) => sum + BigInt(r.amount), 0n)));
  const owners = rows.map((r) => r.resolved_invoice_id ?? r.invoice_id);
  if (owners.includes(inv.id)) return { paid_to: 'this_invoice', amount };
  if (owners.some((o) => o !== null)) return { paid_to: 'another_invoice', amount };
  return { paid_to: 'no_invoice', amount };
}
