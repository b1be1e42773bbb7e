/**
 * Sign-up, confirmation, sign-in and password reset (docs/api.md, Merchant accounts). No HTTP here:
 * the routes pass plain values and get domain objects or an AppError back.
 *
 * Invariants:
 * - Every path that answers for an email address costs one argon2id computation, whether or not
 *   the address has an account (no enumeration by timing or by answer).
 * - Registration of an unconfirmed address never changes its account: the password and name typed
 *   are stored with that registration (registrations.repo.ts), bound to its own confirmation link.
 *   Confirming gives the account that registration's password and name only when it is the only
 *   live registration of the address; with competing registrations the account is confirmed with
 *   no password, signed in, and mailed a reset link to choose one. So a password chosen by someone
 *   who never proved the mailbox never opens the account once its owner confirms it, whatever the
 *   order of registrations and mails (pre-registration hijacking).
 * - The password is bound to the browser that registered, too (registrationProof, kept in that
 *   browser's cookie): confirming keeps it only when the confirming request carries that proof. The
 *   owner of an address a stranger registered alone confirms from their own browser and gets no
 *   password; they choose one at once (setFirstPassword) or through the reset link mailed to them.
 * - A repeated registration answers exactly like a new one: `email_sent` is false only when the
 *   mail server refused this request's mail. Within the 5-minute limit of an address nothing is
 *   mailed (the link sent minutes ago stands) and the answer is still true, so it tells neither
 *   whether the address has an account nor whether someone registered it minutes ago.
 * - Mail to an address that has not been confirmed never carries a name typed by someone.
 * - Mails are sent after the transaction commits; transactions never wait on the network.
 */
