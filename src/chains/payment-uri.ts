/**
 * The link (and QR code) a payer's wallet opens to pay one option of an invoice: the network's
 * token, the address and the exact amount. EVM: EIP-681 (evm/payment-link.ts), so the wallet calls
 * the token's transfer on that chain and cannot pick another network, token or amount. TRON has no
 * such standard: `tron:<address>?token=<contract>&amount=<amount>`, the six-decimal amount, which
 * the TRON wallets that read links understand (and the checkout offers as its `tron_uri` QR code).
 * Solana: a Solana Pay transfer request to the owner (the wallet derives the token account) with the
 * option's reference and the shop's name as its label (solana/payment-link.ts). TON: a `ton://transfer`
 * link of the jetton's raw amount to the owner's `UQ…` form with the option's reference as its text
 * comment (ton/payment-link.ts).
 */
import { formatAmount, type Micros } from '../lib/amounts.js';
import { eip681TransferLink } from './evm/payment-link.js';
import type { Network, Token } from './networks.js';
import { solanaPayLink } from './solana/payment-link.js';
import { tonTransferLink } from './ton/payment-link.js';

/** What a Solana or TON link carries besides the transfer: the option's reference (payment-reference.ts) and who asks. */
export interface LinkExtras {
  reference?: string;
  /** The shop's name, which a Solana wallet shows as who asks for the payment. */
  label?: string;
}

export function tronTransferLink(to: string, tokenContract: string, amount: Micros): string {
  return `tron:${to}?token=${tokenContract}&amount=${formatAmount(amount)}`;
}

/** The payment link of `amount` of `token` to `to` on `network`, in that network's family's form. */
export function paymentUri(network: Network, token: Token, to: string, amount: Micros, extras: LinkExtras = {}): string {
  switch (network.family) {
    case 'evm':
      return eip681TransferLink(network, token, to, amount);
    case 'tron':
      return tronTransferLink(to, token.contract, amount);
    case 'solana':
      return solanaPayLink(network, token, to, amount, { reference: extras.reference, label: extras.label });
    case 'ton':
      return tonTransferLink(network, token, to, amount, extras.reference);
  }
}
