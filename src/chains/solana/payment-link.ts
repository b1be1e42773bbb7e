/**
 * Solana Pay transfer requests: `solana:<owner>?amount=<tokens>&spl-token=<mint>&reference=<key>&label=…`.
 * The recipient is the owner's wallet address, never its token account: the wallet derives the
 * associated token account from the owner and the mint (and, in most wallets, creates it when it does
 * not exist yet), and makes a Token-program `transfer` or `transferChecked` its last instruction.
 * The amount is in tokens (12.345678), not raw units, never in exponent notation. A `reference` is
 * 32 bytes the wallet adds to the transfer instruction as a read-only, non-signer account, so the
 * transaction carries it on chain (the reader reports it as the transfer's `references`). Label
 * and message are percent-encoded (a space as %20).
 */
import { sha256 } from '@noble/hashes/sha256';
import { formatAmount, type Micros } from '../../lib/amounts.js';
import { encodeBase58 } from '../../lib/base58.js';
import type { PaymentLinkBuilder } from '../family.js';
import type { Network, Token } from '../networks.js';
import { parseSolanaOwner, solanaAddressBytes } from './address.js';

export interface SolanaPayOptions {
  /** A Solana Pay reference key (base58 of 32 bytes), e.g. from `solanaPayReference`. */
  reference?: string;
  /** Shown by the wallet as who asks for the payment (the shop's name). */
  label?: string;
  /** Shown by the wallet beside the request (what the payment is for). */
  message?: string;
}

/**
 * A reference key for one payable option: base58 of sha256("gatewayd solana-pay reference " + seed),
 * so the same option always gets the same key and nothing needs to be stored. The seed must be unique
 * per invoice option (its invoice id and position). A reference only names the invoice a transfer is
 * meant for; the amount must still match exactly, so a key copied into another transfer pays nothing.
 */
export function solanaPayReference(seed: string): string {
  return encodeBase58(sha256(new TextEncoder().encode(`gatewayd solana-pay reference ${seed}`)));
}

export function solanaPayLink(network: Network, token: Token, owner: string, amount: Micros, options: SolanaPayOptions = {}): string {
  if (network.family !== 'solana') throw new Error(`${network.id} is not a Solana network`);
  if (!network.tokens.includes(token)) throw new Error(`${token.symbol} ${token.contract} is not a token of ${network.id}`);
  if (token.decimals !== 6) throw new Error('a Solana Pay amount is printed with the 6 decimals of the pinned tokens');
  const recipient = parseSolanaOwner(owner);
  if (!recipient.ok) throw new Error(`payment link recipient ${owner}: ${recipient.error}`);
  if (amount < 0n) throw new Error('a token amount is never negative');
  const query = [`amount=${formatAmount(amount)}`, `spl-token=${token.contract}`];
  if (options.reference !== undefined) {
    if (!solanaAddressBytes(options.reference)) throw new Error('a Solana Pay reference is 32 bytes in base58');
    query.push(`reference=${options.reference}`);
  }
  if (options.label) query.push(`label=${encodeURIComponent(options.label)}`);
  if (options.message) query.push(`message=${encodeURIComponent(options.message)}`);
  return `solana:${recipient.address}?${query.join('&')}`;
}

export const solanaPaymentLinks: PaymentLinkBuilder = {
  paymentLink: (network, token, to, amount) => solanaPayLink(network, token, to, amount),
};
