/**
 * The link (and QR code) a payer's wallet opens to pay one option of an invoice: the network's
 * token, the address and the exact amount. EVM: EIP-681 (evm/payment-link.ts), so the wallet calls
 * the token's transfer on that chain and cannot pick another network, token or amount. TRON has no
 * such standard: `tron:<address>?token=<contract>&amount=<amount>`, the six-decimal amount, which
 * the TRON wallets that read links understand (and the checkout offers as its `tron_uri` QR code).
 */
import { formatAmount, type Micros } from '../lib/amounts.js';
import { eip681TransferLink } from './evm/payment-link.js';
import type { Network, Token } from './networks.js';
import { solanaPayLink } from './solana/payment-link.js';
import { tonTransferLink } from './ton/payment-link.js';

export function tronTransferLink(to: string, tokenContract: string, amount: Micros): string {
  return `tron:${to}?token=${tokenContract}&amount=${formatAmount(amount)}`;
}

/** The payment link of `amount` of `token` to `to` on `network`, in that network's family's form. */
export function paymentUri(network: Network, token: Token, to: string, amount: Micros): string {
  if (network.family === 'evm') return eip681TransferLink(network, token, to, amount);
  if (network.family === 'tron') return tronTransferLink(to, token.contract, amount);
  // Solana Pay and the TON transfer link, without the option's reference here (the checkout adds it).
  if (network.family === 'solana') return solanaPayLink(network, token, to, amount);
  if (network.family === 'ton') return tonTransferLink(network, token, to, amount);
  throw new Error(`no payment link for the ${network.family} family`);
}
