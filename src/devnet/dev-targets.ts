/**
 * What a `/_dev/pay` or `/_dev/transfer` names, resolved and checked before anything lands on a
 * chain: the simulated network (tron-devnet, an EVM devnet, solana-devnet or ton-devnet the instance
 * enables), the token on it, addresses in that network's own form (TRON base58check; EVM EIP-55,
 * lower case accepted and answered in checksum form, a wrong mixed-case checksum refused; Solana
 * base58 of 32 bytes; TON raw or user-friendly, answered raw), and an amount in the token's own
 * decimals (6 on TRON; up to 18 on an 18-decimal token, so a value below the micro-unit can be sent).
 * Each refusal is a validation_error naming the field, in the API's envelope.
 */
import { parseEvmAddress, toChecksumAddress } from '../chains/evm/address.js';
import { parseSolanaAddress } from '../chains/solana/address.js';
import { canonicalTonAddress } from '../chains/ton/address.js';
import { findNetwork, findToken, tokenByContract, type Network, type Token } from '../chains/networks.js';
import { toRaw } from '../chains/scale.js';
import type { Config } from '../config.js';
import type { InvoiceOption } from '../invoices/invoice.model.js';
import { formatAmount, micros, type Micros } from '../lib/amounts.js';
import { AppError } from '../lib/errors.js';
import { isValidTronAddress } from '../lib/tron.js';

export function refuse(path: string, message: string): never {
  throw new AppError('validation_error', 'The request is not valid', [{ path, message }]);
}

/**
 * The network a request names (default: the instance's TRON network), if this dev instance
 * simulates it and enables it; `simulated` says which networks it simulates.
 */
export function simulatedNetwork(config: Config, simulated: (id: string) => boolean, id: string | undefined): Readonly<Network> {
  const wanted = id ?? config.network.id;
  const enabled = config.networks.filter((n) => simulated(n.id));
  const network = enabled.find((n) => n.id === wanted);
  if (network) return network;
  const known = findNetwork(wanted) ? `${wanted} is not simulated by this dev instance` : `unknown network ${JSON.stringify(wanted)}`;
  return refuse('network', `${known}; it simulates ${enabled.map((n) => n.id).join(', ')}`);
}

/** The token a request names on a network (default: USDT, or the network's only token). */
export function tokenOn(network: Readonly<Network>, symbol: string | undefined): Readonly<Token> {
  const token = symbol === undefined ? (findToken(network, 'USDT') ?? network.tokens[0]) : findToken(network, symbol);
  if (!token) return refuse('token', `${network.id} has no ${symbol}; its tokens: ${network.tokens.map((t) => t.symbol).join(', ')}`);
  return token;
}

/** An address in the network's own form, or a refusal naming the field. */
export function addressOn(network: Readonly<Network>, field: string, text: string): string {
  if (network.family === 'solana') {
    const parsed = parseSolanaAddress(text);
    if (!parsed.ok) return refuse(field, `expected a Solana address on ${network.id}: ${parsed.error}`);
    return parsed.address;
  }
  if (network.family === 'ton') {
    const raw = canonicalTonAddress(text);
    if (!raw) return refuse(field, `expected a TON address on ${network.id} (raw 0:… or user-friendly)`);
    return raw;
  }
  if (network.family === 'tron') {
    if (!isValidTronAddress(text)) refuse(field, 'expected a TRON address (T..., valid checksum)');
    return text;
  }
  const parsed = parseEvmAddress(text);
  if (!parsed.ok) return refuse(field, `expected an EVM address on ${network.id}: ${parsed.error}`);
  return parsed.address;
}

/** A decimal string of the token as its raw on-chain integer, with at most `decimals` fractional digits. */
export function rawAmount(token: Readonly<Token>, text: string): bigint {
  const [whole, frac = ''] = text.split('.');
  if (frac.length > token.decimals) {
    refuse(
      'amount',
      `expected a decimal string with at most ${token.decimals} fractional digits, e.g. "12.5" (${token.symbol} has ${token.decimals} decimals)`,
    );
  }
  return BigInt(whole!) * 10n ** BigInt(token.decimals) + BigInt(frac.padEnd(token.decimals, '0') || '0');
}

/** A raw value as a decimal string of the token: six decimals when it is a whole number of micro-units, else every digit. */
export function formatRaw(token: Readonly<Token>, raw: bigint): string {
  const scale = 10n ** BigInt(token.decimals - 6);
  if (raw % scale === 0n) return formatAmount(micros(raw / scale));
  const unit = 10n ** BigInt(token.decimals);
  return `${raw / unit}.${(raw % unit).toString().padStart(token.decimals, '0')}`;
}

/** One way an invoice can be paid: its network, token, address and exact amount. */
export interface PayTarget {
  network: Readonly<Network>;
  token: Readonly<Token>;
  address: string;
  payable: Micros;
  /** The option's position (0: the invoice's own), which names its Solana Pay reference or TON comment. */
  position: number;
}

/** The raw value that pays a target exactly: payable × 10^(decimals − 6). */
export function exactRaw(target: PayTarget): bigint {
  return toRaw(target.payable, target.token.decimals);
}

/** What a way to pay is made of: one of the invoice's options as stored (invoiceOptions). */
export type PayOption = Pick<InvoiceOption, 'network' | 'token' | 'tokenContract' | 'walletAddress' | 'payableAmount'> & { position?: number };

/**
 * The ways an invoice can be paid, by position as the API's `options` lists them (its stored
 * options, option 0 first: what the invoice asked before another option paid it, when one did), so
 * `option: N` names what `options[N]` says. Each keeps its own network, token, address and amount.
 */
export function payTargets(options: readonly PayOption[]): PayTarget[] {
  return options.flatMap((o) => {
    const network = findNetwork(o.network);
    const token = network && (tokenByContract(network, o.tokenContract) ?? findToken(network, o.token));
    return network && token ? [{ network, token, address: o.walletAddress, payable: o.payableAmount, position: o.position ?? 0 }] : [];
  });
}

/**
 * The target a pay request picks: by position, else by network (and token), else `fallback` (the
 * position of the invoice's own: the option that paid it, else option 0).
 */
export function pickTarget(targets: readonly PayTarget[], pick: { option?: number; network?: string; token?: string }, fallback = 0): PayTarget {
  if (targets.length === 0) return refuse('invoice_id', 'this invoice is on no network or token gatewayd dev can pay');
  const offered = () => targets.map((t, i) => `${i}: ${t.network.id} ${t.token.symbol}`).join(', ');
  if (pick.option !== undefined) {
    const t = targets[pick.option];
    if (!t) return refuse('option', `this invoice offers ${offered()}`);
    return t;
  }
  if (pick.network === undefined && pick.token === undefined) return targets[fallback] ?? targets[0]!;
  const found = targets.find(
    (t) => (pick.network === undefined || t.network.id === pick.network) && (pick.token === undefined || t.token.symbol === pick.token),
  );
  if (!found) return refuse(pick.network === undefined ? 'token' : 'network', `this invoice offers ${offered()}`);
  return found;
}

/** An EVM address as an answer shows it (EIP-55). */
export function shownAddress(network: Readonly<Network>, address: string): string {
  return network.family === 'evm' ? toChecksumAddress(address) : address;
}
