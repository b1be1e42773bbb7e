/**
 * Password hashing: argon2id with the OWASP parameters (m=19456 KiB, t=2, p=1). Hashing runs on
 * libuv's thread pool, so the event loop stays free while a hash is computed.
 */
import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';

const ARGON2ID = 2 as Algorithm;
const OPTIONS: Options = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 };

/**
 * Verified when the email is unknown or the account has no password, so that a sign-in costs one
 * argon2id verification whatever the account state (no enumeration by timing). Same parameters as
 * real hashes; its password is random and was thrown away.
 */
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$anBkaqfbEIb2Xq0ZaJg1MQ$JaXqGlZFbIu+tH0xex5J3djl1MZfEflff7VQnC4KDQc';

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** True only when `stored` is a hash and the password matches it; always costs one verification. */
export async function checkPassword(stored: string | null, password: string): Promise<boolean> {
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
