/**
 * Sign-up, confirmation, sign-in and password reset (docs/api.md, Merchant accounts). No HTTP here:
 * the routes pass plain values and get domain objects or an AppError back.
 *
 * Invariants:
 * - Every path that answers for an email address costs one argon2id computation, whether or not
 *   the address has an account (no enumeration by timing or by answer).
 * - An unconfirmed account's password is the one of its newest registration that was mailed a
 *   link; issuing a link deletes the older ones, so only a link mailed with the current password
 *   can confirm the account (pre-registration of someone else's address cannot hijack it).
 * - Mails are sent after the transaction commits; transactions never wait on the network.
 */
import { writeTransaction, type Trx } from '../db/database.js';
import type { AppDeps } from '../deps.js';
import { MINUTE } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { AppError } from '../lib/errors.js';
import type { Locale } from '../lib/i18n.js';
import { accountMailUrl, sendAccountMail, type AccountMailKind } from './account-mail.js';
import { consumeEmailToken, deleteMerchantEmailTokens, issueEmailToken } from './email-tokens.repo.js';
import {
  claimMailSlot,
  findMerchantByEmail,
  findMerchantById,
  insertMerchant,
  normalizeEmail,
  releaseMailSlot,
  updateMerchant,
  type MailSlot,
  type MerchantChanges,
  type Merchant,
  setMerchantLocale,
} from './merchants.repo.js';
import { checkPassword, hashPassword } from './passwords.js';
import { createSession, deleteMerchantSessions, deleteSession } from './sessions.repo.js';

/** At most one confirmation mail (and one "already registered" notice) per account per 5 minutes. */
export const MAIL_RESEND_GAP_MS = 5 * MINUTE;

export interface SignedIn {
  merchant: Merchant;
  /** The new session's cookie token. */
  sessionToken: string;
}

/**
 * Starts a session, rotating: the session of the cookie the request came with (if any, whoever's
 * it is) is deleted, so a token planted before sign-in never becomes an authenticated one.
 */
export async function rotateSession(trx: Trx, merchantId: string, previousToken: string | undefined, now: number): Promise<string> {
  if (previousToken) await deleteSession(trx, sha256Hex(previousToken));
  const { token } = await createSession(trx, merchantId, now);
  return token;
}

/** The registration name: the given one, else the part of the email before "@". */
export function defaultName(email: string, name: string | undefined): string {
  const given = name?.trim();
  return given ? given : normalizeEmail(email).split('@')[0]!.slice(0, 100);
}

interface PlannedMail {
  kind: AccountMailKind;
  merchant: Merchant;
  slot: MailSlot;
  token?: string;
}

/** Sends a planned mail; a refused mail gives its resend slot back. Returns whether it was accepted. */
async function deliver(deps: AppDeps, mail: PlannedMail, locale: Locale, now: number): Promise<boolean> {
  const result = await sendAccountMail(deps, {
    kind: mail.kind,
    locale,
    to: mail.merchant.email,
    name: mail.merchant.name,
    url: accountMailUrl(deps.config.server.public_url, mail.kind, mail.token),
  });
  if (!result.accepted) await releaseMailSlot(deps.db, mail.merchant.id, mail.slot, now);
  return result.accepted;
}

export interface RegisterInput {
  email: string;
  password: string;
  name?: string;
  locale: Locale;
}

/**
 * New address: an unconfirmed account and a confirmation link. Unconfirmed address: a new link
 * with the new password and name (within the resend limit; otherwise nothing changes). Confirmed
 * address: a notice to the owner (within the same limit). All three answer alike.
 */
