/**
 * Storage of two-factor sign-in (0023_two_factor): the TOTP secret, encrypted with AES-256-GCM
 * under a key derived from server.secret (HKDF-SHA256), the last accepted time step, and the
 * SHA-256 of each recovery code. No HTTP and no TOTP arithmetic here (two-factor.service.ts).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Db, Trx } from '../db/database.js';
import { sha256Hex } from '../lib/crypto.js';

const SECRET_KEY_INFO = 'gatewayd two-factor secret v1';

/** A 32-byte key for one purpose, derived from server.secret (changing server.secret makes stored secrets unreadable). */
export function derivedKey(serverSecret: string, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serverSecret, 'gatewayd', info, 32));
}

/** "v1.iv.tag.ciphertext" (base64url): AES-256-GCM with a random 96-bit IV, the merchant id as associated data. */
export function encryptSecret(serverSecret: string, merchantId: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derivedKey(serverSecret, SECRET_KEY_INFO), iv);
  cipher.setAAD(Buffer.from(merchantId));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** The plain secret, or undefined when the text was not made by encryptSecret for this account and key. */
export function decryptSecret(serverSecret: string, merchantId: string, stored: string): string | undefined {
  const [version, iv, tag, body] = stored.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', derivedKey(serverSecret, SECRET_KEY_INFO), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(merchantId));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

export interface TwoFactorRow {
  secretEnc: string;
  confirmedAt: number | null;
  lastStep: number;
}

export async function findTwoFactor(db: Db | Trx, merchantId: string): Promise<TwoFactorRow | undefined> {
  const row = await db.selectFrom('two_factor').select(['secret_enc', 'confirmed_at', 'last_step']).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? { secretEnc: row.secret_enc, confirmedAt: row.confirmed_at, lastStep: row.last_step } : undefined;
}

/** Whether the account signs in with a second factor (setup confirmed). */
export async function twoFactorEnabled(db: Db | Trx, merchantId: string): Promise<boolean> {
  return (await findTwoFactor(db, merchantId))?.confirmedAt != null;
}

/** Starts (or restarts) a pending setup: a new secret, not yet asked at sign-in. */
export async function savePendingSecret(trx: Trx, merchantId: string, secretEnc: string, now: number): Promise<void> {
  await trx.deleteFrom('two_factor').where('merchant_id', '=', merchantId).execute();
  await trx.insertInto('two_factor').values({ merchant_id: merchantId, secret_enc: secretEnc, confirmed_at: null, created_at: now }).execute();
}

/** Records an accepted time step, only when it is later than every step accepted before (false: a replay). */
export async function acceptStep(trx: Trx, merchantId: string, step: number): Promise<boolean> {
  const r = await trx.updateTable('two_factor').set({ last_step: step }).where('merchant_id', '=', merchantId).where('last_step', '<', step).executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

export async function confirmTwoFactor(trx: Trx, merchantId: string, now: number, recoveryCodes: string[]): Promise<void> {
  await trx.updateTable('two_factor').set({ confirmed_at: now }).where('merchant_id', '=', merchantId).execute();
  await trx.deleteFrom('two_factor_recovery_codes').where('merchant_id', '=', merchantId).execute();
  await trx
    .insertInto('two_factor_recovery_codes')
    .values(recoveryCodes.map((code) => ({ merchant_id: merchantId, code_hash: recoveryCodeHash(code), used_at: null })))
    .execute();
}

/** Spends a recovery code: true once per code, false for an unknown or spent one. */
export async function spendRecoveryCode(trx: Trx, merchantId: string, code: string, now: number): Promise<boolean> {
  const r = await trx
    .updateTable('two_factor_recovery_codes')
    .set({ used_at: now })
    .where('merchant_id', '=', merchantId)
    .where('code_hash', '=', recoveryCodeHash(code))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

export async function unusedRecoveryCodes(db: Db | Trx, merchantId: string): Promise<number> {
  const row = await db
    .selectFrom('two_factor_recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function removeTwoFactor(trx: Trx, merchantId: string): Promise<void> {
  await trx.deleteFrom('two_factor_recovery_codes').where('merchant_id', '=', merchantId).execute();
  await trx.deleteFrom('two_factor').where('merchant_id', '=', merchantId).execute();
}

/**
 * Recovery codes are 100-bit random strings (see newRecoveryCode), so a plain SHA-256 is enough: a
 * slow hash protects guessable secrets (passwords); nobody can enumerate 2^100 candidates. Spaces,
 * dashes and case are ignored.
 */
export function recoveryCodeHash(code: string): string {
  return sha256Hex(normalizeRecoveryCode(code));
}

export function normalizeRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, '').toLowerCase();
}

const RECOVERY_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789'; // 32 letters: no 0/o, 1/l

/** 20 characters of a 32-letter alphabet (100 bits), shown as four groups of five: "abcde-fghij-kmnpq-rstuv". */
export function newRecoveryCode(): string {
  const bytes = randomBytes(20);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b & 31]!).join('');
  return chars.match(/.{5}/g)!.join('-');
}
