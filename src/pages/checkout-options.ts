/**
 * The checkout's network picker: which of an invoice's options the payer is shown, each with its
 * plain name ("USDT · BNB Smart Chain (BEP20)"), exact amount, address, QR code and wallet link.
 * Every offered option is rendered, the chosen one visible: without JavaScript the picker's links
 * (`?option=k`) choose on the server, with it checkout.js switches in place. On TON the address is
 * shown as wallets expect it (`UQ…`, non-bounceable) with the comment the link carries; on Solana
 * the owner address, to which the wallet sends through the token account it derives.
 */
import { findNetwork, type FamilyName, type Network } from '../chains/networks.js';
import { TOKEN_ACCOUNT_RENT_LAMPORTS } from '../chains/solana/address.js';
import { payerFacingAddress, toFriendlyAddress } from '../chains/ton/address.js';
import type { toCheckoutInvoiceResponse } from '../invoices/invoices.schemas.js';
import { formatAmount, micros, parseAmount } from '../lib/amounts.js';

type CheckoutOption = ReturnType<typeof toCheckoutInvoiceResponse>['options'][number];

export interface ShownOption {
  /** The option's index in the invoice's `options`, as `?option=` names it. */
  index: number;
  /** "USDT · BNB Smart Chain (BEP20)". */
  name: string;
  /** "BNB Smart Chain (BEP20)", "TRON (TRC20)". */
  networkName: string;
  /** The registry id ("tron-mainnet", "solana-mainnet"), which a claim names. */
  networkId: string;
  /** True where "I already paid" is offered: a TRON id or an EVM hash is looked up; Solana and TON payments are seen by their watchers alone. */
  claimable: boolean;
  token: string;
  tokenContract: string;
  /** The address as the payer copies it: the stored form, but on TON the `UQ…` form wallets expect. */
  address: string;
  /** The token contract as shown: on TON the master's bounceable `EQ…` form, elsewhere as stored. */
  contractShown: string;
  /** TON: the comment to add to the transfer (the link carries it). */
  comment: string | undefined;
  amount: string;
  /** What the option adds to the price to tell its payment apart. */
  adjustment: string;
  paymentUri: string;
  /** What the QR code holds: the payment link on EVM, Solana and TON; on TRON the merchant's choice (the address by default). */
  qrText: string;
  qrIsLink: boolean;
  /** True where the link names the token and network too (EVM, Solana, TON), so the page offers "Open in wallet". */
  evm: boolean;
  family: FamilyName;
}

/** The rent a payer pays once to create a missing token account, in SOL (0.00203928), printed from the lamports. */
export const SOLANA_RENT_SOL = `0.${TOKEN_ACCOUNT_RENT_LAMPORTS.toString().padStart(9, '0')}`.replace(/0+$/, '');

/** The name a payer knows a network by: TRON's token standard is not in its registry label. */
export function networkName(network: Network): string {
  return network.family === 'tron' ? `${network.label} (TRC20)` : network.label;
}

/**
 * The options a payer may use now: every open one while nothing was paid; once anything is
 * recorded against the invoice (paid, partly paid, in review), only the invoice's own network,
 * token and amount, which are then the paying option's.
 */
export function shownOptions(inv: ReturnType<typeof toCheckoutInvoiceResponse>, tronQr: 'address' | 'uri'): ShownOption[] {
  const open = inv.options.map((o, index) => ({ o, index })).filter(({ o }) => o.status === 'open');
  const settled = inv.tx_hash !== null || inv.amount_received !== '0.000000' || open.length === 0;
  const own: CheckoutOption =
    inv.options.find((o) => o.network === inv.network && o.token_contract === inv.token_contract && o.address === inv.wallet_address) ?? inv.options[0]!;
  const picked = settled ? [{ o: { ...own, payable_amount: inv.payable_amount }, index: inv.options.indexOf(own) }] : open;
  return picked.map(({ o, index }) => {
    const network = findNetwork(o.network)!;
    const family = network.family;
    const evm = family !== 'tron';
    const qrIsLink = evm || tronQr === 'uri';
    const ton = family === 'ton';
    return {
      index: Math.max(0, index),
      name: `${o.token} · ${networkName(network)}`,
      networkName: networkName(network),
      networkId: network.id,
      claimable: family === 'tron' || family === 'evm',
      token: o.token,
      tokenContract: o.token_contract,
      // The form the link names too (ton/payment-link.ts): non-bounceable, as wallets expect for a wallet.
      address: ton ? payerFacingAddress(o.address) : o.address,
      contractShown: ton ? toFriendlyAddress(o.token_contract, { bounceable: true }) : o.token_contract,
      comment: ton ? linkComment(o.payment_uri) : undefined,
      amount: o.payable_amount,
      adjustment: formatAmount(micros((parseAmount(o.payable_amount) ?? 0n) - (parseAmount(inv.base_amount) ?? 0n))),
      paymentUri: o.payment_uri,
      qrText: qrIsLink ? o.payment_uri : o.address,
      qrIsLink,
      evm,
      family,
    };
  });
}

/** The option `?option=` names when it is one of those shown, else the first shown. */
export function chosenOption(shown: ShownOption[], query: string | undefined): ShownOption {
  const asked = query !== undefined && /^[0-9]{1,2}$/.test(query) ? Number(query) : undefined;
  return shown.find((s) => s.index === asked) ?? shown[0]!;
}

/** The `text` comment of a TON transfer link (the option's reference, payment-reference.ts), as the link carries it. */
function linkComment(uri: string): string | undefined {
  const text = /[?&]text=([^&]*)/.exec(uri)?.[1];
  return text === undefined ? undefined : decodeURIComponent(text);
}
