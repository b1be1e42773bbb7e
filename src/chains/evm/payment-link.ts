/**
 * EIP-681 links for a token transfer: `ethereum:<token>@<chainId>/transfer?address=<to>&uint256=<raw>`.
 * The wallet that opens one calls the token's `transfer(to, raw)` on that chain, so the payer cannot
 * pick another network, token or amount by mistake. The amount is the raw integer (never a
 * decimal or an exponent), the addresses are EIP-55.
 */
import type { Micros } from '../../lib/amounts.js';
import type { PaymentLinkBuilder } from '../family.js';
import type { Network, Token } from '../networks.js';
import { toRaw } from '../scale.js';
import { parseEvmAddress } from './address.js';

export function eip681TransferLink(network: Network, token: Token, to: string, amount: Micros): string {
  if (network.family !== 'evm' || network.chainId === undefined) throw new Error(`${network.id} has no EVM chain id`);
  if (!network.tokens.includes(token)) throw new Error(`${token.symbol} ${token.contract} is not a token of ${network.id}`);
  const recipient = parseEvmAddress(to);
  if (!recipient.ok) throw new Error(`payment link recipient ${to}: ${recipient.error}`);
  return `ethereum:${token.contract}@${network.chainId}/transfer?address=${recipient.address}&uint256=${toRaw(amount, token.decimals)}`;
}

export const evmPaymentLinks: PaymentLinkBuilder = { paymentLink: eip681TransferLink };
