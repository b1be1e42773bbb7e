/**
 * Password hashing: argon2id with the OWASP parameters (m=19456 KiB, t=2, p=1). Hashing runs on
 * libuv's thread pool, so the event loop stays free while a hash is computed.
 */
import type { Algorithm, Options } from '@node-rs/argon2';

/**
 * The native module is loaded on the first password operation, not at start: it is resident
 * memory an API-only server never needs.
 */
let argon2: Promise<typeof import('@node-rs/argon2')> | undefined;
const loadArgon2 = () => (argon2 ??= import('@node-rs/argon2'));

const ARGON2ID = 2 as Algorithm;
const OPTIONS: Options = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 };

/**
 * Verified when the email is unknown or the account has no password, so that a sign-in costs one
 * argon2id verification whatever the account state (no enumeration by timing). Same parameters as
 * real hashes; its password is random and was thrown away.
 */
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$anBkaqfbEIb2Xq0ZaJg1MQ$JaXqGlZFbIu+tH0xex5J3djl1MZfEflff7VQnC4KDQc';

export async function hashPassword(password: string): Promise<string> {
  return (await loadArgon2()).hash(password, OPTIONS);
}

/**
 * An argon2id hash (same parameters, standard encoding) with a given 16-byte salt instead of a
 * random one: every registration of one address is hashed with that address's salt, so a sign-in
 * computes one hash and compares it with all of them (see registrations.repo.ts).
 */
export async function hashPasswordWithSalt(password: string, salt: Uint8Array): Promise<string> {
  return (await loadArgon2()).hash(password, { ...OPTIONS, salt });
}

/** True only when `stored` is a hash and the password matches it; always costs one verification. */
export async function checkPassword(stored: string | null, password: string): Promise<boolean> {
  const { verify } = await loadArgon2();
  if (stored === null) {
    await verify(DUMMY_HASH, password).catch(() => false);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
