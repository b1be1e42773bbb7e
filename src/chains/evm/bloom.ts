/**
 * The header's logsBloom (the Ethereum yellow paper's M3:2048): every log of a block sets, for its
 * address and for each of its topics, three bits chosen by keccak256 of that item. A bloom has no
 * false negatives: if one of a log's items is missing from the bloom of the block the log names,
 * that block holds no such log, whatever the provider says. (It has false positives, so it can never
 * prove that a log exists, or that one was left out.)
 */
import { keccak_256 } from '@noble/hashes/sha3';

const BLOOM = /^0x[0-9a-fA-F]{512}$/;

/** The bloom's bytes, or undefined when the header carries none (absent, malformed or all zeros). */
export function parseBloom(value: unknown): Uint8Array | undefined {
  if (typeof value !== 'string' || !BLOOM.test(value) || /^0x0+$/.test(value)) return undefined;
  return Buffer.from(value.slice(2), 'hex');
}

/** The three (byte, mask) places an item (an address or a topic, as 0x-hex bytes) sets in a bloom. */
function bloomBits(itemHex: string): Array<[byte: number, mask: number]> {
  const hash = keccak_256(Buffer.from(itemHex.slice(2), 'hex'));
  const out: Array<[number, number]> = [];
  for (let i = 0; i < 6; i += 2) {
    const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
    out.push([255 - (bit >> 3), 1 << (bit & 7)]);
  }
  return out;
}

/** True when the bloom has all three bits of an item (an address or a topic, as 0x-hex bytes). */
export function bloomHas(bloom: Uint8Array, itemHex: string): boolean {
  return bloomBits(itemHex).every(([byte, mask]) => (bloom[byte]! & mask) !== 0);
}

/** Sets an item's three bits in a bloom (256 bytes), as a node does for each log it seals. */
export function bloomAdd(bloom: Uint8Array, itemHex: string): void {
  for (const [byte, mask] of bloomBits(itemHex)) bloom[byte] = bloom[byte]! | mask;
}
