/**
 * Solana addresses: 32 bytes printed in base58 (no checksum, so a mistyped address is caught only
 * by its length or, for a wallet, by the curve). A wallet (the owner a merchant gives) is an ed25519
 * public key, on the curve; a program derived address (PDA) is off the curve by construction, and
 * every associated token account (ATA) is one. A token payment goes to the ATA derived from the
 * owner and the mint, never to the owner's address itself: `associatedTokenAddress`.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { sha256 } from '@noble/hashes/sha256';
import { decodeBase58, encodeBase58 } from '../../lib/base58.js';
import type { AddressCodec } from '../family.js';
import { NETWORKS, SOLANA_NETWORK_IDS } from '../networks.js';

/** The SPL Token program, which owns the USDT and USDC mints. */
export const TOKEN_PROGRAM_ID = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
/** Token-2022 (Token Extensions): a separate program; no pinned mint is one of its mints. */
export const TOKEN_2022_PROGRAM_ID = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ASSOCIATED_TOKEN_PROGRAM_ID = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';

/**
 * The lamports a token account must hold to be rent-exempt: (165 bytes of data + 128 of account
 * overhead) x 3 480 lamports a byte-year x 2 years = 2 039 280 lamports, 0.00203928 SOL. A payer whose
 * transfer creates the receiver's ATA pays this once, besides the fee.
 */
export const TOKEN_ACCOUNT_RENT_LAMPORTS = 2_039_280n;

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const PDA_MARKER = new TextEncoder().encode('ProgramDerivedAddress');

/** The 32 bytes of a Solana address, or undefined when it is not base58 of exactly 32 bytes in canonical form. */
export function solanaAddressBytes(text: string): Uint8Array | undefined {
  if (!BASE58.test(text)) return undefined;
  const bytes = decodeBase58(text);
  // Base58 without a checksum has one form per byte string; a longer spelling of the same bytes
  // (extra leading '1's) decodes to more than 32 bytes and is refused here.
  if (!bytes || bytes.length !== 32) return undefined;
  return bytes;
}

/** True when 32 bytes are the compressed form of a point on ed25519 (as the runtime decides it for PDAs). */
export function isOnCurve(bytes: Uint8Array): boolean {
  try {
    // ZIP-215 rules, like curve25519-dalek's decompression that the runtime uses: a y coordinate
    // up to 2^255 - 1 is reduced, and x = 0 with the sign bit set is accepted.
    (ed25519.ExtendedPoint.fromHex as (hex: Uint8Array, zip215: boolean) => unknown)(bytes, true);
    return true;
  } catch {
    return false;
  }
}

function bytesOf(address: string): Uint8Array {
  const bytes = solanaAddressBytes(address);
  if (!bytes) throw new Error(`not a Solana address: ${address}`);
  return bytes;
}

/**
 * find_program_address: the first bump from 255 down for which sha256(seeds || bump || program id ||
 * "ProgramDerivedAddress") is off the curve (so no private key can sign for it).
 */
export function findProgramAddress(seeds: readonly Uint8Array[], programId: string): { address: string; bump: number } {
  const program = bytesOf(programId);
  for (let bump = 255; bump >= 0; bump--) {
    const hash = sha256.create();
    for (const seed of seeds) hash.update(seed);
    const hashed = hash.update(Uint8Array.of(bump)).update(program).update(PDA_MARKER).digest();
    if (!isOnCurve(hashed)) return { address: encodeBase58(hashed), bump };
  }
  throw new Error('no program address for these seeds');
}

/** Derivations already made: each takes about a millisecond (point decompressions), and a reader derives every watched owner's accounts on each poll. */
const ATA_CACHE = new Map<string, string>();
const ATA_CACHE_SIZE = 20_000;

/** The associated token account of an owner for a mint: seeds [owner, token program, mint], the ATA program. */
export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string = TOKEN_PROGRAM_ID): string {
  const key = `${owner} ${mint} ${tokenProgram}`;
  const known = ATA_CACHE.get(key);
  if (known) return known;
  const ata = findProgramAddress([bytesOf(owner), bytesOf(tokenProgram), bytesOf(mint)], ASSOCIATED_TOKEN_PROGRAM_ID).address;
  // Oldest first out when full: the watched owners are what stays in use.
  if (ATA_CACHE.size >= ATA_CACHE_SIZE) ATA_CACHE.delete(ATA_CACHE.keys().next().value!);
  ATA_CACHE.set(key, ata);
  return ata;
}

/** Any 32-byte address (a provider's answer: a token account, a mint, a signature's signer). */
export function parseSolanaAddress(text: string): { ok: true; address: string } | { ok: false; error: string } {
  return solanaAddressBytes(text) ? { ok: true, address: text } : { ok: false, error: 'a Solana address is 32 bytes in base58 (32 to 44 characters)' };
}

/** What a known address that is not a wallet is: a pinned mint of a Solana network, or a program. */
function knownNonWallet(address: string): string | undefined {
  for (const id of SOLANA_NETWORK_IDS) {
    const token = NETWORKS[id].tokens.find((t) => t.contract === address);
    if (token) return `this is the ${token.symbol} mint of ${id}, not a wallet: give the address of the wallet that receives ${token.symbol}`;
  }
  const programs: Record<string, string> = {
    [TOKEN_PROGRAM_ID]: 'the SPL Token program',
    [TOKEN_2022_PROGRAM_ID]: 'the Token-2022 program',
    [ASSOCIATED_TOKEN_PROGRAM_ID]: 'the Associated Token Account program',
    [SYSTEM_PROGRAM_ID]: 'the System program',
  };
  const program = programs[address];
  return program ? `this is ${program}, not a wallet` : undefined;
}

/**
 * A merchant's receiving wallet on Solana: the owner address, from which gatewayd derives the token
 * account (ATA) of each token. A mint, a program, or an address off the curve (an ATA or another
 * program-derived account) is refused, since tokens sent to an ATA derived from one of them would be
 * held by no wallet the merchant controls. An ordinary token account created from its own key pair
 * is on the curve and cannot be told from a wallet without asking the chain who owns it.
 */
export function parseSolanaOwner(text: string): { ok: true; address: string } | { ok: false; error: string } {
  const value = text.trim();
  if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(value)) return { ok: false, error: 'this is a TRON address (T...), not a Solana address' };
  if (/^0x[0-9a-fA-F]{40}$/.test(value)) return { ok: false, error: 'this is an EVM address (0x...), not a Solana address' };
  const bytes = solanaAddressBytes(value);
  if (!bytes) return { ok: false, error: 'a Solana address is 32 bytes in base58 (32 to 44 characters, no 0, O, I or l)' };
  const known = knownNonWallet(value);
  if (known) return { ok: false, error: known };
  if (!isOnCurve(bytes)) {
    return { ok: false, error: "this is a token account or program address, not a wallet: give the owner's (wallet) address" };
  }
  return { ok: true, address: value };
}

export const solanaAddressCodec: AddressCodec = {
  parse: parseSolanaOwner,
  isCanonical: (text) => solanaAddressBytes(text) !== undefined,
};
