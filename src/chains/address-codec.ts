/**
 * Receiving addresses by chain family: what a merchant types is parsed against the network it is
 * to receive on, and comes back in the family's canonical printed form (base58check on TRON,
 * EIP-55 on the EVM chains, the owner's base58 on Solana, raw `0:hex` in lower case on TON) or with
 * an error that says what is wrong. The family decides: a TRON address never receives on an EVM
 * network, nor an EVM address on TRON, nor either on Solana or TON, whatever its checksum.
 */
import { isValidTronAddress, TRON_ADDRESS_RE } from '../lib/tron.js';
import type { AddressCodec } from './family.js';
import { evmAddressCodec, type ParsedAddress } from './evm/address.js';
import { parseSolanaOwner, solanaAddressBytes } from './solana/address.js';
import { parseTonAddress, payerFacingAddress } from './ton/address.js';
import { findNetwork, type FamilyName, type Network } from './networks.js';

export type { ParsedAddress };

/**
 * The printed shapes, as JSON Schema patterns (the API's documents use them). Tried in this order:
 * a TRON address (T and 33 base58 characters) is also base58, but 34 characters starting with T
 * never decode to Solana's 32 bytes; Solana's base58 (at most 44 characters, no 0) overlaps neither
 * EVM hex nor TON's raw form or its 48-character friendly forms.
 */
export const ADDRESS_PATTERNS = {
  tron: TRON_ADDRESS_RE.source,
  evm: '^0x[0-9a-fA-F]{40}$',
  // Not TRON's shape, so that each address matches one family's pattern in the served document's rules.
  solana: '^(?!T[1-9A-HJ-NP-Za-km-z]{33}$)[1-9A-HJ-NP-Za-km-z]{32,44}$',
  ton: '^(?:(?:0|-1):[0-9a-fA-F]{64}|[A-Za-z0-9_+\\/\\-]{48})$',
} as const satisfies Record<FamilyName, string>;

export type AddressShape = keyof typeof ADDRESS_PATTERNS;

/** One pattern that matches the shapes of the given families (every family's by default). */
export function addressPatternOf(families: readonly AddressShape[] = Object.keys(ADDRESS_PATTERNS) as AddressShape[]): string {
  return `^(?:${families.map((f) => ADDRESS_PATTERNS[f].replace(/^\^|\$$/g, '')).join('|')})$`;
}

/** How an error names each family's addresses ("a TRON address cannot receive on bsc-mainnet"). */
export const ADDRESS_NAMES: Record<FamilyName, string> = {
  tron: 'a TRON address',
  evm: 'an EVM address',
  solana: 'a Solana address',
  ton: 'a TON address',
};

/** The family an address's shape belongs to (no checksum is checked), if any. */
export function addressFamily(text: string): FamilyName | undefined {
  const value = text.trim();
  for (const [family, pattern] of Object.entries(ADDRESS_PATTERNS)) {
    if (!new RegExp(pattern).test(value)) continue;
    // Base58 of another length than 32 bytes (a TRON address with a letter too many) is no one's.
    if (family === 'solana' && !solanaAddressBytes(value)) return undefined;
    return family as FamilyName;
  }
  return undefined;
}

/** A TRON address in base58check: T and 33 base58 characters whose checksum holds. */
export function parseTronAddress(text: string): ParsedAddress {
  const value = text.trim();
  if (!TRON_ADDRESS_RE.test(value)) return { ok: false, error: 'expected a TRON address: T followed by 33 base58 characters' };
  if (!isValidTronAddress(value)) return { ok: false, error: "the address's checksum (base58check) is not valid: it was probably mistyped" };
  return { ok: true, address: value };
}

export const tronAddressCodec: AddressCodec = {
  parse: parseTronAddress,
  isCanonical: (text) => isValidTronAddress(text),
};

/** A TON address on one network: any printed form; a testnet-flagged one only on a test network. */
function tonCodec(network: Pick<Network, 'test'>): AddressCodec {
  return {
    parse(text) {
      const parsed = parseTonAddress(text, { test: network.test });
      return parsed.ok ? { ok: true, address: parsed.address } : parsed;
    },
    isCanonical: (text) => /^(0|-1):[0-9a-f]{64}$/.test(text),
  };
}

function codecOf(network: Pick<Network, 'family' | 'test'>): AddressCodec {
  switch (network.family) {
    case 'tron':
      return tronAddressCodec;
    case 'evm':
      return evmAddressCodec;
    case 'solana':
      return { parse: parseSolanaOwner, isCanonical: (text) => parseSolanaOwner(text).ok };
    case 'ton':
      return tonCodec(network);
  }
}

/**
 * An address that is to receive on `network`: its canonical form, or why it cannot. All-lower-case
 * (and all-upper-case) EVM hex carries no checksum and is accepted, and comes back in EIP-55 form;
 * mixed case must be the EIP-55 checksum exactly. On Solana only a wallet (an owner on the ed25519
 * curve) is taken: a pinned mint, a program or an off-curve address (an ATA) is refused. On TON
 * every printed form is taken and stored raw; a testnet-flagged form only on a test network.
 */
export function parseAddress(network: Pick<Network, 'id' | 'family' | 'test'>, text: string): ParsedAddress {
  const shape = addressFamily(text);
  if (shape !== undefined && shape !== network.family) return { ok: false, error: `${ADDRESS_NAMES[shape]} cannot receive on ${network.id}` };
  return codecOf(network).parse(text);
}

/**
 * A stored receiving address as a payer's wallet takes it: as stored, but on TON the non-bounceable
 * `UQ…` form wallets expect for a wallet (the raw `0:…` form is what gatewayd stores and compares).
 */
export function payerAddress(networkId: string, address: string): string {
  return findNetwork(networkId)?.family === 'ton' ? payerFacingAddress(address) : address;
}
