/** API keys: the secret is `gw_live_` + 32 random bytes base64url; only its SHA-256 is stored. */
import type { Selectable } from 'kysely';
import { compileQuery, settle, type Awaitable, type Param } from '../db/compiled.js';
import type { Conn, Db, Trx } from '../db/database.js';
import type { ApiKeysTable } from '../db/schema.js';
import { DAY } from '../lib/clock.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { SCOPES, type Scope } from '../http/context.js';

export interface ApiKeyRecord {
  id: string;
  merchantId: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  expiresInDays: number | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  expiresAt: number | null;
}

/** The one rule of an active key: not revoked, and not past its expiry. */
export function isKeyActive(key: Pick<ApiKeyRecord, 'revokedAt' | 'expiresAt'>, now: number): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now);
}

export function parseScopes(text: string): Scope[] {
  return text.split(' ').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
}

const keyBySecretHash = compileQuery((db, p: Param<{ hash: string }>) => db.selectFrom('api_keys').selectAll().where('secret_hash', '=', p('hash')));
const touchKeyQuery = compileQuery((db, p: Param<{ id: string; now: number }>) =>
  db
    .updateTable('api_keys')
    .set({ last_used_at: p('now') })
    .where('id', '=', p('id')),
);

/**
 * Looks a presented secret up by its hash (an indexed equality on a hash: no timing oracle on the
 * secret). A compiled query: it runs on every API request, so it is no async function: the key
 * itself on SQLite (no promise, no await), a promise of it on PostgreSQL.
 */
export function findKeyBySecret(conn: Conn, secret: string): Awaitable<ApiKeyRecord | undefined> {
  return settle(keyBySecretHash.first(conn, { hash: sha256Hex(secret) }), keyOrNone);
}

function keyOrNone(row: Selectable<ApiKeysTable> | undefined): ApiKeyRecord | undefined {
  return row ? rowToKey(row) : undefined;
}

/** last_used_at is precise to a minute: the write happens only when the stored value is older. */
export const KEY_LAST_USED_PRECISION_MS = 60_000;

export function keyNeedsTouch(key: ApiKeyRecord, now: number): boolean {
  return key.lastUsedAt === null || now - key.lastUsedAt >= KEY_LAST_USED_PRECISION_MS;
}

export async function touchKey(sqlite: Conn, key: ApiKeyRecord, now: number): Promise<void> {
  if (keyNeedsTouch(key, now)) await touchKeyQuery.run(sqlite, { id: key.id, now });
}

export const KEY_SECRET_PREFIX = 'gw_live_';
/** Characters of the secret kept in clear for identification (the key's `prefix`). */
export const KEY_PREFIX_LENGTH = 12;

export interface NewKeyInput {
  name: string;
  scopes: readonly Scope[];
  expiresInDays: number | null;
  replacedKeyId?: string;
}

/** A new secret and the record stored for it (only the SHA-256 of the secret is kept). */
export async function insertKey(db: Db | Trx, merchantId: string, input: NewKeyInput, now: number): Promise<{ key: ApiKeyRecord; secret: string }> {
  const secret = `${KEY_SECRET_PREFIX}${randomToken(32)}`;
  // Scopes are stored in the canonical order so two equal sets read back equal.
  const scopes = SCOPES.filter((s) => input.scopes.includes(s));
  const key: ApiKeyRecord = {
    id: newId('key'),
    merchantId,
    name: input.name,
    prefix: secret.slice(0, KEY_PREFIX_LENGTH),
    scopes,
    expiresInDays: input.expiresInDays,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: input.expiresInDays === null ? null : now + input.expiresInDays * DAY,
  };
  await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      merchant_id: merchantId,
      name: key.name,
      prefix: key.prefix,
      secret_hash: sha256Hex(secret),
      scopes: scopes.join(' '),
      expires_in_days: key.expiresInDays,
      created_at: now,
      last_used_at: null,
      revoked_at: null,
      expires_at: key.expiresAt,
      replaced_key_id: input.replacedKeyId ?? null,
    })
    .execute();
  return { key, secret };
}

function rowToKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    name: row.name,
    prefix: row.prefix,
    scopes: parseScopes(row.scopes),
    expiresInDays: row.expires_in_days,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
  };
}

export async function findMerchantKey(db: Db | Trx, merchantId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', keyId).where('merchant_id', '=', merchantId).executeTakeFirst();
  return keyOrNone(row);
}

/** Keys that still authenticate: not revoked, not expired; `except` is left out of the count. */
export async function countActiveKeys(db: Db | Trx, merchantId: string, now: number, except?: string): Promise<number> {
  let q = db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  if (except !== undefined) q = q.where('id', '!=', except);
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Revokes a key if it is still active; returns whether this call revoked it. */
export async function revokeKey(db: Db | Trx, merchantId: string, keyId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', keyId)
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function listMerchantKeys(db: Db, merchantId: string): Promise<ApiKeyRecord[]> {
  const rows = await db.selectFrom('api_keys').selectAll().where('merchant_id', '=', merchantId).orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(rowToKey);
}
