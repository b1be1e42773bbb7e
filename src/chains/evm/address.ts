/**
 * EVM addresses (EIP-55): 20 bytes printed as 0x + 40 hex digits, where the case of each letter is
 * the checksum: a letter is upper case when the matching nibble of keccak256(lower-case hex) is 8 or
 * more. All-lower-case (and all-upper-case) input carries no checksum and is accepted; mixed case
 * must match it exactly, so a mistyped address is refused instead of receiving money nobody holds.
 */
import { keccak_256 } from '@noble/hashes/sha3';
import type { AddressCodec } from '../family.js';

const HEX40 = /^0x[0-9a-fA-F]{40}$/;

/** keccak256 of bytes or of a UTF-8 string, as lower-case hex without 0x. */
export function keccakHex(input: Uint8Array | string): string {
  return Buffer.from(keccak_256(input)).toString('hex');
}

/** The EIP-55 form of 40 hex digits (any case, without 0x). */
function checksum(hex40: string): string {
  const lower = hex40.toLowerCase();
  const hash = keccakHex(lower);
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lower[i]!;
    out += parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

export type ParsedAddress = { ok: true; address: string } | { ok: false; error: string };

/** Parses an EVM address: the EIP-55 form, or an error that says what is wrong. */
export function parseEvmAddress(text: string): ParsedAddress {
  const value = text.trim();
  if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(value)) {
    return { ok: false, error: 'this is a TRON address (T...), not an EVM address (0x followed by 40 hex digits)' };
  }
  if (!HEX40.test(value)) return { ok: false, error: 'an EVM address is 0x followed by 40 hex digits' };
  const digits = value.slice(2);
  const cased = checksum(digits);
  const uniform = digits === digits.toLowerCase() || digits === digits.toUpperCase();
  if (!uniform && cased !== value) {
    return { ok: false, error: `the address's checksum (EIP-55 letter case) is wrong: it was probably mistyped (expected ${cased} if the digits are right)` };
  }
  return { ok: true, address: cased };
}

/** The EIP-55 form of an address known to be 20 bytes of hex (a provider's answer); throws otherwise. */
export function toChecksumAddress(text: string): string {
  if (!HEX40.test(text)) throw new Error(`not an EVM address: ${text}`);
  return checksum(text.slice(2));
}

/** The 32-byte log topic that holds an address (12 zero bytes, then the address), lower case. */
export function addressTopic(address: string): string {
  return `0x${'0'.repeat(24)}${address.slice(2).toLowerCase()}`;
}

/** The address in a 32-byte topic, or undefined when its upper 12 bytes are not zero. */
export function topicAddress(topic: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{64}$/.test(topic) || !/^0{24}$/.test(topic.slice(2, 26))) return undefined;
  return checksum(topic.slice(26));
}

export const evmAddressCodec: AddressCodec = {
  parse: parseEvmAddress,
  isCanonical: (text) => HEX40.test(text) && checksum(text.slice(2)) === text,
};
