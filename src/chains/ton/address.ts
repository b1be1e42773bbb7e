/**
 * TON addresses. An account is a workchain (0, the basechain; -1, the masterchain) and a 32-byte
 * hash, printed either raw (`0:` + 64 hex digits) or "user-friendly": 36 bytes (a tag byte, the
 * workchain as a signed byte, the hash, and a CRC16-XMODEM of those 34 bytes) in base64 or base64url,
 * 48 characters. The tag says bounceable (0x11, `EQ…`) or not (0x51, `UQ…`), plus 0x80 for an address
 * meant for the testnet (`kQ…`, `0Q…`). All forms of one account are the same account.
 *
 * gatewayd stores the raw form in lower case (`0:b113…`): one spelling per account, so two forms of
 * the same address never compare unequal (providers answer raw addresses in upper case, wallets
 * print friendly forms). Payers are shown the non-bounceable URL-safe form (`UQ…`), which wallets
 * expect for a wallet (an owner) address; contracts such as a jetton master print bounceable (`EQ…`).
 *
 * Written here (a CRC and base64) rather than with @ton/core so that parsing an address, which the
 * API does synchronously, costs no library load.
 */
const RAW = /^(0|-1):([0-9a-fA-F]{64})$/;
const CANONICAL = /^(0|-1):[0-9a-f]{64}$/;

/** True when `text` is already the stored (canonical raw, lower-case) form. */
export function isCanonicalTonAddress(text: string): boolean {
  return CANONICAL.test(text);
}
const FRIENDLY_B64 = /^[A-Za-z0-9+/]{48}$/;
const FRIENDLY_B64URL = /^[A-Za-z0-9_-]{48}$/;

const TAG_BOUNCEABLE = 0x11;
const TAG_NON_BOUNCEABLE = 0x51;
const TAG_TEST_ONLY = 0x80;

/** CRC16-XMODEM (polynomial 0x1021, initial value 0), as the friendly form uses. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

export interface ParsedTonAddress {
  /** The canonical raw form, `0:` or `-1:` and 64 lower-case hex digits. */
  address: string;
  /** The form it was given in. */
  form: 'raw' | 'bounceable' | 'non-bounceable';
  /** True when a friendly form carried the testnet flag. */
  testOnly: boolean;
}

export type TonParseResult = ({ ok: true } & ParsedTonAddress) | { ok: false; error: string };

export interface TonParseOptions {
  /** True on a test network (the devnet): testnet-flagged addresses are then accepted too. */
  test?: boolean;
}

function otherFamily(value: string): string | undefined {
  if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(value)) return 'this is a TRON address (T...), not a TON address';
  if (/^0x[0-9a-fA-F]{40}$/.test(value)) return 'this is an EVM address (0x...), not a TON address';
  return undefined;
}

/** The workchain and hash of a friendly form, or why it is not one. */
function decodeFriendly(value: string): { ok: true; tag: number; workchain: number; hash: Buffer } | { ok: false; error: string } {
  const plain = FRIENDLY_B64.test(value);
  const url = FRIENDLY_B64URL.test(value);
  if (!plain && !url) {
    return { ok: false, error: 'a TON address is 48 characters (EQ..., UQ...) or a raw 0:<64 hex digits>; this one mixes alphabets or has another length' };
  }
  const bytes = Buffer.from(value, url ? 'base64url' : 'base64');
  if (bytes.length !== 36) return { ok: false, error: 'a TON address decodes to 36 bytes' };
  const crc = crc16(bytes.subarray(0, 34));
  if (bytes.readUInt16BE(34) !== crc) {
    return { ok: false, error: "the address's checksum does not match: it was probably mistyped" };
  }
  const tag = bytes[0]!;
  if ((tag & ~TAG_TEST_ONLY) !== TAG_BOUNCEABLE && (tag & ~TAG_TEST_ONLY) !== TAG_NON_BOUNCEABLE) {
    return { ok: false, error: `unknown TON address tag 0x${tag.toString(16)}` };
  }
  const workchain = bytes.readInt8(1);
  if (workchain !== 0 && workchain !== -1) return { ok: false, error: `workchain ${workchain} is neither the basechain (0) nor the masterchain (-1)` };
  return { ok: true, tag, workchain, hash: bytes.subarray(2, 34) };
}

/**
 * Parses any printed form of a TON address into its canonical raw form. A testnet-flagged friendly
 * form is refused on a real network (a wallet in testnet mode made it: money sent there is lost).
 */
export function parseTonAddress(text: string, options: TonParseOptions = {}): TonParseResult {
  const value = text.trim();
  const foreign = otherFamily(value);
  if (foreign) return { ok: false, error: foreign };
  const raw = RAW.exec(value);
  if (raw) return { ok: true, address: `${raw[1]}:${raw[2]!.toLowerCase()}`, form: 'raw', testOnly: false };
  const decoded = decodeFriendly(value);
  if (!decoded.ok) return decoded;
  const testOnly = (decoded.tag & TAG_TEST_ONLY) !== 0;
  if (testOnly && !options.test) {
    return {
      ok: false,
      error: 'this address is flagged for the TON testnet (a wallet in testnet mode printed it); give the mainnet form of your wallet address',
    };
  }
  return {
    ok: true,
    address: `${decoded.workchain}:${decoded.hash.toString('hex')}`,
    form: (decoded.tag & ~TAG_TEST_ONLY) === TAG_BOUNCEABLE ? 'bounceable' : 'non-bounceable',
    testOnly,
  };
}

/** The canonical raw form of an address a provider answered (any form, any case), or undefined. */
export function canonicalTonAddress(text: string): string | undefined {
  const parsed = parseTonAddress(text, { test: true });
  return parsed.ok ? parsed.address : undefined;
}

export interface FriendlyOptions {
  bounceable: boolean;
  testOnly?: boolean;
  /** base64url (`-`, `_`), the form links and QR codes use; default true. */
  urlSafe?: boolean;
}

/** The friendly form of a canonical (or any) address; throws when it is not an address. */
export function toFriendlyAddress(address: string, options: FriendlyOptions): string {
  const canonical = canonicalTonAddress(address);
  if (!canonical) throw new Error(`not a TON address: ${address}`);
  const [workchain, hash] = canonical.split(':') as [string, string];
  const bytes = Buffer.alloc(36);
  bytes[0] = (options.bounceable ? TAG_BOUNCEABLE : TAG_NON_BOUNCEABLE) | (options.testOnly ? TAG_TEST_ONLY : 0);
  bytes.writeInt8(Number(workchain), 1);
  Buffer.from(hash, 'hex').copy(bytes, 2);
  bytes.writeUInt16BE(crc16(bytes.subarray(0, 34)), 34);
  return bytes.toString(options.urlSafe === false ? 'base64' : 'base64url');
}

/** The form a payer's wallet expects for an owner (wallet) address: non-bounceable, URL-safe (`UQ…`). */
export function payerFacingAddress(address: string, options: { test?: boolean } = {}): string {
  return toFriendlyAddress(address, { bounceable: false, testOnly: options.test === true });
}

/** True when two printed forms name the same account (never by letter case). */
export function sameTonAddress(a: string, b: string): boolean {
  const x = canonicalTonAddress(a);
  return x !== undefined && x === canonicalTonAddress(b);
}
