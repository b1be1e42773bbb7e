/**
 * The two shop protocols' signature: MD5 over the fields sorted by name, joined as `k=v&k=v`, with
 * the shared key appended (docs/shops.md, Signatures). The same rule signs what a shop sends and
 * what the gateway sends back; verification is constant-time.
 */
import { createHash } from 'node:crypto';
import { safeEqual } from '../lib/crypto.js';

/** Field values as both protocols carry them after decoding: text, or numbers in Epusdt's JSON. */
export type SignedValue = string | number | boolean | null | undefined | object;

/** Names that never take part in the signature: the signature itself (and Epay's `sign_type`). */
const UNSIGNED = new Set(['sign', 'sign_type', 'signature']);

/**
 * How a value is written into the signed string, or undefined when it is left out. Empty values
 * are left out (every driver does); numbers are written as PHP and Go print a decoded JSON number
 * (`10.0` and `10` both sign as "10"), booleans as the WooCommerce plugin writes them, nested values
 * as compact JSON.
 */
export function signedText(value: SignedValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return JSON.stringify(value);
}

/** The string that is hashed, before the key: every non-empty field but the signature, sorted by name. */
export function signingString(fields: Readonly<Record<string, SignedValue>>): string {
  const parts: string[] = [];
  for (const name of Object.keys(fields).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (UNSIGNED.has(name)) continue;
    const text = signedText(fields[name]);
    if (text !== undefined) parts.push(`${name}=${text}`);
  }
  return parts.join('&');
}

export function md5Hex(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/** The lower-case MD5 signature of these fields under this key. */
export function sign(fields: Readonly<Record<string, SignedValue>>, key: string): string {
  return md5Hex(signingString(fields) + key);
}

/** Whether `given` is the signature of the fields under the key; constant-time, any letter case. */
export function verify(fields: Readonly<Record<string, SignedValue>>, key: string, given: unknown): boolean {
  const expected = sign(fields, key);
  const text = typeof given === 'string' ? given.toLowerCase() : '';
  return safeEqual(text, expected);
}

/**
 * A decimal amount as the callback carries it in JSON: the shortest number text ("10.00" becomes
 * 10, "10.50" 10.5), which PHP's json_decode and echo, and Go's FormatFloat, print back the same
 * way. Beyond 14 significant digits PHP would round it when printing, so such an amount is sent as
 * a string (signed exactly as sent).
 */
export function callbackNumber(decimal: string): number | string {
  const trimmed = decimal.includes('.') ? decimal.replace(/0+$/, '').replace(/\.$/, '') : decimal;
  const digits = trimmed.replace('.', '').replace(/^0+/, '');
  if (digits.length > 14) return trimmed;
  const n = Number(trimmed);
  return String(n) === trimmed ? n : trimmed;
}
