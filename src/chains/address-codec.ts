/**
 * Receiving addresses by chain family: what a merchant types is parsed against the network it is
 * to receive on, and comes back in the family's canonical printed form (base58check on TRON,
 * EIP-55 on the EVM chains) or with an error that says what is wrong. The family decides: a TRON
 * address never receives on an EVM network, nor an EVM address on TRON, whatever its checksum.
 */
import { isValidTronAddress, TRON_ADDRESS_RE } from '../lib/tron.js';
import type { AddressCodec } from './family.js';
import { evmAddressCodec, type ParsedAddress } from './evm/address.js';
import type { FamilyName, Network } from './networks.js';

export type { ParsedAddress };

/** The printed shapes, as JSON Schema patterns (the API's documents use them). */
export const ADDRESS_PATTERNS = {
  tron: TRON_ADDRESS_RE.source,
  evm: '^0x[0-9a-fA-F]{40}$',
} as const satisfies Partial<Record<FamilyName, string>>;

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
  for (const [family, pattern] of Object.entries(ADDRESS_PATTERNS)) if (new RegExp(pattern).test(value)) return family as FamilyName;
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

const CODECS: Partial<Record<FamilyName, AddressCodec>> = { tron: tronAddressCodec, evm: evmAddressCodec };

/**
 * An address that is to receive on `network`: its canonical form, or why it cannot. All-lower-case
 * (and all-upper-case) EVM hex carries no checksum and is accepted, and comes back in EIP-55 form;
 * mixed case must be the EIP-55 checksum exactly.
 */
export function parseAddress(network: Pick<Network, 'id' | 'family'>, text: string): ParsedAddress {
  const shape = addressFamily(text);
  if (shape !== undefined && shape !== network.family) return { ok: false, error: `${ADDRESS_NAMES[shape]} cannot receive on ${network.id}` };
  const codec = CODECS[network.family];
  if (!codec) return { ok: false, error: `${network.id} takes no addresses on this version` };
  return codec.parse(text);
}
