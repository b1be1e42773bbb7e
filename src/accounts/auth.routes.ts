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
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { checkOrigin, clearSessionCookie, optionalSession, setSessionCookie } from '../http/auth.js';
import { requireCaptcha } from '../http/captcha.js';
import { clientIp } from '../http/client-ip.js';
import type { AppDeps } from '../deps.js';
import type { AppEnv } from '../http/context.js';
import { createRouter, errorResponses, jsonBody, jsonResponse, SuccessSchema } from '../http/openapi.js';
import { AppError } from '../lib/errors.js';
import { resolveLocale } from '../lib/i18n.js';
import {
  EmptyBody,
  ForgotBody,
  GoogleBody,
  LoginBody,
  MerchantEnvelope,
  RegisterBody,
  RegisterResponse,
  ResetBody,
  SessionStatus,
  toMerchantResponse,
  VerifyEmailBody,
} from './accounts.schemas.js';
import { forgotPassword, login, logout, register, resetPassword, verifyEmail } from './auth.service.js';
import { createGoogleVerifier, googleSignIn } from './google.service.js';
import { normalizeEmail } from './merchants.repo.js';
import { SESSION_COOKIE } from './sessions.repo.js';

const tags = ['Authentication'];

/** Per-address (and per-email) limits of one operation; unknown emails count exactly like known ones. */
function limit(c: Context, deps: AppDeps, operation: string, email?: string): string {
  const ip = clientIp(c, deps.config.server.trust_proxy);
  deps.rateLimiter.consume(`${operation}:ip`, ip, deps.config.rate_limits.auth_per_ip);
  if (email !== undefined) deps.rateLimiter.consume(`${operation}:email`, normalizeEmail(email), deps.config.rate_limits.auth_per_email);
  return ip;
}

function requireMail(deps: AppDeps): void {
  if (!deps.mailer.available) throw new AppError('email_unavailable', 'This server cannot send email; ask its operator (gatewayd merchant create)');
}

export function authRoutes(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const verifyGoogle = createGoogleVerifier(deps);

  app.use('/auth/*', async (c, next) => {
    const origin = c.req.header('origin');
    if (origin !== undefined && origin !== deps.config.publicOrigin) throw new AppError('invalid_origin', 'The Origin header does not match this server');
    await next();
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/register',
      tags,
      summary: 'Create an account; a confirmation link is emailed (no session starts)',
      description:
        'Answers alike whether or not the address already has an account: ' +
        'an unconfirmed one gets a new link (replacing older links, and setting the new password), ' +
        'a confirmed one gets a notice. At most one such mail per address every 5 minutes.',
      request: { body: jsonBody(RegisterBody) },
      responses: { 201: jsonResponse(RegisterResponse, 'Registered; check your mail'), ...errorResponses(400, 403, 413, 429, 503) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const ip = limit(c, deps, 'register', body.email);
      requireMail(deps);
      await requireCaptcha(deps, body.captcha_token, ip);
      const result = await register(deps, { email: body.email, password: body.password, name: body.name, locale: resolveLocale(body.locale) });
      return c.json({ verification_required: true as const, email: result.email, email_sent: result.emailSent }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/login',
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
      const ip = limit(c, deps, 'login', body.email);
      await requireCaptcha(deps, body.captcha_token, ip);
      const signedIn = await login(deps, {
        email: body.email,
        password: body.password,
        locale: resolveLocale(body.locale),
        previousToken: getCookie(c, SESSION_COOKIE),
      });
      setSessionCookie(c, deps, signedIn.sessionToken);
      return c.json({ merchant: toMerchantResponse(signedIn.merchant, deps.config) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/verify-email',
      tags,
      summary: 'Confirm the email address with the token of the emailed link; signs in',
      description: 'The token is single use, valid 24 hours, and replaced by any newer confirmation mail: otherwise 400 invalid_token.',
      request: { body: jsonBody(VerifyEmailBody) },
      responses: { 200: jsonResponse(MerchantEnvelope, 'Confirmed and signed in'), ...errorResponses(400, 403, 413, 429) },
    }),
    async (c) => {
      const { token } = c.req.valid('json');
      limit(c, deps, 'verify');
      const signedIn = await verifyEmail(deps, token, getCookie(c, SESSION_COOKIE));
      setSessionCookie(c, deps, signedIn.sessionToken);
      return c.json({ merchant: toMerchantResponse(signedIn.merchant, deps.config) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/password/forgot',
      tags,
      summary: 'Email a password reset link (valid 1 hour, single use)',
      description: 'Always 202, whether or not the address has an account.',
      request: { body: jsonBody(ForgotBody) },
      responses: { 202: jsonResponse(SuccessSchema, 'Accepted'), ...errorResponses(400, 403, 413, 429, 503) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const ip = limit(c, deps, 'forgot', body.email);
      requireMail(deps);
      await requireCaptcha(deps, body.captcha_token, ip);
      await forgotPassword(deps, { email: body.email, locale: resolveLocale(body.locale) });
      return c.json({ success: true as const }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/password/reset',
      tags,
      summary: 'Set a new password with the token of the emailed link; signs in',
      description:
        'Revokes every existing session of the account and confirms its email address. A used, replaced, expired or unknown token: 400 invalid_token.',
      request: { body: jsonBody(ResetBody) },
      responses: { 200: jsonResponse(MerchantEnvelope, 'Password changed and signed in'), ...errorResponses(400, 403, 413, 429) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      limit(c, deps, 'reset');
      const signedIn = await resetPassword(deps, { token: body.token, password: body.password, previousToken: getCookie(c, SESSION_COOKIE) });
      setSessionCookie(c, deps, signedIn.sessionToken);
      return c.json({ merchant: toMerchantResponse(signedIn.merchant, deps.config) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/google',
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
      limit(c, deps, 'google');
      const identity = await verifyGoogle(credential);
      const signedIn = await googleSignIn(deps, identity, getCookie(c, SESSION_COOKIE));
      setSessionCookie(c, deps, signedIn.sessionToken);
      const body = { merchant: toMerchantResponse(signedIn.merchant, deps.config) };
      return signedIn.created ? c.json(body, 201) : c.json(body, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/auth/session',
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
      tags,
      summary: 'End the session and clear its cookie',
      request: { body: jsonBody(EmptyBody) },
      responses: { 200: jsonResponse(SuccessSchema, 'Signed out'), ...errorResponses(400, 403, 413) },
    }),
    async (c) => {
      const token = getCookie(c, SESSION_COOKIE);
      if (token) checkOrigin(c, deps);
      await logout(deps, token);
      clearSessionCookie(c, deps);
      return c.json({ success: true as const }, 200);
    },
  );

  return app;
}
