/** Rolling and revoking keys: the rules around the repository (no HTTP, no SQL strings). */
import { writeTransaction, type Db } from '../db/database.js';
import { AppError } from '../lib/errors.js';
import type { Scope } from '../http/context.js';
import { findMerchantKey, insertKey, revokeKey, type ApiKeyRecord } from './api-keys.repo.js';

export async function createKey(db: Db, merchantId: string, input: { name: string; scopes: readonly Scope[]; expiresInDays: number | null }, now: number) {
  return insertKey(db, merchantId, input, now);
}

/**
 * Replaces a key: the new key keeps the name and scopes and gets the same lifetime counted from
 * now; the old one is revoked in the same transaction. A revoked key cannot be rolled (404, as if
 * absent: it is no longer a credential); an expired one can, which is how a key is renewed.
 */
export async function rollKey(db: Db, merchantId: string, keyId: string, now: number): Promise<{ key: ApiKeyRecord; secret: string; replacedKeyId: string }> {
  return writeTransaction(db, async (trx) => {
    const old = await findMerchantKey(trx, merchantId, keyId);
    if (!old || old.revokedAt !== null) throw new AppError('not_found', 'API key not found or already revoked');
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