export async function register(deps: AppDeps, input: RegisterInput): Promise<{ email: string; emailSent: boolean }> {
  const email = normalizeEmail(input.email);
  const name = defaultName(email, input.name);
  const passwordHash = await hashPassword(input.password);
  const now = deps.clock.now();
  const mail = await writeTransaction(deps.db, async (trx): Promise<PlannedMail | undefined> => {
    const existing = await findMerchantByEmail(trx, email);
    if (!existing) {
      const merchant = await insertMerchant(trx, { email, name, passwordHash, emailVerifiedAt: null }, now);
      await setMerchantLocale(trx, merchant.id, input.locale);
      await claimMailSlot(trx, merchant.id, 'verification_sent_at', now, MAIL_RESEND_GAP_MS);
      return { kind: 'verify', merchant, slot: 'verification_sent_at', token: await issueEmailToken(trx, merchant.id, 'verify', now) };
    }
    if (existing.emailVerifiedAt === null) {
      if (!(await claimMailSlot(trx, existing.id, 'verification_sent_at', now, MAIL_RESEND_GAP_MS))) return undefined;
      await updateMerchant(trx, existing.id, { passwordHash, name }, now);
      await setMerchantLocale(trx, existing.id, input.locale);
      return { kind: 'verify', merchant: { ...existing, name }, slot: 'verification_sent_at', token: await issueEmailToken(trx, existing.id, 'verify', now) };
    }
    if (!(await claimMailSlot(trx, existing.id, 'exists_notice_sent_at', now, MAIL_RESEND_GAP_MS))) return undefined;
    return { kind: 'exists', merchant: existing, slot: 'exists_notice_sent_at' };
  });
  // Within the resend limit nothing is mailed: a mail went to this address minutes ago.
  const emailSent = mail ? await deliver(deps, mail, input.locale, now) : true;
  deps.log.info({ merchant_id: mail?.merchant.id, mail: mail?.kind ?? 'throttled', email_sent: emailSent }, 'registration');
  return { email, emailSent };
}

export interface LoginInput {
  email: string;
  password: string;
  locale: Locale;
  previousToken: string | undefined;
}

/** 401 invalid_credential for a wrong password or unknown address; 403 email_not_verified (and a new link, within the limit) when unconfirmed. */
export async function login(deps: AppDeps, input: LoginInput): Promise<SignedIn> {
  const found = await findMerchantByEmail(deps.db, input.email);
  const ok = await checkPassword(found?.passwordHash ?? null, input.password);
  if (!found || !ok) throw new AppError('invalid_credential', 'Wrong email or password');
  const now = deps.clock.now();
  if (found.emailVerifiedAt === null) {
    if (deps.mailer.available) {
      const token = await writeTransaction(deps.db, async (trx) =>
        (await claimMailSlot(trx, found.id, 'verification_sent_at', now, MAIL_RESEND_GAP_MS)) ? issueEmailToken(trx, found.id, 'verify', now) : undefined,
      );
      if (token) await deliver(deps, { kind: 'verify', merchant: found, slot: 'verification_sent_at', token }, input.locale, now);
    }
    throw new AppError('email_not_verified', 'Confirm your email address first: use the link we emailed you');
  }
  const sessionToken = await writeTransaction(deps.db, async (trx) => {
    await setMerchantLocale(trx, found.id, input.locale);
    return rotateSession(trx, found.id, input.previousToken, now);
  });
  deps.log.info({ merchant_id: found.id }, 'signed in');
  return { merchant: found, sessionToken };
}

/** Confirms the address of the link's account and signs in. 400 invalid_token for a used, replaced, expired or unknown link. */
export async function verifyEmail(deps: AppDeps, token: string, previousToken: string | undefined): Promise<SignedIn> {
  const now = deps.clock.now();
  const result = await writeTransaction(deps.db, async (trx) => {
    const merchantId = await consumeEmailToken(trx, token, 'verify', now);
    const merchant = merchantId ? await findMerchantById(trx, merchantId) : undefined;
    if (!merchant) return undefined;
    if (merchant.emailVerifiedAt === null) await updateMerchant(trx, merchant.id, { emailVerifiedAt: now }, now);
    return {
      merchant: { ...merchant, emailVerifiedAt: merchant.emailVerifiedAt ?? now },
      sessionToken: await rotateSession(trx, merchant.id, previousToken, now),
    };
  });
  if (!result) throw new AppError('invalid_token', 'This confirmation link is invalid, used, replaced by a newer one, or expired');
  deps.log.info({ merchant_id: result.merchant.id }, 'email confirmed');
  return result;
}

/**
 * Mails a reset link when the address has an account. The answer is the same either way, and the
 * mail is sent after the answer, so neither the reply nor its timing tells whether it exists.
 */
