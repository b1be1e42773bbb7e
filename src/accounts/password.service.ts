/**
 * The signed-in owner's password: setting a first one (POST /auth/password/set) and changing it
 * (POST /me/password). No HTTP here.
 *
 * Invariants (docs/security.md, Credential changes):
 * - The password is checked and the new one hashed outside the write transaction (one argon2id
 *   each); the write commits only if, inside its transaction, the asking session is still current
 *   and the account's credential version is the one read before the check. A reset that commits
 *   in between therefore always wins.
 * - A change bumps the credential version: every other session ends, and the asking session is
 *   carried over to the new version in the same transaction.
 * - Both need a recent sign-in: the session must have been made (by a sign-in, a confirmation, a
 *   reset or Google) within RECENT_SIGN_IN_MS, else 403 recent_sign_in_required. A stolen session
 *   alone therefore cannot become a lasting credential. The owner is mailed about both, in their
 *   locale, after the change commits.
 */
import { writeTransaction } from '../db/database.js';
import { MINUTE } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { resolveLocale } from '../lib/i18n.js';
import { accountMailUrl, sendAccountMail, type PasswordNoticeKind } from './account-mail.js';
import { deleteMerchantEmailTokens } from './email-tokens.repo.js';
import { credentialVersionIs, findMerchantById, setPasswordIfNone, updateMerchant, type Merchant } from './merchants.repo.js';
import { checkPassword, hashPassword } from './passwords.js';
import { voidMerchantResets } from './password-resets.repo.js';
import { carrySession, deleteMerchantSessions, requireCurrentSession } from './sessions.repo.js';
import type { Db, Trx } from '../db/database.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { mailer: Mailer };

/** How recent the sign-in behind a session must be to add or change a password. */
export const RECENT_SIGN_IN_MS = 10 * MINUTE;

const RECENT_SIGN_IN_FOR = {
  password: 'adding or changing a password',
  two_factor: 'setting up or turning off two-factor sign-in',
} as const;

/** The asking session, live and current, made by a sign-in within RECENT_SIGN_IN_MS. */
export async function requireRecentSignIn(trx: Db | Trx, sessionHash: string, now: number, what: keyof typeof RECENT_SIGN_IN_FOR = 'password'): Promise<void> {
  const session = await requireCurrentSession(trx, sessionHash, now);
  if (now - session.createdAt > RECENT_SIGN_IN_MS) {
    throw new AppError('recent_sign_in_required', `Sign in again first: ${RECENT_SIGN_IN_FOR[what]} needs a sign-in within the last 10 minutes`);
  }
}

/** Tells the owner, in their locale, that a password was added or changed (best effort, after the commit). */
function notifyOwner(deps: Deps, merchant: Merchant, kind: PasswordNoticeKind): void {
  if (!deps.mailer.available) return;
  sendAccountMail(deps, {
    kind,
    locale: resolveLocale(merchant.locale ?? undefined),
    to: merchant.email,
    name: merchant.name,
    url: accountMailUrl(deps.config.server.public_url, kind),
  }).catch((err: unknown) => deps.log.error({ err, merchant_id: merchant.id }, 'password notice mail failed'));
}

/** The signed-in owner asking: their account and the hash of their session's token. */
export interface OwnerSession {
  merchantId: string;
  sessionHash: string;
}

/**
 * Gives a signed-in account that has no password its first one (after a confirmation that kept
 * none, or a Google sign-in). Never replaces a password: 409 password_already_set (changing one
 * goes through POST /me/password or a reset link). Outstanding reset links stop working; sessions stay.
 */
export async function setFirstPassword(deps: Deps, owner: OwnerSession, password: string): Promise<Merchant> {
  // Checked first (no argon2id for a stale session), and again where the password is written.
  await requireRecentSignIn(deps.db, owner.sessionHash, deps.clock.now());
  const passwordHash = await hashPassword(password);
  const now = deps.clock.now();
  const merchant = await writeTransaction(deps.db, async (trx) => {
    await requireRecentSignIn(trx, owner.sessionHash, now);
    if (!(await setPasswordIfNone(trx, owner.merchantId, passwordHash, now))) return undefined;
    await voidMerchantResets(trx, owner.merchantId);
    return findMerchantById(trx, owner.merchantId);
  });
  if (!merchant) throw new AppError('password_already_set', 'This account already has a password; change it with POST /me/password or a reset link');
  deps.log.info({ merchant_id: owner.merchantId }, 'first password set');
  notifyOwner(deps, merchant, 'password_set');
  return merchant;
}

/**
 * POST /me/password: the current password is checked first (401 invalid_credential, naming
 * current_password, when wrong; an account that only signs in with Google has none). The new hash
 * replaces the old, every other session and every outstanding confirmation link are revoked, and
 * the session that made the change stays signed in. Reset links stay valid (see above).
 */
export async function changePassword(deps: Deps, owner: OwnerSession, input: { currentPassword: string; newPassword: string }): Promise<void> {
  const merchant = await findMerchantById(deps.db, owner.merchantId);
  if (!merchant) throw new AppError('unauthorized', 'Sign in first: the account no longer exists');
  await requireRecentSignIn(deps.db, owner.sessionHash, deps.clock.now());
  const wrong = () => new AppError('invalid_credential', 'The current password is wrong', [{ path: 'current_password', message: 'Wrong password' }]);
  if (!(await checkPassword(merchant.passwordHash, input.currentPassword))) throw wrong();
  const passwordHash = await hashPassword(input.newPassword);
  const now = deps.clock.now();
  await writeTransaction(deps.db, async (trx) => {
    await requireRecentSignIn(trx, owner.sessionHash, now);
    // The current password was checked against this version; a change or reset since made it stale.
    if (!(await credentialVersionIs(trx, merchant.id, merchant.credentialVersion))) throw wrong();
    await updateMerchant(trx, merchant.id, { passwordHash }, now);
    await deleteMerchantSessions(trx, merchant.id, owner.sessionHash);
    await carrySession(trx, owner.sessionHash);
    await deleteMerchantEmailTokens(trx, merchant.id);
  });
  deps.log.info({ merchant_id: merchant.id }, 'password changed; every other session revoked');
  notifyOwner(deps, merchant, 'password_changed');
}
