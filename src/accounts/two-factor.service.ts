/**
 * Two-factor sign-in (TOTP, RFC 6238; docs/security.md, Two-factor sign-in). No HTTP here.
 *
 * Invariants:
 * - The TOTP arithmetic is the otpauth library's; the time is deps.clock's.
 * - A code is accepted at most once: the accepted time step is stored, and a code of that step or
 *   an earlier one is refused (the check and the write are one conditional UPDATE inside the
 *   write transaction, so two concurrent requests with one code cannot both pass).
 * - A password or Google sign-in of an account with 2FA on creates no session: it answers 401
 *   two_factor_required with a signed challenge (HMAC under a key derived from server.secret) that
 *   names the account, its credential version and an expiry. The session is created only by
 *   completeTwoFactorSignIn, in the transaction that checks the code and that the credential
 *   version is still the challenge's (a reset or password change meanwhile voids the challenge).
 * - A password reset keeps 2FA and, like the password step, makes no session: it sets the password,
 *   ends every session and answers two_factor_required (resetPassword). Its request to revoke the
 *   API keys and webhooks rides in the challenge and is carried out only with the code.
 * - A recovery code (single use) signs in in place of a code and may turn 2FA off. Turning it off needs a current code or a recovery code and a recent sign-in.
 */
import { Secret, TOTP } from 'otpauth';
import { writeTransaction } from '../db/database.js';
import { MINUTE } from '../lib/clock.js';
import { hmacSha256Hex, safeEqual } from '../lib/crypto.js';
import { AppError } from '../lib/errors.js';
import type { Locale } from '../lib/i18n.js';
import { rotateSession, type SignedIn } from './signed-in.js';
import { revokeCredentials, type CredentialCounts } from './credentials.js';
import { credentialVersionIs, findMerchantById, setMerchantLocale, type Merchant } from './merchants.repo.js';
import { requireRecentSignIn } from './password.service.js';
import {
  acceptStep,
  confirmTwoFactor,
  decryptSecret,
  derivedKey,
  encryptSecret,
  findTwoFactor,
  newRecoveryCode,
  removeTwoFactor,
  savePendingSecret,
  spendRecoveryCode,
  twoFactorEnabled,
  unusedRecoveryCodes,
} from './two-factor.repo.js';
import type { Trx } from '../db/database.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'>;

export const TOTP_PERIOD_SECONDS = 30;
/** Codes of the previous and next 30-second step are accepted too (clock drift of the phone). */
export const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;
/** How long a sign-in challenge (the password or Google step done) waits for its code. */
export const CHALLENGE_LIFETIME_MS = 5 * MINUTE;

function totpFor(merchant: Merchant, secret: Secret): TOTP {
  return new TOTP({ issuer: 'gatewayd', label: merchant.email, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD_SECONDS, secret });
}

// Sign-in challenges

const challengeKey = (deps: Deps) => derivedKey(deps.config.server.secret, 'gatewayd two-factor challenge v1');

/**
 * What a completed challenge does besides signing in: a reset of a two-factor account asked to
 * revoke the account's API keys and webhooks does it only once the code is accepted, so that a
 * reset link alone (the mailbox alone) can neither sign in nor revoke.
 */
export type ChallengeIntent = 'sign_in' | 'revoke_credentials';

/**
 * "merchantId.credentialVersion.expiresAt.signature", or with ".revoke" before the signature for
 * the revoke_credentials intent: the first step of a sign-in (a password, Google or a reset link), done.
 */
export function issueChallenge(deps: Deps, merchant: Merchant, now: number, intent: ChallengeIntent = 'sign_in'): string {
  const payload = `${merchant.id}.${merchant.credentialVersion}.${now + CHALLENGE_LIFETIME_MS}${intent === 'revoke_credentials' ? '.revoke' : ''}`;
  return `${payload}.${hmacSha256Hex(challengeKey(deps), payload)}`;
}

