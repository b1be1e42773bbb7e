/**
 * Base58 (Bitcoin's alphabet: no 0, O, I or l), as TRON and Solana print addresses, keys and
 * signatures. Each leading zero byte is one leading '1'; the rest is the number in base 58. No
 * checksum here: TRON adds one (base58check, lib/tron.ts), Solana has none.
 */
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Map([...ALPHABET].map((ch, i) => [ch, BigInt(i)]));

/** The bytes a base58 string stands for, or undefined when it has a character outside the alphabet. */
export function decodeBase58(text: string): Uint8Array | undefined {
  let n = 0n;
  for (const ch of text) {
    const v = INDEX.get(ch);
    if (v === undefined) return undefined;
    n = n * 58n + v;
  }
  let hex = n === 0n ? '' : n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  const out = new Uint8Array(zeros + hex.length / 2);
  out.set(Buffer.from(hex, 'hex'), zeros);
  return out;
}

export function encodeBase58(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}
