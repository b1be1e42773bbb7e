/**
 * Registrations of addresses that are not confirmed yet. The password and name typed at
 * registration stay here, bound to that registration's confirmation links, and never change the
 * account while its address is unconfirmed (whoever registers an address has not proved they own it).
 *
 * Confirming a link (see auth.service.ts verifyEmail) gives the account its registration's password
 * and name only when that registration is the only live one of the address. Two or more live
 * registrations compete: the mailbox owner may have made one, someone else the other, and a click
 * on a link proves the mailbox, not which registration its reader made. The account is then
 * confirmed without a password, and its owner chooses one through a reset link.
 *
 * The password is also bound to the browser that registered: the registration answer sets a cookie
 * holding `registrationProof` (an HMAC of the registration id under server.secret, so nothing is
 * stored for it), and confirming keeps the password only when the confirming request carries it. A
 * click on the link proves the mailbox, not that its reader typed that registration's password: the
 * owner of an address someone else registered confirms from their own browser, without the cookie,
 * and gets no password of the other's choosing.
 */
import type { Db, Trx } from '../db/database.js';
import { DAY } from '../lib/clock.js';
import { hmacSha256Hex, safeEqual } from '../lib/crypto.js';
import { resolveLocale, type Locale } from '../lib/i18n.js';
import { newId } from '../lib/ids.js';

/** A registration lives as long as its confirmation link. */
export const REGISTRATION_LIFETIME_MS = DAY;

/**
 * Live registrations kept per address. Beyond it a registration is not stored (the address already
 * has competing registrations, so none of their passwords can be kept anyway); it bounds the work of
 * an unconfirmed sign-in, which checks the password against each.
 */
export const MAX_LIVE_REGISTRATIONS = 5;

export interface Registration {
  id: string;
  merchantId: string;
  passwordHash: string;
  name: string;
  locale: Locale;
  createdAt: number;
}

/** Stores a registration; undefined when the address already has the maximum of live ones. */
export async function insertRegistration(
  trx: Trx,
  merchantId: string,
  input: { passwordHash: string; name: string; locale: Locale },
  now: number,
): Promise<string | undefined> {
  const { live } = await trx
    .selectFrom('registrations')
    .select((eb) => eb.fn.countAll<number>().as('live'))
    .where('merchant_id', '=', merchantId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  if (Number(live) >= MAX_LIVE_REGISTRATIONS) return undefined;
  const id = newId('reg');
  await trx
    .insertInto('registrations')
    .values({
      id,
      merchant_id: merchantId,
      password_hash: input.passwordHash,
      name: input.name,
      locale: input.locale,
      created_at: now,
      expires_at: now + REGISTRATION_LIFETIME_MS,
    })
    .execute();
  return id;
}

/**
 * The argon2id salt of every registration of one address: an HMAC of the address under
 * server.secret (16 bytes). One salt per address lets a sign-in on an unconfirmed address compute
 * one hash and compare it with each live registration's, so it costs one argon2id whatever their
 * number (none included) and its time does not tell how many there are. The secret keeps anyone
 * without it from precomputing hashes for an address. (When the secret changes, a registration
 * made before no longer matches at sign-in: that sign-in answers like a wrong password, and the
 * registration's link still works.)
 */
export function registrationSalt(secret: string, email: string): Uint8Array {
  return Buffer.from(hmacSha256Hex(secret, `registration-salt:${email}`), 'hex').subarray(0, 16);
}

/** The live registration whose hash equals `hash` (constant-time comparisons, one per registration). */
export function matchingRegistration(registrations: Registration[], hash: string): Registration | undefined {
  let found: Registration | undefined;
  for (const r of registrations) if (safeEqual(r.passwordHash, hash) && !found) found = r;
  return found;
}

/** The proof, kept in the registering browser's cookie, that a request comes from the browser that made the registration. */
export function registrationProof(secret: string, registrationId: string): string {
  return Buffer.from(hmacSha256Hex(secret, `registration-browser:${registrationId}`), 'hex').toString('base64url');
}

/** Whether a cookie value is the proof of this registration (constant time; false without a cookie). */
export function holdsRegistrationProof(secret: string, registrationId: string, cookie: string | undefined): boolean {
  return cookie !== undefined && safeEqual(cookie, registrationProof(secret, registrationId));
}

/** The live registrations of an account, newest first. */
export async function liveRegistrations(db: Db | Trx, merchantId: string, now: number): Promise<Registration[]> {
  const rows = await db
    .selectFrom('registrations')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(MAX_LIVE_REGISTRATIONS)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    merchantId: r.merchant_id,
    passwordHash: r.password_hash,
    name: r.name,
    locale: resolveLocale(r.locale),
    createdAt: r.created_at,
  }));
}

/** A new link for a registration keeps it alive as long as that link. */
export async function renewRegistration(trx: Trx, registrationId: string, now: number): Promise<void> {
  await trx
    .updateTable('registrations')
    .set({ expires_at: now + REGISTRATION_LIFETIME_MS })
    .where('id', '=', registrationId)
    .execute();
}

/** Forgets every registration of an account (it is confirmed, by a link, a reset or Google). */
export async function deleteMerchantRegistrations(trx: Trx, merchantId: string): Promise<void> {
  await trx.deleteFrom('registrations').where('merchant_id', '=', merchantId).execute();
}
