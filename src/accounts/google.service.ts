/**
 * Sign-in with Google (docs/api.md, Merchant accounts): the ID token is verified with jose against the
 * configured JWKS (RS256, issuer, audience = client id, expiry) and must say `email_verified`.
 * Then, by the spec's rules: a known Google subject signs in; a confirmed account with the same
 * email is linked; an unconfirmed one is claimed (its password stops working and its sessions and
 * links are revoked, since whoever set that password never proved the address); else a new account.
 */
import type { createRemoteJWKSet, JWTPayload } from 'jose';
import { writeTransaction } from '../db/database.js';
import { emailAddress } from '../lib/email-address.js';
import { AppError } from '../lib/errors.js';
import { defaultName, rotateSession, type SignedIn } from './auth.service.js';
import { deleteMerchantEmailTokens } from './email-tokens.repo.js';
import { deleteMerchantRegistrations } from './registrations.repo.js';
import { findMerchantByEmail, findMerchantByGoogleSub, insertMerchant, normalizeEmail, updateMerchant } from './merchants.repo.js';
import { deleteMerchantSessions } from './sessions.repo.js';
import { twoFactorEnabled } from './two-factor.repo.js';
import { twoFactorRequired } from './two-factor.service.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'>;

export interface GoogleIdentity {
  sub: string;
  email: string;
  name: string | undefined;
}

export type GoogleVerifier = (credential: string) => Promise<GoogleIdentity>;

type Jose = typeof import('jose');
/**
 * jose is loaded on the first Google sign-in, not at start: it is several MB of resident memory
 * that a server without Google sign-in (or before anyone uses it) never needs.
 */
let jose: Promise<Jose> | undefined;
const loadJose = (): Promise<Jose> => (jose ??= import('jose'));

/** Errors that mean "this credential is not acceptable" (401); anything else is the key fetch failing (503). */
const credentialErrors = ({ errors }: Jose) => [
  errors.JWSInvalid,
  errors.JWTInvalid,
  errors.JWTClaimValidationFailed,
  errors.JWTExpired,
  errors.JWSSignatureVerificationFailed,
  errors.JWKSNoMatchingKey,
  errors.JWKSMultipleMatchingKeys,
  errors.JOSEAlgNotAllowed,
  errors.JOSENotSupported,
  errors.JWKInvalid,
];

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

/** One verifier per app: it keeps the fetched keys (jose caches them for 10 minutes). */
export function createGoogleVerifier(deps: Deps): GoogleVerifier {
  const { client_id, jwks_url, issuers } = deps.config.google;
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  return async (credential) => {
    if (!client_id) throw new AppError('identity_provider_unavailable', 'Sign-in with Google is not configured on this server');
    const lib = await loadJose();
    keys ??= lib.createRemoteJWKSet(new URL(jwks_url), { timeoutDuration: 5000 });
    let payload: JWTPayload;
    try {
      ({ payload } = await lib.jwtVerify(credential, keys, {
        algorithms: ['RS256'],
        issuer: issuers,
        audience: client_id,
        currentDate: new Date(deps.clock.now()),
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      if (credentialErrors(lib).some((cls) => err instanceof cls)) {
        deps.log.info({ reason: (err as { code?: string }).code ?? 'invalid' }, 'google credential refused');
        throw new AppError('invalid_credential', 'The Google credential is not valid');
      }
      deps.log.warn({ reason: (err as Error).message }, 'google signing keys unavailable');
      throw new AppError('identity_provider_unavailable', 'Google sign-in is temporarily unavailable; try again');
    }
    const verified = payload.email_verified === true || payload.email_verified === 'true';
    if (!verified || typeof payload.email !== 'string' || !EMAIL_RE.test(payload.email) || payload.email.length > 254 || !payload.sub) {
      throw new AppError('invalid_credential', 'The Google account has no verified email address');
    }
    // The rule of registration, sign-in and reset (the same schema): in particular an address that
    // Unicode normalisation or case folding would change is refused, never folded into another.
    if (!emailAddress().safeParse(payload.email).success) {
      deps.log.info({ reason: 'email_not_canonical' }, 'google credential refused');
      throw new AppError('invalid_credential', 'This Google account has an email address this server does not accept (as at registration)');
    }
    return { sub: payload.sub, email: normalizeEmail(payload.email), name: typeof payload.name === 'string' ? payload.name : undefined };
  };
}

export async function googleSignIn(deps: Deps, identity: GoogleIdentity, previousToken: string | undefined): Promise<SignedIn & { created: boolean }> {
  const now = deps.clock.now();
  const result = await writeTransaction(deps.db, async (trx) => {
    const linked = await findMerchantByGoogleSub(trx, identity.sub);
    // With two-factor sign-in on, Google is the first step only (and an unlinked account stays unlinked until a later sign-in completes).
    if (linked && (await twoFactorEnabled(trx, linked.id))) throw twoFactorRequired(deps, linked, now);
    if (linked) return { merchant: linked, created: false, how: 'signed_in', sessionToken: await rotateSession(trx, linked.id, previousToken, now) };
    const existing = await findMerchantByEmail(trx, identity.email);
    if (existing) {
      // Already linked to another Google account with this address (Google recycles addresses rarely): refuse.
      if (existing.googleSub !== null) return undefined;
      if (existing.emailVerifiedAt !== null) {
        if (await twoFactorEnabled(trx, existing.id)) throw twoFactorRequired(deps, existing, now);
        await updateMerchant(trx, existing.id, { googleSub: identity.sub }, now);
        const merchant = { ...existing, googleSub: identity.sub };
        return { merchant, created: false, how: 'linked', sessionToken: await rotateSession(trx, existing.id, previousToken, now) };
      }
      await updateMerchant(trx, existing.id, { googleSub: identity.sub, emailVerifiedAt: now, passwordHash: null }, now);
      await deleteMerchantSessions(trx, existing.id);
      await deleteMerchantEmailTokens(trx, existing.id);
      await deleteMerchantRegistrations(trx, existing.id);
      const merchant = { ...existing, googleSub: identity.sub, emailVerifiedAt: now, passwordHash: null };
      return { merchant, created: false, how: 'claimed', sessionToken: await rotateSession(trx, existing.id, previousToken, now) };
    }
    const merchant = await insertMerchant(
      trx,
      {
        email: identity.email,
        name: defaultName(identity.email, identity.name?.slice(0, 100)),
        passwordHash: null,
        emailVerifiedAt: now,
        googleSub: identity.sub,
      },
      now,
    );
    return { merchant, created: true, how: 'created', sessionToken: await rotateSession(trx, merchant.id, previousToken, now) };
  });
  if (!result) throw new AppError('invalid_credential', 'This email address belongs to an account linked to another Google account');
  deps.log.info({ merchant_id: result.merchant.id, google: result.how }, 'signed in with Google');
  return { merchant: result.merchant, created: result.created, sessionToken: result.sessionToken };
}
