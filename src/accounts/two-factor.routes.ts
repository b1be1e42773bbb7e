/**
 * Two-factor sign-in over HTTP (docs/api.md, Two-factor sign-in): the second sign-in step
 * (POST /auth/login/two-factor) and the owner's settings under /me/two-factor.
 *
 * Every call that checks a code is limited per client address (rate_limits.auth_per_ip) and per
 * account (rate_limits.two_factor_per_account), before the code is looked at.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { requireSession, sessionHashOf, sessionToken, setSessionCookie } from '../http/auth.js';
import { clientIp, rateLimitSubject } from '../http/client-ip.js';
import type { AppEnv } from '../http/context.js';
import { createRouter, EmptyBody, errorResponses, jsonBody, jsonResponse, optionalJsonBody, SuccessSchema } from '../http/openapi.js';
import { resolveLocale } from '../lib/i18n.js';
import { Locale, toMerchantResponse, TwoFactorSignedIn } from './accounts.schemas.js';
import { beginSetup, completeTwoFactorSignIn, confirmSetup, disableTwoFactor, readChallenge, twoFactorStatus } from './two-factor.service.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'>;

const Code = z.string().min(6).max(40).openapi({ description: 'The 6-digit code of the authenticator app, or one of the recovery codes', example: '492039' });

const LoginTwoFactorBody = z
  .strictObject({
    challenge: z
      .string()
      .min(10)
      .max(200)
      .openapi({ description: '`error.challenge` of the 401 two_factor_required answer of POST /auth/login, POST /auth/google or POST /auth/password/reset' }),
    code: Code,
    locale: Locale,
  })
  .openapi('TwoFactorSignInRequest');

const CodeBody = z.strictObject({ code: Code }).openapi('TwoFactorCodeRequest');
const SetupCodeBody = z
  .strictObject({
    code: z
      .string()
      .regex(/^\s*\d{3}\s?\d{3}\s*$/)
      .openapi({ description: 'The 6-digit code the authenticator app shows for the new secret', example: '492039' }),
  })
  .openapi('TwoFactorConfirmRequest');

const StatusSchema = z
  .object({
    enabled: z.boolean().openapi({ description: 'Sign-in asks for a code' }),
    recovery_codes_left: z.int().min(0).openapi({ description: 'Unused recovery codes (0 when off)' }),
  })
  .openapi('TwoFactorStatus');

const SetupSchema = z
  .object({
    secret: z
      .string()
      .openapi({ description: 'The TOTP secret (base32), for typing into the app; never shown again', example: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' }),
    otpauth_uri: z.string().openapi({ description: 'The otpauth:// URI the QR code carries (SHA1, 6 digits, 30 seconds)' }),
    qr_svg: z.string().openapi({ description: 'The QR code of otpauth_uri, an SVG document' }),
  })
  .openapi('TwoFactorSetup');

const RecoveryCodesSchema = z
  .object({
    recovery_codes: z.array(z.string()).length(10).openapi({ description: 'Ten single-use recovery codes; shown only now (only their SHA-256 is kept)' }),
  })
  .openapi('TwoFactorRecoveryCodes');

const tags = ['Two-factor sign-in'];
const security = [{ sessionCookie: [] }];

/** Both limits of a code check: per client address and per account. */
async function limitCodes(c: Context<AppEnv>, deps: Deps, merchantId: string): Promise<void> {
  await deps.rateLimiter.consume('two_factor:ip', rateLimitSubject(clientIp(c, deps.config.server.trust_proxy)), deps.config.rate_limits.auth_per_ip, {
    context: c,
  });
  await deps.rateLimiter.consume('two_factor:account', merchantId, deps.config.rate_limits.two_factor_per_account, { context: c });
}

async function qrSvg(text: string): Promise<string> {
  const { default: QRCode } = await import('qrcode');
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}

