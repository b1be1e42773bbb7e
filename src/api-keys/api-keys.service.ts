/** Rolling and revoking keys: the rules around the repository (no HTTP, no SQL strings). */
import { writeTransaction, type Db, type Trx } from '../db/database.js';
import { AppError } from '../lib/errors.js';
import type { Scope } from '../http/context.js';
import { requireCurrentSession } from '../accounts/sessions.repo.js';
import { countActiveKeys, findMerchantKey, insertKey, revokeKey, type ApiKeyRecord } from './api-keys.repo.js';

/**
 * At most `maxActive` keys that still authenticate (api_keys.max_active): keys are cheap to make,
 * so without a cap a per-key limit would be no limit. Counted and inserted in one write
 * transaction, so concurrent creations cannot pass the cap together.
 */
async function checkKeyCap(trx: Trx, merchantId: string, maxActive: number, now: number, replacing?: string): Promise<void> {
  if ((await countActiveKeys(trx, merchantId, now, replacing)) >= maxActive) {
    throw new AppError('api_key_limit_reached', `This account already has ${maxActive} active API keys; revoke one you no longer use first`);
  }
}

/**
 * A key is made by an owner session, which must still be current where the key is written: a reset
 * or password change that commits while the request is served ends the session, and no key comes
 * of it (docs/security.md, Credential changes).
 */
export async function createKey(
  db: Db,
  sessionHash: string,
  merchantId: string,
  input: { name: string; scopes: readonly Scope[]; expiresInDays: number | null },
  maxActive: number,
  now: number,
) {
  return writeTransaction(db, async (trx) => {
    await requireCurrentSession(trx, sessionHash, now);
    await checkKeyCap(trx, merchantId, maxActive, now);
    return insertKey(trx, merchantId, input, now);
  });
}

/**
 * Replaces a key: the new key keeps the name and scopes and gets the same lifetime counted from
 * now; the old one is revoked in the same transaction. A revoked key cannot be rolled (404, as if
 * absent: it is no longer a credential); an expired one can, which is how a key is renewed.
 */
export async function rollKey(
  db: Db,
  sessionHash: string,
  merchantId: string,
  keyId: string,
  maxActive: number,
  now: number,
): Promise<{ key: ApiKeyRecord; secret: string; replacedKeyId: string }> {
  return writeTransaction(db, async (trx) => {
    await requireCurrentSession(trx, sessionHash, now);
    const old = await findMerchantKey(trx, merchantId, keyId);
    if (!old || old.revokedAt !== null) throw new AppError('not_found', 'API key not found or already revoked');
    // The rolled key is revoked here, so a roll at the cap replaces one key with one.
    await checkKeyCap(trx, merchantId, maxActive, now, old.id);
    const created = await insertKey(trx, merchantId, { name: old.name, scopes: old.scopes, expiresInDays: old.expiresInDays, replacedKeyId: old.id }, now);
    if (!(await revokeKey(trx, merchantId, old.id, now))) throw new AppError('not_found', 'API key not found or already revoked');
    return { ...created, replacedKeyId: old.id };
  });
}

/** Revokes a key at once. Revoking an already revoked key succeeds again (DELETE is idempotent). */
export async function deleteKey(db: Db, merchantId: string, keyId: string, now: number): Promise<void> {
  if (await revokeKey(db, merchantId, keyId, now)) return;
  if (!(await findMerchantKey(db, merchantId, keyId))) throw new AppError('not_found', 'API key not found');
}
