/**
 * Single-use email links (docs/api.md, Merchant accounts): 32 random bytes base64url (43 characters), only
 * the SHA-256 stored. Issuing a link deletes the older links of the same purpose ("a newer mail
 * replaces older links"); consuming deletes the row, so a token works at most once.
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

/** Creates a new link token for a merchant, replacing that merchant's older links of the purpose. */
export async function issueEmailToken(trx: Trx, merchantId: string, purpose: EmailTokenPurpose, now: number): Promise<string> {
  const token = randomToken(32);
  await trx.deleteFrom('email_tokens').where('merchant_id', '=', merchantId).where('purpose', '=', purpose).execute();
  await trx
    .insertInto('email_tokens')
    .values({ token_hash: sha256Hex(token), merchant_id: merchantId, purpose, created_at: now, expires_at: now + EMAIL_TOKEN_LIFETIME_MS[purpose] })
    .execute();
  return token;
}

/**
 * Uses a token up: returns its merchant id when the token exists, has this purpose and has not
 * expired, and deletes it in the same transaction (a concurrent second use finds nothing).
 */
export async function consumeEmailToken(trx: Trx, token: string, purpose: EmailTokenPurpose, now: number): Promise<string | undefined> {
  const row = await trx
    .deleteFrom('email_tokens')
    .where('token_hash', '=', sha256Hex(token))
    .where('purpose', '=', purpose)
    .where('expires_at', '>', now)
    .returning('merchant_id')
    .executeTakeFirst();
  return row?.merchant_id;
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
  const captcha = await db.deleteFrom('captcha_tokens').where('used_at', '<=', now - DAY).executeTakeFirst();
  return Number(tokens.numDeletedRows) + Number(sessions.numDeletedRows) + Number(captcha.numDeletedRows);
}
