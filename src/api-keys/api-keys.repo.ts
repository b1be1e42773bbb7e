/** API keys: the secret is `gw_live_` + 32 random bytes base64url; only its SHA-256 is stored. */
import type { Db } from '../db/database.js';
import { sha256Hex } from '../lib/crypto.js';
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

export function parseScopes(text: string): Scope[] {
  return text.split(' ').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
}

/** Looks a presented secret up by its hash (an indexed equality on a hash: no timing oracle on the secret). */
export async function findKeyBySecret(db: Db, secret: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('secret_hash', '=', sha256Hex(secret)).executeTakeFirst();
  if (!row) return undefined;
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

/** last_used_at is precise to a minute: the write happens only when the stored value is older. */
export const KEY_LAST_USED_PRECISION_MS = 60_000;

export async function touchKey(db: Db, key: ApiKeyRecord, now: number): Promise<void> {
  if (key.lastUsedAt !== null && now - key.lastUsedAt < KEY_LAST_USED_PRECISION_MS) return;
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', key.id).execute();
}
