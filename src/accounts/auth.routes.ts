/**
 * /auth/*: public operations of the owner console's sign-in (docs/api.md, Merchant accounts).
 *
 * Login CSRF: every /auth/* request that carries an Origin header must carry the public origin
 * (browsers always send Origin on cross-site POSTs, so a foreign page cannot sign a visitor into
 * an attacker's account, nor confirm, reset or log out on their behalf). A request without Origin
 * is a non-browser client and is allowed, except logout with a session cookie, which follows the
 * session Origin rule.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import {
  checkOrigin,
  clearSessionCookie,
  cookieName,
  foreignOrigin,
  httpOnlyCookieOptions,
  optionalSession,
  requireSession,
  sessionHashOf,
  sessionToken,
  setSessionCookie,
} from '../http/auth.js';
import { requireCaptcha } from '../http/captcha.js';
import { clientIp, rateLimitSubject } from '../http/client-ip.js';
import type { AppEnv } from '../http/context.js';
import { createRouter, EmptyBody, errorResponses, jsonBody, jsonResponse, optionalJsonBody, SuccessSchema } from '../http/openapi.js';
import { AppError } from '../lib/errors.js';
import { resolveLocale } from '../lib/i18n.js';
import {
  ForgotBody,
  GoogleBody,
  LoginBody,
  MerchantEnvelope,
  RegisterBody,
  RegisterResponse,
  ResetBody,
  ResetPreview,
  ResetPreviewBody,
  ResetResponse,
  SessionStatus,
  SetPasswordBody,
  toMerchantResponse,
  VerifyEmailBody,
  VerifyEmailResponse,
} from './accounts.schemas.js';
import { type AfterAnswer, forgotPassword, login, logout, register, resetPassword, resetPreview, verifyEmail } from './auth.service.js';
import { setFirstPassword } from './password.service.js';
import { REGISTRATION_LIFETIME_MS } from './registrations.repo.js';
import { createGoogleVerifier, googleSignIn } from './google.service.js';
import { normalizeEmail } from './merchants.repo.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & { mailer: Mailer };

const tags = ['Authentication'];

/**
 * The registering browser's proof of its registration (see registrations.repo.ts), unreadable by
 * scripts and gone when the registration would be. With an https public_url it is
 * `__Host-gw_reg` (cookieName), which needs Path=/; on plain http (local use) `gw_reg`, sent only
 * to the confirmation endpoint.
 */
export const REGISTRATION_COOKIE = 'gw_reg';
const REGISTRATION_COOKIE_PATH = '/api/v1/auth/verify-email';

const registrationCookieOptions = (deps: Deps) =>
  httpOnlyCookieOptions(deps, deps.config.secureCookies ? '/' : REGISTRATION_COOKIE_PATH, REGISTRATION_LIFETIME_MS);

/** Per-address (and per-email) limits of one operation; unknown emails count exactly like known ones. */
async function limit(c: Context<AppEnv>, deps: Deps, operation: string, email?: string): Promise<string> {
  const ip = clientIp(c, deps.config.server.trust_proxy);
  await deps.rateLimiter.consume(`${operation}:ip`, rateLimitSubject(ip), deps.config.rate_limits.auth_per_ip, { context: c });
  if (email !== undefined) await deps.rateLimiter.consume(`${operation}:email`, normalizeEmail(email), deps.config.rate_limits.auth_per_email, { context: c });
  return ip;
}

/**
 * Defers a task until the answer has been written to the socket (or the client went away), so work
 * done only for some addresses (rendering and sending a mail) never adds to the answer's time.
 * Outside Node's HTTP server (app.request in tests) it runs on the next turn of the event loop.
 */
function afterAnswer(c: Context): AfterAnswer {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return (task) => {
    if (outgoing && !outgoing.closed) outgoing.once('close', () => setImmediate(task));
    else setImmediate(task);
  };
}

function requireMail(deps: Deps): void {
  if (!deps.mailer.available) throw new AppError('email_unavailable', 'This server cannot send email; ask its operator (gatewayd merchant create)');
}

