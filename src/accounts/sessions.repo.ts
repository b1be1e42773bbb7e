/**
 * Server-side sessions: the cookie carries a 256-bit random token; only its SHA-256 is stored.
 *
 * Invariant: a session counts only while its credential_version equals its account's. A session is
 * made with the account's version read in the same write transaction, and a password change or
 * reset bumps the account's version in its own, so a session made under an older password never
 * authenticates, even one that committed concurrently with the change.
 */
import { sql } from 'kysely';
import type { Db, Trx } from '../db/database.js';
import { DAY } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
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
      credential_version: sql<number>`(SELECT credential_version FROM merchants WHERE id = ${merchantId})`,
    })
    .execute();
  return { token, session };
}

/** A session row whose credential version is still its account's. */
function currentSessions(db: Db | Trx) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('merchants as m', 'm.id', 's.merchant_id')
    .select(['s.token_hash', 's.merchant_id', 's.created_at', 's.last_used_at', 's.expires_at'])
    .whereRef('s.credential_version', '=', 'm.credential_version');
}

/** The live session for a cookie token, or undefined (unknown, expired, or made under an older password). */
export async function findSession(db: Db | Trx, token: string, now: number): Promise<Session | undefined> {
  return findSessionByHash(db, sha256Hex(token), now);
}

async function findSessionByHash(db: Db | Trx, tokenHash: string, now: number): Promise<Session | undefined> {
  const row = await currentSessions(db).where('s.token_hash', '=', tokenHash).executeTakeFirst();
  if (!row || row.expires_at <= now) return undefined;
  return {
    tokenHash: row.token_hash,
    merchantId: row.merchant_id,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
  };
}

/**
 * Inside a write transaction: the session that asked for a credential change (a password, an API
 * key) is still live and current, or 401 unauthorized. Checked where the change is written, so a
 * reset that commits while the request was being served ends it.
 */
export async function requireCurrentSession(trx: Db | Trx, tokenHash: string, now: number): Promise<Session> {
  const session = await findSessionByHash(trx, tokenHash, now);
  if (!session) throw new AppError('unauthorized', 'Sign in first: this session ended (the password was changed or reset)');
  return session;
}

/** Carries a session over to its account's current credential version (the one that changed the password keeps working). */
export async function carrySession(trx: Trx, tokenHash: string): Promise<void> {
  await trx
    .updateTable('sessions')
    .set({ credential_version: sql<number>`(SELECT credential_version FROM merchants WHERE merchants.id = sessions.merchant_id)` })
    .where('token_hash', '=', tokenHash)
    .execute();
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
