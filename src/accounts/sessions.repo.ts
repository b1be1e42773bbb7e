/** Server-side sessions: the cookie carries a 256-bit random token; only its SHA-256 is stored. */
import type { Db, Trx } from '../db/database.js';
import { DAY } from '../lib/clock.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';

export const SESSION_COOKIE = 'gw_session';
export const SESSION_LIFETIME_MS = 30 * DAY;
/** A session's expiry is pushed forward at most this often, so reads do not write on every request. */
export const SESSION_RENEW_AFTER_MS = DAY;

export interface Session {
  tokenHash: string;
  merchantId: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
}

export interface NewSession {
  token: string;
  session: Session;
}

export async function createSession(db: Db | Trx, merchantId: string, now: number): Promise<NewSession> {
  const token = randomToken(32);
  const session: Session = {
    tokenHash: sha256Hex(token),
    merchantId,
    createdAt: now,
    lastUsedAt: now,
    expiresAt: now + SESSION_LIFETIME_MS,
  };
  await db
    .insertInto('sessions')
    .values({
      token_hash: session.tokenHash,
      merchant_id: merchantId,
      created_at: now,
      last_used_at: now,
      expires_at: session.expiresAt,
    })
    .execute();
  return { token, session };
}

/** The live session for a cookie token, or undefined (unknown or expired). */
export async function findSession(db: Db, token: string, now: number): Promise<Session | undefined> {
  const row = await db.selectFrom('sessions').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
  if (!row || row.expires_at <= now) return undefined;
  return {
    tokenHash: row.token_hash,
    merchantId: row.merchant_id,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
  };
}

/** Renews a session on use (30 days from now); returns true when it wrote. */
export async function renewSession(db: Db, session: Session, now: number): Promise<boolean> {
  if (now - session.lastUsedAt < SESSION_RENEW_AFTER_MS) return false;
  await db
    .updateTable('sessions')
    .set({ last_used_at: now, expires_at: now + SESSION_LIFETIME_MS })
    .where('token_hash', '=', session.tokenHash)
    .execute();
  return true;
}

export async function deleteSession(db: Db | Trx, tokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
}

/** Revokes every session of a merchant, optionally keeping one. */
export async function deleteMerchantSessions(db: Db | Trx, merchantId: string, keepHash?: string): Promise<void> {
  let q = db.deleteFrom('sessions').where('merchant_id', '=', merchantId);
  if (keepHash) q = q.where('token_hash', '!=', keepHash);
  await q.execute();
}
