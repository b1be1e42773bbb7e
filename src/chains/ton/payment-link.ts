/**
 * TON transfer links for a jetton: `ton://transfer/<owner>?jetton=<master>&amount=<raw>&text=<comment>`.
 * The wallet that opens one (Tonkeeper, Tonhub, MyTonWallet and others that read `ton://` links)
 * sends `amount` of the jetton whose master is `jetton` (the raw integer, in the jetton's smallest
 * unit, never a decimal) to the owner, which its own jetton wallet forwards to the owner's jetton
 * wallet; `text` becomes the transfer's comment (the forward payload), which gatewayd keeps as the
 * payment's reference. The owner is printed non-bounceable (`UQ…`), as wallets expect for a wallet,
 * the master bounceable (`EQ…`), both URL-safe. docs/payments.md ("TON") cites the format.
 */
import type { Micros } from '../../lib/amounts.js';
import type { PaymentLinkBuilder } from '../family.js';
import type { Network, Token } from '../networks.js';
import { toRaw } from '../scale.js';
import { parseTonAddress, toFriendlyAddress } from './address.js';

export function tonTransferLink(network: Network, token: Token, to: string, amount: Micros, text?: string): string {
  if (network.family !== 'ton') throw new Error(`${network.id} is not a TON network`);
  if (!network.tokens.includes(token)) throw new Error(`${token.symbol} ${token.contract} is not a token of ${network.id}`);
  const owner = parseTonAddress(to, { test: network.test });
  if (!owner.ok) throw new Error(`payment link recipient ${to}: ${owner.error}`);
  const query = [
    `jetton=${toFriendlyAddress(token.contract, { bounceable: true })}`,
    `amount=${toRaw(amount, token.decimals)}`,
    ...(text === undefined || text === '' ? [] : [`text=${encodeURIComponent(text)}`]),
  ];
  return `ton://transfer/${toFriendlyAddress(owner.address, { bounceable: false })}?${query.join('&')}`;
}

export const tonPaymentLinks: PaymentLinkBuilder = { paymentLink: (network, token, to, amount) => tonTransferLink(network, token, to, amount) };
