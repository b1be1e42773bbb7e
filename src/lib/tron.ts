/**
 * TRON constants and base58check addresses (the mainnet USDT contract; base58check over the 0x41-prefixed 20-byte address): a mainnet address
 * is base58(0x41 || 20-byte account id || first 4 bytes of SHA256(SHA256(payload))).
 */
import { createHash } from 'node:crypto';

export const NETWORK = 'tron-mainnet';
export const TOKEN = 'USDT';
/** USDT TRC20 on TRON mainnet, 6 decimals. */
export const USDT_CONTRACT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

export const TRON_ADDRESS_RE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Map([...ALPHABET].map((ch, i) => [ch, BigInt(i)]));

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

function decodeBase58(text: string): Buffer | undefined {
  let n = 0n;
  for (const ch of text) {
    const v = INDEX.get(ch);
    if (v === undefined) return undefined;
    n = n * 58n + v;
  }
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  if (zeros) bytes = Buffer.concat([Buffer.alloc(zeros), bytes]);
  return bytes;
}

function encodeBase58(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
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

/** `41` + 40 hex digits for a valid base58check mainnet address, else undefined. */
export function tronAddressToHex(address: string): string | undefined {
  if (!TRON_ADDRESS_RE.test(address)) return undefined;
  const bytes = decodeBase58(address);
  if (!bytes || bytes.length !== 25 || bytes[0] !== 0x41) return undefined;
  const payload = bytes.subarray(0, 21);
  const checksum = sha256(sha256(payload)).subarray(0, 4);
  if (!checksum.equals(bytes.subarray(21))) return undefined;
  return payload.toString('hex');
}

export function isValidTronAddress(address: string): boolean {
  return tronAddressToHex(address) !== undefined;
}

/** Base58check for `41` + 40 hex digits (case-insensitive), else undefined. */
export function hexToTronAddress(hex: string): string | undefined {
  if (!/^41[0-9a-fA-F]{40}$/.test(hex)) return undefined;
  const payload = Buffer.from(hex, 'hex');
  return encodeBase58(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
}