export function authRoutes(deps: Deps): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const verifyGoogle = createGoogleVerifier(deps);

  app.use('/auth/*', async (c, next) => {
    const origin = c.req.header('origin');
    if (origin !== undefined && origin !== deps.config.publicOrigin) throw foreignOrigin(origin, deps.config.publicOrigin);
    await next();
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/register',
      operationId: 'register',
      tags,
      summary: 'Create an account; a confirmation link is emailed (no session starts)',
      description:
        'Answers alike whether or not the address already has an account. A new or unconfirmed address: the password and name are stored with this registration only (never changing the account) and its own confirmation link is emailed. A confirmed address: its owner gets a notice. At most one such mail per address every 5 minutes, whatever its state. `email_sent` is false only when the mail server refused the mail of this request; a repeated registration within the 5 minutes sends nothing (the earlier link stands) and answers exactly like a new one, `email_sent: true` included. When two or more registrations of an address are alive when it is confirmed, none of their passwords is kept (see POST /auth/verify-email).',
      request: { body: jsonBody(RegisterBody) },
      responses: { 201: jsonResponse(RegisterResponse, 'Registered; check your mail'), ...errorResponses(400, 403, 413, 429, 503) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const ip = await limit(c, deps, 'register', body.email);
      requireMail(deps);
      await requireCaptcha(deps, body.captcha_token, ip);
      const result = await register(deps, { email: body.email, password: body.password, name: body.name, locale: resolveLocale(body.locale) });
      setCookie(c, cookieName(deps.config, REGISTRATION_COOKIE), result.browserProof, registrationCookieOptions(deps));
      return c.json({ verification_required: true as const, email: result.email, email_sent: result.emailSent }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/login',
      operationId: 'login',
      tags,
      summary: 'Sign in with email and password; sets the session cookie',
      description:
        'Wrong password or unknown email: 401 invalid_credential. Right password on an unconfirmed account: 403 email_not_verified, ' +
        'and a new confirmation link is emailed at most every 5 minutes.',
      request: { body: jsonBody(LoginBody) },
      responses: { 200: jsonResponse(MerchantEnvelope, 'Signed in'), ...errorResponses(400, 401, 403, 413, 429, 503) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const ip = await limit(c, deps, 'login', body.email);
      await requireCaptcha(deps, body.captcha_token, ip);
      const signedIn = await login(deps, {
        email: body.email,
        password: body.password,
        locale: resolveLocale(body.locale),
        previousToken: sessionToken(c, deps),
      });
      setSessionCookie(c, deps, signedIn.sessionToken);
      return c.json({ merchant: toMerchantResponse(signedIn.merchant, deps.config) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/verify-email',
      operationId: 'verifyEmail',
      tags,
      summary: 'Confirm the email address with the token of the emailed link; signs in',
      description:
        "The token is single use, valid 24 hours, and replaced by a newer confirmation mail of the same registration (a sign-in of the unconfirmed account sends one): otherwise 400 invalid_token. The account gets the password and name of the link's registration when it is the only live registration of the address. When several registrations were made (by the owner, or by someone else who typed the owner's address), or the request does not come from the browser that registered (its `gw_reg` cookie, set by POST /auth/register), any of their links confirms the address and signs in, but no password is kept: `password_set` is false, a link to choose a password is emailed, and the signed-in owner may choose one at once with POST /auth/password/set. A password typed by someone who never proved the mailbox thus never opens the account.",
      request: { body: jsonBody(VerifyEmailBody) },
      responses: { 200: jsonResponse(VerifyEmailResponse, 'Confirmed and signed in'), ...errorResponses(400, 403, 413, 429) },
    }),
    async (c) => {
      const { token } = c.req.valid('json');
      await limit(c, deps, 'verify');
      const confirmed = await verifyEmail(deps, token, sessionToken(c, deps), getCookie(c, cookieName(deps.config, REGISTRATION_COOKIE)));
      setSessionCookie(c, deps, confirmed.sessionToken);
      deleteCookie(c, cookieName(deps.config, REGISTRATION_COOKIE), registrationCookieOptions(deps));
      return c.json({ merchant: toMerchantResponse(confirmed.merchant, deps.config), password_set: confirmed.passwordSet }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/password/forgot',
      operationId: 'forgotPassword',
      tags,
      summary: 'Email a password reset link (valid 1 hour, single use)',
      description:
        'Always 202, whether or not the address has an account, after the same work either way. At most one link is mailed per address every 5 minutes; a newer link replaces the older one.',
      request: { body: jsonBody(ForgotBody) },
      responses: { 202: jsonResponse(SuccessSchema, 'Accepted'), ...errorResponses(400, 403, 413, 429, 503) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const ip = await limit(c, deps, 'forgot', body.email);
      requireMail(deps);
      await requireCaptcha(deps, body.captcha_token, ip);
      await forgotPassword(deps, { email: body.email, locale: resolveLocale(body.locale) }, afterAnswer(c));
      return c.json({ success: true as const }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/password/reset',
      operationId: 'resetPassword',
      tags,
      summary: 'Set a new password with the token of the emailed link; signs in (with two-factor sign-in on, once the code is given)',
      description:
        'Revokes every existing session of the account and confirms its email address. With `revoke_api_keys_and_webhooks: true` it also revokes every API key and deactivates every webhook. A used, replaced, expired or unknown token: 400 invalid_token. ' +
        'An account with two-factor sign-in on: the password is set and every session ends, but no session starts: 401 two_factor_required with `error.challenge`, completed with a code or a recovery code by POST /auth/login/two-factor exactly like a sign-in (same limits); `revoke_api_keys_and_webhooks` is carried out then, with the code. API keys never ask for a second factor: unless revoked, they stay valid.',
      request: { body: jsonBody(ResetBody) },
      responses: { 200: jsonResponse(ResetResponse, 'Password changed and signed in'), ...errorResponses(400, 401, 403, 413, 429) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      await limit(c, deps, 'reset');
      const reset = await resetPassword(deps, {
        token: body.token,
        password: body.password,
        revokeKeysAndWebhooks: body.revoke_api_keys_and_webhooks === true,
        previousToken: sessionToken(c, deps),
      });
      setSessionCookie(c, deps, reset.sessionToken);
      return c.json(
        { merchant: toMerchantResponse(reset.merchant, deps.config), revoked: { api_keys: reset.revoked.apiKeys, webhooks: reset.revoked.webhooks } },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/password/set',
      operationId: 'setFirstPassword',
      tags,
      security: [{ sessionCookie: [] }],
      middleware: [requireSession(deps)],
      summary: 'Choose the first password of the signed-in account, which has none',
      description:
        'For an account confirmed without a password (`password_set: false` from POST /auth/verify-email) or made by Google sign-in. ' +
        'An account that already has a password: 409 password_already_set (it changes through a reset link, POST /auth/password/forgot). ' +
        'Outstanding reset links of the account stop working; sessions stay signed in. Needs a sign-in within the last 10 minutes (the session was made by a ' +
        'sign-in, a confirmation, a reset or Google since): otherwise 403 recent_sign_in_required. The owner is mailed that a password was added, in their locale.',
      request: { body: jsonBody(SetPasswordBody) },
      responses: { 200: jsonResponse(MerchantEnvelope, 'Password set'), ...errorResponses(400, 401, 403, 409, 413, 429) },
    }),
    async (c) => {
      const { password } = c.req.valid('json');
      await limit(c, deps, 'set_password');
      const auth = c.get('auth');
      const merchant = await setFirstPassword(deps, { merchantId: auth.merchantId, sessionHash: sessionHashOf(auth) }, password);
      return c.json({ merchant: toMerchantResponse(merchant, deps.config) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/password/reset/preview',
      operationId: 'previewPasswordReset',
      tags,
      summary: "What a reset link's account holds besides sessions: how many API keys and webhooks it has",
      description:
        'For the reset page, which offers to revoke them too. Answers only to the holder of a live reset link (the link stays usable); otherwise 400 invalid_token.',
      request: { body: jsonBody(ResetPreviewBody) },
      responses: { 200: jsonResponse(ResetPreview, 'Counts'), ...errorResponses(400, 403, 413, 429) },
    }),
    async (c) => {
      const { token } = c.req.valid('json');
      await limit(c, deps, 'reset');
      const counts = await resetPreview(deps, token);
      return c.json({ api_keys: counts.apiKeys, webhooks: counts.webhooks }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/google',
      operationId: 'signInWithGoogle',
      tags,
      summary: 'Sign in with a Google ID token; creates, links or claims the account',
      description:
        'A new email creates an account (201). A confirmed account with the same email is linked on first use; ' +
        'an unconfirmed one is claimed and its password stops working (200). A bad credential: 401 invalid_credential; ' +
        'Google keys unreachable or sign-in not configured: 503 identity_provider_unavailable.',
      request: { body: jsonBody(GoogleBody) },
      responses: {
        200: jsonResponse(MerchantEnvelope, 'Signed in to an existing account'),
        201: jsonResponse(MerchantEnvelope, 'Account created and signed in'),
        ...errorResponses(400, 401, 403, 413, 429, 503),
      },
    }),
    async (c) => {
      const { credential } = c.req.valid('json');
      await limit(c, deps, 'google');
      const identity = await verifyGoogle(credential);
      const signedIn = await googleSignIn(deps, identity, sessionToken(c, deps));
      setSessionCookie(c, deps, signedIn.sessionToken);
      const body = { merchant: toMerchantResponse(signedIn.merchant, deps.config) };
      return signedIn.created ? c.json(body, 201) : c.json(body, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/auth/session',
      operationId: 'getSession',
      description: 'Unauthenticated: `signed_in` tells whether the gw_session cookie names a live session (a page can decide where to go without a 401).',
      tags,
      summary: 'Whether the request carries a live session',
      responses: { 200: jsonResponse(SessionStatus, 'Session status'), ...errorResponses(403) },
    }),
    async (c) => c.json({ signed_in: (await optionalSession(c, deps)) !== undefined }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/logout',
      operationId: 'logout',
      description: 'Deletes the session named by the cookie (if any) and clears the cookie; always 200.',
      tags,
      summary: 'End the session and clear its cookie',
      request: { body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(SuccessSchema, 'Signed out'), ...errorResponses(400, 403, 413) },
    }),
    async (c) => {
      const token = sessionToken(c, deps);
      if (token) checkOrigin(c, deps);
      await logout(deps, token);
      clearSessionCookie(c, deps);
      return c.json({ success: true as const }, 200);
    },
  );

  return app;
}
