/**
 * The reference a payer's wallet puts in a payment to name the invoice option it pays, where the
 * family carries one: Solana Pay's `reference` key (a 32-byte key the wallet adds to the transfer
 * instruction) and a TON transfer's text comment. Derived from the invoice id and the option's
 * position (0 for the invoice's own network and token), so nothing needs to be stored and the
 * checkout's link and the watcher's matching agree. A reference only helps to name the invoice: the
 * amount must still match exactly, so a reference copied into another payment pays nothing. EVM and
 * TRON transfers carry none.
 */
import type { Network } from './networks.js';
import { solanaPayReference } from './solana/payment-link.js';

/** The reference of option `position` of invoice `invoiceId` on `network`, or undefined where the family has none. */
export function optionReference(network: Pick<Network, 'family'>, invoiceId: string, position: number): string | undefined {
  if (network.family === 'solana') return solanaPayReference(`${invoiceId}/${position}`);
  // A TON comment is what the payer sees in their wallet's history: the invoice id, and the option when not the first.
  if (network.family === 'ton') return position === 0 ? invoiceId : `${invoiceId}/${position}`;
  return undefined;
}
