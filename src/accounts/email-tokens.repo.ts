/**
 * Single-use confirmation links (docs/api.md, Merchant accounts): 32 random bytes base64url (43
 * characters), only the SHA-256 stored. Each link belongs to one registration; a newer mail for the
 * same registration replaces its older links; consuming deletes the row, so a token works at most
 * once. (Reset links live in password-resets.repo.ts.)
 */
import type { Db, Trx } from '../db/database.js';
import type { EmailTokensTable } from '../db/schema.js';
import { DAY, HOUR } from '../lib/clock.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';

export type EmailTokenPurpose = EmailTokensTable['purpose'];

export const EMAIL_TOKEN_LIFETIME_MS: Record<EmailTokenPurpose, number> = {
  verify: 24 * HOUR,
  reset: 1 * HOUR,
};

/**
 * Creates a new confirmation link for one registration, replacing that registration's older links
 * (the links of other registrations of the same address stay valid: each confirms the address,
 * and none of them then keeps a password, see registrations.repo.ts).
 */
export async function issueVerifyToken(trx: Trx, merchantId: string, registrationId: string, now: number): Promise<string> {
  const token = randomToken(32);
  await trx.deleteFrom('email_tokens').where('registration_id', '=', registrationId).where('purpose', '=', 'verify').execute();
  await trx
    .insertInto('email_tokens')
    .values({
      token_hash: sha256Hex(token),
      merchant_id: merchantId,
      purpose: 'verify',
      registration_id: registrationId,
      created_at: now,
      expires_at: now + EMAIL_TOKEN_LIFETIME_MS.verify,
    })
    .execute();
  return token;
}

/**
 * Uses a confirmation link up: returns its merchant and registration when the token exists and has
 * not expired, and deletes it in the same transaction (a concurrent second use finds nothing).
 */
export async function consumeVerifyToken(trx: Trx, token: string, now: number): Promise<{ merchantId: string; registrationId: string | null } | undefined> {
  const row = await trx
    .deleteFrom('email_tokens')
    .where('token_hash', '=', sha256Hex(token))
    .where('purpose', '=', 'verify')
    .where('expires_at', '>', now)
    .returning(['merchant_id', 'registration_id'])
    .executeTakeFirst();
  return row ? { merchantId: row.merchant_id, registrationId: row.registration_id } : undefined;
}

/** Forgets every outstanding link of a merchant (after a reset or a confirmation by other means). */
export async function deleteMerchantEmailTokens(trx: Trx, merchantId: string): Promise<void> {
  await trx.deleteFrom('email_tokens').where('merchant_id', '=', merchantId).execute();
}

/** Housekeeping: expired links and sessions carry no information. Returns the rows removed. */
export async function purgeExpired(db: Db, now: number): Promise<number> {
  const tokens = await db.deleteFrom('email_tokens').where('expires_at', '<=', now).executeTakeFirst();
  const sessions = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
  // A provider's captcha token expires within minutes; a day of memory covers its whole life.
  const captcha = await db
    .deleteFrom('captcha_tokens')
    .where('used_at', '<=', now - DAY)
    .executeTakeFirst();
  const registrations = await db.deleteFrom('registrations').where('expires_at', '<=', now).executeTakeFirst();
  // A reset request's row carries its 5-minute limit, which ends long before the link's hour.
  const resets = await db.deleteFrom('password_resets').where('expires_at', '<=', now).executeTakeFirst();
  return [tokens, sessions, captcha, registrations, resets].reduce((sum, r) => sum + Number(r.numDeletedRows), 0);
}
