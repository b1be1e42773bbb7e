/**
 * Password-reset requests, one row per address, written alike whether or not the address has an
 * account, so that the answer and its timing do not tell (the request for an unknown address stores
 * a token that is never mailed, with no merchant). A request replaces the address's token, which
 * voids the older link, at most once every 5 minutes: within that time nothing is written and
 * nothing is mailed, again whatever the address.
 */
import type { Db, Trx } from '../db/database.js';
import { HOUR, MINUTE } from '../lib/clock.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { normalizeEmail } from './merchants.repo.js';

export const RESET_LINK_LIFETIME_MS = 1 * HOUR;
/** At most one reset mail per address in this time. */
export const RESET_MAIL_GAP_MS = 5 * MINUTE;

/**
 * Records a reset request for an address: one statement, the same for an address with an account
 * (`merchantId`) and without (null). Returns the new link's token when the request took the
 * address's 5-minute slot, undefined within it. `ignoreLimit` is for a mailbox owner who has just
 * proved the address (a confirmation that kept no password): their link must go out now.
 */
export async function recordResetRequest(trx: Trx, email: string, merchantId: string | null, now: number, ignoreLimit = false): Promise<string | undefined> {
  const token = randomToken(32);
  const row = await trx
    .insertInto('password_resets')
    .values({
      email_hash: sha256Hex(normalizeEmail(email)),
      merchant_id: merchantId,
      token_hash: sha256Hex(token),
      sent_at: now,
      expires_at: now + RESET_LINK_LIFETIME_MS,
    })
    .onConflict((oc) =>
      oc
        .column('email_hash')
        .doUpdateSet((eb) => ({
          merchant_id: eb.ref('excluded.merchant_id'),
          token_hash: eb.ref('excluded.token_hash'),
          sent_at: eb.ref('excluded.sent_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where('password_resets.sent_at', '<=', ignoreLimit ? now : now - RESET_MAIL_GAP_MS),
    )
    .returning('email_hash')
    .executeTakeFirst();
  return row ? token : undefined;
}

/** The account of a live, unused reset link (a read: the link stays usable). */
export async function findResetMerchant(db: Db | Trx, token: string, now: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('password_resets')
    .select('merchant_id')
    .where('token_hash', '=', sha256Hex(token))
    .where('expires_at', '>', now)
    .where('merchant_id', 'is not', null)
    .executeTakeFirst();
  return row?.merchant_id ?? undefined;
}

/** Uses a reset link up (its row keeps the 5-minute limit); returns its account, or undefined. */
export async function consumeResetToken(trx: Trx, token: string, now: number): Promise<string | undefined> {
  const row = await trx
    .updateTable('password_resets')
    .set({ token_hash: null })
    .where('token_hash', '=', sha256Hex(token))
    .where('expires_at', '>', now)
    .where('merchant_id', 'is not', null)
    .returning('merchant_id')
    .executeTakeFirst();
  return row?.merchant_id ?? undefined;
}

/** Voids every reset link of an account (its password was just set). */
export async function voidMerchantResets(trx: Trx, merchantId: string): Promise<void> {
  await trx.updateTable('password_resets').set({ token_hash: null }).where('merchant_id', '=', merchantId).execute();
}