export function twoFactorRoutes(deps: Deps): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const middleware = [requireSession(deps)];
  const owner = (c: Context<AppEnv>) => ({ merchantId: c.get('auth').merchantId, sessionHash: sessionHashOf(c.get('auth')) });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/login/two-factor',
      operationId: 'signInTwoFactor',
      tags,
      summary: 'Second sign-in step: the challenge and a code; sets the session cookie',
      description:
        'After POST /auth/login or POST /auth/google answered 401 two_factor_required. `code` is the current 6-digit code (a code of the previous or next 30 seconds is accepted; ' +
        'a code is never accepted twice) or an unused recovery code (spent by this sign-in; two-factor stays on). Wrong or used code: 401 invalid_credential (details name `code`). ' +
        'An expired challenge (5 minutes), or one issued before a password change or reset: 400 invalid_token (sign in again). ' +
        'Limited per client address (`rate_limits.auth_per_ip`) and per account (`rate_limits.two_factor_per_account`). ' +
        'The challenge of a password reset (POST /auth/password/reset) is completed here too; when that reset asked for `revoke_api_keys_and_webhooks`, the revocation happens now and `revoked` tells what it revoked.',
      request: { body: jsonBody(LoginTwoFactorBody) },
      responses: { 200: jsonResponse(TwoFactorSignedIn, 'Signed in'), ...errorResponses(400, 401, 403, 413, 429) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      await limitCodes(c, deps, readChallenge(deps, body.challenge, deps.clock.now()).merchantId);
      const signedIn = await completeTwoFactorSignIn(deps, {
        challenge: body.challenge,
        code: body.code,
        locale: body.locale === undefined ? undefined : resolveLocale(body.locale),
        previousToken: sessionToken(c, deps),
      });
      setSessionCookie(c, deps, signedIn.sessionToken);
      const revoked = signedIn.revoked && { api_keys: signedIn.revoked.apiKeys, webhooks: signedIn.revoked.webhooks };
      return c.json({ merchant: toMerchantResponse(signedIn.merchant, deps.config), ...(revoked ? { revoked } : {}) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/me/two-factor',
      operationId: 'getTwoFactor',
      tags,
      security,
      middleware,
      summary: 'Whether sign-in asks for a code, and how many recovery codes are left',
      description: 'Owner session only. `enabled` is false while a setup is started but not confirmed.',
      responses: { 200: jsonResponse(StatusSchema, 'Status'), ...errorResponses(401, 403) },
    }),
    async (c) => {
      const status = await twoFactorStatus(deps, c.get('auth').merchantId);
      return c.json({ enabled: status.enabled, recovery_codes_left: status.recoveryCodesLeft }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/me/two-factor/setup',
      operationId: 'beginTwoFactorSetup',
      tags,
      security,
      middleware,
      summary: 'Start setting up two-factor sign-in: a new secret and its QR code',
      description:
        'The secret is stored encrypted and is not asked at sign-in until confirmed with POST /me/two-factor/confirm; a new setup replaces an unconfirmed one. ' +
        'It is never returned again. Already on: 409 two_factor_already_enabled. Needs a sign-in within the last 10 minutes (403 recent_sign_in_required).',
      request: { body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(SetupSchema, 'Secret'), ...errorResponses(400, 401, 403, 409, 413) },
    }),
    async (c) => {
      const setup = await beginSetup(deps, owner(c));
      return c.json({ secret: setup.secret, otpauth_uri: setup.uri, qr_svg: await qrSvg(setup.uri) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/me/two-factor/confirm',
      operationId: 'confirmTwoFactor',
      tags,
      security,
      middleware,
      summary: 'Turn two-factor sign-in on with a first code; returns the ten recovery codes once',
      description:
        'Wrong code: 401 invalid_credential (details name `code`). No setup started: 409 two_factor_not_enabled. Needs a recent sign-in. Limited like the sign-in step.',
      request: { body: jsonBody(SetupCodeBody) },
      responses: { 200: jsonResponse(RecoveryCodesSchema, 'On'), ...errorResponses(400, 401, 403, 409, 413, 429) },
    }),
    async (c) => {
      await limitCodes(c, deps, c.get('auth').merchantId);
      return c.json({ recovery_codes: await confirmSetup(deps, owner(c), c.req.valid('json').code) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/me/two-factor/disable',
      operationId: 'disableTwoFactor',
      tags,
      security,
      middleware,
      summary: 'Turn two-factor sign-in off with a current code or a recovery code',
      description:
        'Deletes the secret and every recovery code. Wrong or used code: 401 invalid_credential. Not on: 409 two_factor_not_enabled. ' +
        'Needs a sign-in within the last 10 minutes (403 recent_sign_in_required). Limited like the sign-in step.',
      request: { body: jsonBody(CodeBody) },
      responses: { 200: jsonResponse(SuccessSchema, 'Off'), ...errorResponses(400, 401, 403, 409, 413, 429) },
    }),
    async (c) => {
      await limitCodes(c, deps, c.get('auth').merchantId);
      await disableTwoFactor(deps, owner(c), c.req.valid('json').code);
      return c.json({ success: true as const }, 200);
    },
  );

  return app;
}
