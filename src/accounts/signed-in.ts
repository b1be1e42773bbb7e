/** A sign-in's outcome and the session rotation every sign-in path shares (password, Google, two-factor, reset). */
import type { Trx } from '../db/database.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Merchant } from './merchants.repo.js';
import { createSession, deleteSession } from './sessions.repo.js';

export interface SignedIn {
  merchant: Merchant;
  /** The new session's cookie token. */
  sessionToken: string;
}

/**
 * Starts a session, rotating: the session of the cookie the request came with (if any, whoever's
 * it is) is deleted, so a token planted before sign-in never becomes an authenticated one.
 */
export async function rotateSession(trx: Trx, merchantId: string, previousToken: string | undefined, now: number): Promise<string> {
  if (previousToken) await deleteSession(trx, sha256Hex(previousToken));
  const { token } = await createSession(trx, merchantId, now);
  return token;
}