const expiredChallenge = () => new AppError('invalid_token', 'This sign-in step expired or is not valid; sign in again with your password');

export interface Challenge {
  merchantId: string;
  credentialVersion: number;
  intent: ChallengeIntent;
}

/** The account, credential version and intent a valid, unexpired challenge names; 400 invalid_token otherwise. */
export function readChallenge(deps: Deps, challenge: string, now: number): Challenge {
  const parts = challenge.split('.');
  if (parts.length !== 4 && !(parts.length === 5 && parts[3] === 'revoke')) throw expiredChallenge();
  const signature = parts.pop()!;
  const [merchantId, version, expiresAt] = parts as [string, string, string];
  if (!safeEqual(signature, hmacSha256Hex(challengeKey(deps), parts.join('.')))) throw expiredChallenge();
  if (!(Number(expiresAt) > now)) throw expiredChallenge();
  return { merchantId, credentialVersion: Number(version), intent: parts.length === 4 ? 'revoke_credentials' : 'sign_in' };
}

/** 401 two_factor_required carrying the challenge the second call presents. */
export function twoFactorRequired(deps: Deps, merchant: Merchant, now: number, intent: ChallengeIntent = 'sign_in'): AppError {
  return new AppError('two_factor_required', 'Enter the 6-digit code of your authenticator app (or a recovery code)').withChallenge(
    issueChallenge(deps, merchant, now, intent),
  );
}

// Checking a code

const wrongCode = () => new AppError('invalid_credential', 'The code is wrong or was already used', [{ path: 'code', message: 'Wrong or used code' }]);

/**
 * Inside a write transaction: accepts a current TOTP code of the account (recording its step) or
 * one of its unused recovery codes (spending it), else 401 invalid_credential naming `code`.
 */
async function acceptCode(trx: Trx, deps: Deps, merchant: Merchant, code: string, now: number): Promise<'totp' | 'recovery'> {
  const row = await findTwoFactor(trx, merchant.id);
  const plain = row ? decryptSecret(deps.config.server.secret, merchant.id, row.secretEnc) : undefined;
  if (!row || plain === undefined) throw wrongCode();
  const digits = code.replace(/\s/g, '');
  if (/^\d{6}$/.test(digits)) {
    const delta = totpFor(merchant, Secret.fromBase32(plain)).validate({ token: digits, timestamp: now, window: TOTP_WINDOW });
    if (delta === null) throw wrongCode();
    const step = TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: now }) + delta;
    if (!(await acceptStep(trx, merchant.id, step))) throw wrongCode();
    return 'totp';
  }
  if (row.confirmedAt !== null && (await spendRecoveryCode(trx, merchant.id, code, now))) return 'recovery';
  throw wrongCode();
}

async function merchantOrFail(deps: Deps, merchantId: string): Promise<Merchant> {
  const merchant = await findMerchantById(deps.db, merchantId);
  if (!merchant) throw new AppError('unauthorized', 'Sign in first: the account no longer exists');
  return merchant;
}

// Sign-in, second step

/**
 * Completes a sign-in with the challenge and a code; the session is created only here. A challenge
 * of a reset that asked to revoke the API keys and webhooks revokes them in the same transaction.
 */
export async function completeTwoFactorSignIn(
  deps: Deps,
  input: { challenge: string; code: string; locale: Locale | undefined; previousToken: string | undefined },
): Promise<SignedIn & { via: 'totp' | 'recovery'; revoked: CredentialCounts | undefined }> {
  const now = deps.clock.now();
  const { merchantId, credentialVersion, intent } = readChallenge(deps, input.challenge, now);
  const result = await writeTransaction(deps.db, async (trx) => {
    const merchant = await findMerchantById(trx, merchantId);
    // A reset or password change after the first step voids it.
    if (!merchant || !(await credentialVersionIs(trx, merchant.id, credentialVersion))) throw expiredChallenge();
    if (!(await twoFactorEnabled(trx, merchant.id))) throw expiredChallenge();
    const via = await acceptCode(trx, deps, merchant, input.code, now);
    if (input.locale) await setMerchantLocale(trx, merchant.id, input.locale);
    const revoked = intent === 'revoke_credentials' ? await revokeCredentials(trx, merchant.id, now) : undefined;
    return { merchant, via, revoked, sessionToken: await rotateSession(trx, merchant.id, input.previousToken, now) };
  });
  deps.log.info(
    { merchant_id: merchantId, two_factor: result.via, revoked_api_keys: result.revoked?.apiKeys, revoked_webhooks: result.revoked?.webhooks },
    'signed in with two-factor',
  );
  return result;
}