export async function forgotPassword(deps: AppDeps, input: { email: string; locale: Locale }): Promise<void> {
  const now = deps.clock.now();
  const planned = await writeTransaction(deps.db, async (trx) => {
    const merchant = await findMerchantByEmail(trx, input.email);
    return merchant ? { merchant, token: await issueEmailToken(trx, merchant.id, 'reset', now) } : undefined;
  });
  if (!planned) return;
  const { merchant, token } = planned;
  sendAccountMail(deps, {
    kind: 'reset',
    locale: input.locale,
    to: merchant.email,
    name: merchant.name,
    url: accountMailUrl(deps.config.server.public_url, 'reset', token),
  }).catch((err: unknown) => deps.log.error({ err, merchant_id: merchant.id }, 'reset mail failed'));
}

/**
 * Sets the new password, confirms the address, revokes every session and every outstanding link
 * of the account, and signs in with a new session.
 */
export async function resetPassword(deps: AppDeps, input: { token: string; password: string; previousToken: string | undefined }): Promise<SignedIn> {
  // Cheap check first: hashing is expensive, and a bad token must not cost an argon2id run.
  const pending = await deps.db
    .selectFrom('email_tokens')
    .select('merchant_id')
    .where('token_hash', '=', sha256Hex(input.token))
    .where('purpose', '=', 'reset')
    .where('expires_at', '>', deps.clock.now())
    .executeTakeFirst();
  const invalid = () => new AppError('invalid_token', 'This reset link is invalid, used, replaced by a newer one, or expired');
  if (!pending) throw invalid();
  const passwordHash = await hashPassword(input.password);
  const now = deps.clock.now();
  const result = await writeTransaction(deps.db, async (trx) => {
    const merchantId = await consumeEmailToken(trx, input.token, 'reset', now);
    const merchant = merchantId ? await findMerchantById(trx, merchantId) : undefined;
    if (!merchant) return undefined;
    const emailVerifiedAt = merchant.emailVerifiedAt ?? now;
    await updateMerchant(trx, merchant.id, { passwordHash, emailVerifiedAt }, now);
    await deleteMerchantSessions(trx, merchant.id);
    await deleteMerchantEmailTokens(trx, merchant.id);
    return { merchant: { ...merchant, passwordHash, emailVerifiedAt }, sessionToken: await rotateSession(trx, merchant.id, input.previousToken, now) };
  });
  if (!result) throw invalid();
  deps.log.info({ merchant_id: result.merchant.id }, 'password reset; every other session revoked');
  return result;
}

/**
 * POST /me/password: the signed-in owner changes the password. The current password is checked
 * first (401 invalid_credential, naming current_password, when wrong; an account that only signs
 * in with Google has none and sets one with a reset link instead). The new hash replaces the old,
 * every other session and every outstanding emailed link of the account are revoked, and the
 * session that made the change stays signed in.
 */
export async function changePassword(deps: AppDeps, input: { merchantId: string; sessionHash: string; currentPassword: string; newPassword: string }): Promise<void> {
  const merchant = await findMerchantById(deps.db, input.merchantId);
  if (!merchant) throw new AppError('unauthorized', 'Sign in first: the account no longer exists');
  if (!(await checkPassword(merchant.passwordHash, input.currentPassword))) {
    throw new AppError('invalid_credential', 'The current password is wrong', [{ path: 'current_password', message: 'Wrong password' }]);
  }
  const passwordHash = await hashPassword(input.newPassword);
  const now = deps.clock.now();
  await writeTransaction(deps.db, async (trx) => {
    await updateMerchant(trx, merchant.id, { passwordHash }, now);
    await deleteMerchantSessions(trx, merchant.id, input.sessionHash);
    await deleteMerchantEmailTokens(trx, merchant.id);
  });
  deps.log.info({ merchant_id: merchant.id }, 'password changed; every other session revoked');
}

export async function logout(deps: AppDeps, token: string | undefined): Promise<void> {
  if (token) await deleteSession(deps.db, sha256Hex(token));
}

/** PATCH /me: the display name and the checkout's QR format. */
export async function updateMerchantSettings(deps: AppDeps, merchantId: string, changes: Pick<MerchantChanges, 'name' | 'checkoutQr'>): Promise<Merchant> {
  await updateMerchant(deps.db, merchantId, changes, deps.clock.now());
  const merchant = await findMerchantById(deps.db, merchantId);
  if (!merchant) throw new AppError('unauthorized', 'Sign in first: the account no longer exists');
  return merchant;
}