import { writeTransaction } from '../db/database.js';
import { MINUTE } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { AppError } from '../lib/errors.js';
import type { Locale } from '../lib/i18n.js';
import { accountMailUrl, sendAccountMail, type AccountMailKind } from './account-mail.js';
import { countCredentials, revokeCredentials, type CredentialCounts } from './credentials.js';
import { consumeVerifyToken, deleteMerchantEmailTokens, issueVerifyToken } from './email-tokens.repo.js';
import {
  claimMailSlot,
  credentialVersionIs,
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
import { checkPassword, hashPassword, hashPasswordWithSalt } from './passwords.js';
import { consumeResetToken, findResetMerchant, recordResetRequest, voidMerchantResets } from './password-resets.repo.js';
import {
  deleteMerchantRegistrations,
  holdsRegistrationProof,
  insertRegistration,
  liveRegistrations,
  matchingRegistration,
  registrationProof,
  registrationSalt,
  renewRegistration,
} from './registrations.repo.js';
import { deleteMerchantSessions, deleteSession } from './sessions.repo.js';
import { rotateSession, type SignedIn } from './signed-in.js';
import { newId } from '../lib/ids.js';
import { twoFactorEnabled } from './two-factor.repo.js';
import { twoFactorRequired } from './two-factor.service.js';

const TWO_FACTOR = Symbol('two-factor');
import { normalizeMarkup } from '../pricing/pricing.service.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { mailer: Mailer };

/** At most one confirmation mail (and one "already registered" notice) per address per 5 minutes. */
export const MAIL_RESEND_GAP_MS = 5 * MINUTE;

export { rotateSession, type SignedIn } from './signed-in.js';

/** The registration name: the given one, else the part of the email before "@". */
export function defaultName(email: string, name: string | undefined): string {
  const given = name?.trim();
  return given ? given : normalizeEmail(email).split('@')[0]!.slice(0, 100);
}

/** The name a mail may greet with: the owner's, once the address is confirmed; none before. */
function greetingName(merchant: Merchant): string | null {
  return merchant.emailVerifiedAt === null ? null : merchant.name;
}

interface PlannedMail {
  kind: AccountMailKind;
  merchant: Merchant;
  slot: MailSlot;
  token?: string;
  registrationId?: string;
}

/** Sends a planned mail; a refused mail gives its resend slot back. Returns whether it was accepted. */
async function deliver(deps: Deps, mail: PlannedMail, locale: Locale, now: number): Promise<boolean> {
  const result = await sendAccountMail(deps, {
    kind: mail.kind,
    locale,
    to: mail.merchant.email,
    name: greetingName(mail.merchant),
    url: accountMailUrl(deps.config.server.public_url, mail.kind, mail.token),
  });
  if (!result.accepted) await releaseMailSlot(deps.db, mail.merchant.id, mail.slot, now);
  return result.accepted;
}

/** Runs a task once the current request's answer has left (the route knows when: see auth.routes.ts). */
export type AfterAnswer = (task: () => void) => void;

/**
 * Mails a reset link after the current request has been answered (the rendering and the SMTP
 * exchange never add to the answer's time).
 */
function sendResetMailLater(deps: Deps, merchant: Merchant, token: string, locale: Locale, after: AfterAnswer = setImmediate): void {
  after(() => {
    sendAccountMail(deps, {
      kind: 'reset',
      locale,
      to: merchant.email,
      name: greetingName(merchant),
      url: accountMailUrl(deps.config.server.public_url, 'reset', token),
    }).catch((err: unknown) => deps.log.error({ err, merchant_id: merchant.id }, 'reset mail failed'));
  });
}

export interface RegisterInput {
  email: string;
  password: string;
  name?: string;
  locale: Locale;
}

/**
 * New or unconfirmed address: a registration (password and name kept apart from the account) and,
 * within the address's 5-minute limit, its confirmation link. Confirmed address: a notice to the
 * owner, within the same limit. All three answer alike, within the limit or not; `emailSent` is
 * false only when the mail server refused this request's mail. `browserProof` goes into the registering browser's cookie: the proof of the
 * registration whose link was mailed, else that of an id never stored (the same 43 characters, so
 * the cookie tells nothing about the address either).
 */
export async function register(deps: Deps, input: RegisterInput): Promise<{ email: string; emailSent: boolean; browserProof: string }> {
  const email = normalizeEmail(input.email);
  const name = defaultName(email, input.name);
  const passwordHash = await hashPasswordWithSalt(input.password, registrationSalt(deps.config.server.secret, email));
  const now = deps.clock.now();
  const mail = await writeTransaction(deps.db, async (trx): Promise<PlannedMail | undefined> => {
    const existing = await findMerchantByEmail(trx, email);
    if (existing && existing.emailVerifiedAt !== null) {
      if (!(await claimMailSlot(trx, existing.id, 'exists_notice_sent_at', now, MAIL_RESEND_GAP_MS))) return undefined;
      return { kind: 'exists', merchant: existing, slot: 'exists_notice_sent_at' };
    }
    // Until its address is confirmed, the account has no password and no typed name of its own.
    const merchant = existing ?? (await insertMerchant(trx, { email, name: defaultName(email, undefined), passwordHash: null, emailVerifiedAt: null }, now));
    // Stored even when no mail can go now: a later confirmation must see that registrations compete.
    const registrationId = await insertRegistration(trx, merchant.id, { passwordHash, name, locale: input.locale }, now);
    if (!registrationId || !(await claimMailSlot(trx, merchant.id, 'verification_sent_at', now, MAIL_RESEND_GAP_MS))) return undefined;
    const token = await issueVerifyToken(trx, merchant.id, registrationId, now);
    return { kind: 'verify', merchant, slot: 'verification_sent_at', token, registrationId };
  });
  // Within the limit nothing goes out, and the answer is a new registration's: nothing was refused.
  const emailSent = mail ? await deliver(deps, mail, input.locale, now) : true;
  deps.log.info({ merchant_id: mail?.merchant.id, mail: mail?.kind ?? 'within_limit', email_sent: emailSent }, 'registration');
  return { email, emailSent, browserProof: registrationProof(deps.config.server.secret, mail?.registrationId ?? newId('reg')) };
}

export interface LoginInput {
  email: string;
  password: string;
  locale: Locale;
  previousToken: string | undefined;
}

/**
 * An unconfirmed account has no password: the password is checked against its live registrations.
 * They share the address's salt, so one argon2id hash is computed and compared with each (one
 * argon2id, like every sign-in, whatever their number). A match answers 403 email_not_verified and
 * mails, within the limit, a new link for that registration.
 */
async function unconfirmedLogin(deps: Deps, merchant: Merchant, input: LoginInput): Promise<never> {
  const now = deps.clock.now();
  const registrations = await liveRegistrations(deps.db, merchant.id, now);
  const hash = await hashPasswordWithSalt(input.password, registrationSalt(deps.config.server.secret, merchant.email));
  const matched = matchingRegistration(registrations, hash);
  if (!matched) throw new AppError('invalid_credential', 'Wrong email or password');
  if (deps.mailer.available) {
    const registration = matched;
    const token = await writeTransaction(deps.db, async (trx) => {
      if (!(await claimMailSlot(trx, merchant.id, 'verification_sent_at', now, MAIL_RESEND_GAP_MS))) return undefined;
      await renewRegistration(trx, registration.id, now);
      return issueVerifyToken(trx, merchant.id, registration.id, now);
    });
    if (token) await deliver(deps, { kind: 'verify', merchant, slot: 'verification_sent_at', token }, input.locale, now);
  }
  throw new AppError('email_not_verified', 'Confirm your email address first: use the link we emailed you');
}

/** 401 two_factor_required (with a challenge, no session) when the account has two-factor sign-in on; 401 invalid_credential for a wrong password or unknown address; 403 email_not_verified (and a new link, within the limit) when unconfirmed. */
export async function login(deps: Deps, input: LoginInput): Promise<SignedIn> {
  const found = await findMerchantByEmail(deps.db, input.email);
  if (found && found.emailVerifiedAt === null) return unconfirmedLogin(deps, found, input);
  const ok = await checkPassword(found?.passwordHash ?? null, input.password);
  if (!found || !ok) throw new AppError('invalid_credential', 'Wrong email or password');
  const now = deps.clock.now();
  const sessionToken = await writeTransaction(deps.db, async (trx) => {
    // The password was checked outside this transaction (one argon2id): a reset or change that
    // committed meanwhile made that check stale, and no session may come of it.
    if (!(await credentialVersionIs(trx, found.id, found.credentialVersion))) return undefined;
    await setMerchantLocale(trx, found.id, input.locale);
    // With two-factor sign-in on, the password step makes no session: a challenge asks for the code.
    if (await twoFactorEnabled(trx, found.id)) return TWO_FACTOR;
    return rotateSession(trx, found.id, input.previousToken, now);
  });
  if (!sessionToken) throw new AppError('invalid_credential', 'Wrong email or password');
  if (sessionToken === TWO_FACTOR) throw twoFactorRequired(deps, found, now);
  deps.log.info({ merchant_id: found.id }, 'signed in');
  return { merchant: found, sessionToken };
}

export interface Confirmed extends SignedIn {
  /** False when the account has no password (a reset link was mailed; the owner may also set one now). */
  passwordSet: boolean;
}

/**
 * Confirms the address of the link's account and signs in. The account gets the password and name
 * of the link's registration when it is the address's only live registration and the request comes
 * from the browser that made it (`browserProof`, the registration cookie); otherwise none (and a
 * reset link is mailed so that the owner chooses one). 400 invalid_token for a used, replaced,
 * expired or unknown link.
 */
export async function verifyEmail(deps: Deps, token: string, previousToken: string | undefined, browserProof?: string): Promise<Confirmed> {
  const now = deps.clock.now();
  const result = await writeTransaction(deps.db, async (trx) => {
    const link = await consumeVerifyToken(trx, token, now);
    const merchant = link ? await findMerchantById(trx, link.merchantId) : undefined;
    if (!link || !merchant) return undefined;
    if (merchant.emailVerifiedAt !== null) {
      // Confirmed meanwhile by other means (their links are deleted then): signs in, changes nothing.
      const sessionToken = await rotateSession(trx, merchant.id, previousToken, now);
      return { merchant, passwordSet: merchant.passwordHash !== null, sessionToken, resetToken: undefined, locale: 'en' as Locale, registrations: 0 };
    }
    const live = await liveRegistrations(trx, merchant.id, now);
    const alone = live.length === 1 && live[0]!.id === link.registrationId ? live[0] : undefined;
    const own = alone && holdsRegistrationProof(deps.config.server.secret, alone.id, browserProof) ? alone : undefined;
    const confirmed: Merchant = { ...merchant, emailVerifiedAt: now, passwordHash: own?.passwordHash ?? null, name: own?.name ?? merchant.name };
    await updateMerchant(trx, merchant.id, { emailVerifiedAt: now, passwordHash: confirmed.passwordHash, name: confirmed.name }, now);
    const clicked = live.find((r) => r.id === link.registrationId);
    await deleteMerchantRegistrations(trx, merchant.id);
    await deleteMerchantEmailTokens(trx, merchant.id);
    const resetToken = own ? undefined : await recordResetRequest(trx, merchant.email, merchant.id, now, true);
    const sessionToken = await rotateSession(trx, merchant.id, previousToken, now);
    return {
      merchant: confirmed,
      passwordSet: own !== undefined,
      sessionToken,
      resetToken,
      locale: clicked?.locale ?? ('en' as Locale),
      registrations: live.length,
    };
  });
  if (!result) throw new AppError('invalid_token', 'This confirmation link is invalid, used, replaced by a newer one, or expired');
  if (result.resetToken) sendResetMailLater(deps, result.merchant, result.resetToken, result.locale);
  deps.log.info({ merchant_id: result.merchant.id, password_set: result.passwordSet, registrations: result.registrations }, 'email confirmed');
  return { merchant: result.merchant, sessionToken: result.sessionToken, passwordSet: result.passwordSet };
}

/**
 * Records the request and mails a reset link when the address has an account, at most once per
 * address every 5 minutes. Both cases do the same database work before answering (one write to
 * the address's row of password_resets), and the mail leaves after the answer, so neither the
 * reply nor its timing tells whether the account exists.
 */
export async function forgotPassword(deps: Deps, input: { email: string; locale: Locale }, after: AfterAnswer = setImmediate): Promise<void> {
  const now = deps.clock.now();
  const planned = await writeTransaction(deps.db, async (trx) => {
    const merchant = await findMerchantByEmail(trx, input.email);
    const token = await recordResetRequest(trx, input.email, merchant?.id ?? null, now);
    return merchant && token ? { merchant, token } : undefined;
  });
  if (planned) sendResetMailLater(deps, planned.merchant, planned.token, input.locale, after);
}

const invalidResetLink = () => new AppError('invalid_token', 'This reset link is invalid, used, replaced by a newer one, or expired');

/** What a reset may revoke besides sessions; shown only to the holder of a live reset link. */
export async function resetPreview(deps: Deps, token: string): Promise<CredentialCounts> {
  const now = deps.clock.now();
  const merchantId = await findResetMerchant(deps.db, token, now);
  if (!merchantId) throw invalidResetLink();
  return countCredentials(deps.db, merchantId, now);
}

export interface ResetInput {
  token: string;
  password: string;
  /** Also revoke every API key and deactivate every webhook of the account. */
  revokeKeysAndWebhooks: boolean;
  previousToken: string | undefined;
}

/**
 * Sets the new password, confirms the address, revokes every session, every outstanding link and
 * registration of the account (and, when asked, every API key and webhook), and signs in with a
 * new session. The link is the authority: it is used up inside the write transaction, and the
 * write bumps the account's credential version, so a sign-in or password change that checked the
 * old password concurrently commits before it (and is revoked by it) or not at all. A change does
 * not void a reset link, so an owner's reset always wins over a change made with a stolen password.
 *
 * With two-factor sign-in on, the link is only the first step, like a password: the password is
 * set and the sessions end, but no session starts and nothing else is revoked yet: it answers 401
 * two_factor_required with a challenge (of the new credential version) for POST /auth/login/two-factor,
 * which carries the request to revoke the API keys and webhooks and does it with the code. A reset
 * link, that is the mailbox alone, thus never opens a two-factor account.
 */
export async function resetPassword(deps: Deps, input: ResetInput): Promise<SignedIn & { revoked: CredentialCounts }> {
  // Cheap check first: hashing is expensive, and a bad token must not cost an argon2id run.
  if (!(await findResetMerchant(deps.db, input.token, deps.clock.now()))) throw invalidResetLink();
  const passwordHash = await hashPassword(input.password);
  const now = deps.clock.now();
  const result = await writeTransaction(deps.db, async (trx) => {
    const merchantId = await consumeResetToken(trx, input.token, now);
    const merchant = merchantId ? await findMerchantById(trx, merchantId) : undefined;
    if (!merchant) return undefined;
    const emailVerifiedAt = merchant.emailVerifiedAt ?? now;
    await updateMerchant(trx, merchant.id, { passwordHash, emailVerifiedAt }, now);
    await deleteMerchantSessions(trx, merchant.id);
    await deleteMerchantEmailTokens(trx, merchant.id);
    await deleteMerchantRegistrations(trx, merchant.id);
    await voidMerchantResets(trx, merchant.id);
    const updated = (await findMerchantById(trx, merchant.id))!;
    if (await twoFactorEnabled(trx, merchant.id)) return { merchant: updated, twoFactor: true as const };
    const revoked = input.revokeKeysAndWebhooks ? await revokeCredentials(trx, merchant.id, now) : { apiKeys: 0, webhooks: 0 };
    return { merchant: updated, revoked, sessionToken: await rotateSession(trx, merchant.id, input.previousToken, now) };
  });
  if (!result) throw invalidResetLink();
  if ('twoFactor' in result) {
    deps.log.info({ merchant_id: result.merchant.id }, 'password reset; every session revoked; two-factor code asked before any session');
    throw twoFactorRequired(deps, result.merchant, now, input.revokeKeysAndWebhooks ? 'revoke_credentials' : 'sign_in');
  }
  deps.log.info(
    { merchant_id: result.merchant.id, revoked_api_keys: result.revoked.apiKeys, revoked_webhooks: result.revoked.webhooks },
    'password reset; every other session revoked',
  );
  return result;
}

export async function logout(deps: Deps, token: string | undefined): Promise<void> {
  if (token) await deleteSession(deps.db, sha256Hex(token));
}

/** PATCH /me: the display name, the checkout's QR format and the markup on fiat prices. */
export async function updateMerchantSettings(
  deps: Deps,
  merchantId: string,
  changes: Pick<MerchantChanges, 'name' | 'checkoutQr' | 'markupPercent'>,
): Promise<Merchant> {
  const markupPercent = changes.markupPercent === undefined ? undefined : normalizeMarkup(changes.markupPercent);
  await updateMerchant(deps.db, merchantId, { ...changes, markupPercent }, deps.clock.now());
  const merchant = await findMerchantById(deps.db, merchantId);
  if (!merchant) throw new AppError('unauthorized', 'Sign in first: the account no longer exists');
  return merchant;
}