// The owner's settings

export interface TwoFactorStatus {
  enabled: boolean;
  recoveryCodesLeft: number;
}

export async function twoFactorStatus(deps: Deps, merchantId: string): Promise<TwoFactorStatus> {
  const enabled = await twoFactorEnabled(deps.db, merchantId);
  return { enabled, recoveryCodesLeft: enabled ? await unusedRecoveryCodes(deps.db, merchantId) : 0 };
}

const alreadyOn = () => new AppError('two_factor_already_enabled', 'Two-factor sign-in is already on; turn it off first to set up a new authenticator');

/**
 * Starts setup: a new 160-bit secret, stored encrypted and pending (not asked at sign-in until
 * confirmed). Returns the secret and its otpauth:// URI, shown once. Needs a recent sign-in.
 */
export async function beginSetup(deps: Deps, owner: { merchantId: string; sessionHash: string }): Promise<{ secret: string; uri: string }> {
  const merchant = await merchantOrFail(deps, owner.merchantId);
  const secret = new Secret({ size: 20 });
  const now = deps.clock.now();
  await writeTransaction(deps.db, async (trx) => {
    await requireRecentSignIn(trx, owner.sessionHash, now, 'two_factor');
    if (await twoFactorEnabled(trx, merchant.id)) throw alreadyOn();
    await savePendingSecret(trx, merchant.id, encryptSecret(deps.config.server.secret, merchant.id, secret.base32), now);
  });
  return { secret: secret.base32, uri: totpFor(merchant, secret).toString() };
}

/** Confirms setup with a first code: 2FA is on, and the ten recovery codes are returned (shown once). */
export async function confirmSetup(deps: Deps, owner: { merchantId: string; sessionHash: string }, code: string): Promise<string[]> {
  const merchant = await merchantOrFail(deps, owner.merchantId);
  const now = deps.clock.now();
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await writeTransaction(deps.db, async (trx) => {
    await requireRecentSignIn(trx, owner.sessionHash, now, 'two_factor');
    const row = await findTwoFactor(trx, merchant.id);
    if (row?.confirmedAt != null) throw alreadyOn();
    if (!row) throw new AppError('two_factor_not_enabled', 'Start the setup first (POST /me/two-factor/setup)');
    if ((await acceptCode(trx, deps, merchant, code, now)) !== 'totp') throw wrongCode();
    await confirmTwoFactor(trx, merchant.id, now, codes);
  });
  deps.log.info({ merchant_id: merchant.id }, 'two-factor sign-in turned on');
  return codes;
}

/** Turns 2FA off with a current code or a recovery code; needs a recent sign-in. */
export async function disableTwoFactor(deps: Deps, owner: { merchantId: string; sessionHash: string }, code: string): Promise<void> {
  const merchant = await merchantOrFail(deps, owner.merchantId);
  const now = deps.clock.now();
  await writeTransaction(deps.db, async (trx) => {
    await requireRecentSignIn(trx, owner.sessionHash, now, 'two_factor');
    if (!(await twoFactorEnabled(trx, merchant.id))) throw new AppError('two_factor_not_enabled', 'Two-factor sign-in is not on');
    await acceptCode(trx, deps, merchant, code, now);
    await removeTwoFactor(trx, merchant.id);
  });
  deps.log.info({ merchant_id: merchant.id }, 'two-factor sign-in turned off');
}
