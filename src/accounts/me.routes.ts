/** GET and PATCH /me (the owner's Dashboard) and POST /me/password (owner session only; an API key is refused). */
import { formatTolerance, parseTolerance, updatePaymentSettings } from './underpayment.js';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { requireSession } from '../http/auth.js';
import type { AppEnv } from '../http/context.js';
import { clientIp, rateLimitSubject } from '../http/client-ip.js';
import { createRouter, errorResponses, jsonBody, jsonResponse, SuccessSchema } from '../http/openapi.js';
import { AppError } from '../lib/errors.js';
import { readDashboard } from '../dashboard/dashboard.js';
import { DashboardSchema, toDashboardResponse } from '../dashboard/dashboard.schemas.js';
import { ChangePasswordBody, PatchMeBody } from './accounts.schemas.js';
import { updateMerchantSettings } from './auth.service.js';
import { changePassword } from './password.service.js';
import { findMerchantById } from './merchants.repo.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & { mailer: Mailer };

const tags = ['Account'];
const security = [{ sessionCookie: [] }];

export function meRoutes(deps: Deps): OpenAPIHono<AppEnv> {
  const app = createRouter();
  // Per route, so a wrong method on /me answers 405 before any credential check.
  const middleware = [requireSession(deps)];

  app.openapi(
    createRoute({
      method: 'get',
      path: '/me',
      tags,
      security,
      middleware,
      operationId: 'getDashboard',
      summary: 'The dashboard: the merchant, its recent resources and invoice stats',
      description: 'Owner session only (an API key is refused with 403 `session_required`).',
      responses: { 200: jsonResponse(DashboardSchema, 'Dashboard'), ...errorResponses(401, 403) },
    }),
    async (c) => {
      const merchant = await findMerchantById(deps.db, c.get('auth').merchantId);
      if (!merchant) throw new AppError('unauthorized', 'Sign in first: the account no longer exists');
      return c.json(toDashboardResponse(await readDashboard(deps, merchant), deps.config), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/me',
      tags,
      security,
      middleware,
      operationId: 'updateMerchant',
      summary: 'Change the business display name, the checkout QR format, the markup on fiat prices or the underpayment settings',
      description:
        '`name`: the display name payers see. `checkout_qr`: what the checkout QR code carries, `address` (the receiving address alone, ' +
        'which every wallet scans; the default) or `tron_uri` (a `tron:` URI with the amount, which some wallets reject). ' +
        '`markup_percent`: percent (0 to 20, at most 2 decimals) added to invoices priced in a fiat currency; `markup_percent` on a creation overrides it. ' +
        '`underpayment_tolerance`: a USDT amount ("1.00") or a percentage ("1%") a transfer may fall short of an open invoice and still be recorded ' +
        'against it as a partial payment (`invoice.partially_paid`), stored normalised ("1.000000", "1%"); null turns it off (the default). ' +
        '`underpayment_auto_accept`: such a payment confirms its invoice by itself with `resolution: "tolerance"` (default false).',
      request: { body: jsonBody(PatchMeBody) },
      responses: { 200: jsonResponse(DashboardSchema, 'Dashboard'), ...errorResponses(400, 401, 403, 413) },
    }),
    async (c) => {
      const { name, checkout_qr, markup_percent, underpayment_tolerance, underpayment_auto_accept } = c.req.valid('json');
      const merchant = await updateMerchantSettings(deps, c.get('auth').merchantId, { name, checkoutQr: checkout_qr, markupPercent: markup_percent });
      if (underpayment_tolerance !== undefined || underpayment_auto_accept !== undefined) {
        const tolerance =
          underpayment_tolerance === undefined || underpayment_tolerance === null
            ? underpayment_tolerance
            : formatTolerance(parseTolerance(underpayment_tolerance)!);
        await updatePaymentSettings(
          deps.db,
          merchant.id,
          { underpaymentTolerance: tolerance, underpaymentAutoAccept: underpayment_auto_accept },
          deps.clock.now(),
        );
      }
      return c.json(toDashboardResponse(await readDashboard(deps, merchant), deps.config), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/me/password',
      tags,
      security,
      middleware,
      operationId: 'changePassword',
      summary: 'Change the password (the current one is required); signs out every other session',
      description:
        'Owner session only. `new_password`: 12 to 128 characters. A wrong `current_password` is 401 `invalid_credential` with a detail naming ' +
        '`current_password` (the session stays valid; an account that signs in only with Google has no password and sets one with ' +
        'POST /auth/password/forgot). On success every other session of the account and every outstanding emailed link are revoked; this ' +
        'session stays signed in. Needs a sign-in within the last 10 minutes: otherwise 403 `recent_sign_in_required` (sign in again). The owner is mailed ' +
        'that the password was changed, in their locale. Rate limited like sign-in: `rate_limits.auth_per_ip` per client address and `rate_limits.auth_per_email` per account.',
      request: { body: jsonBody(ChangePasswordBody) },
      responses: { 200: jsonResponse(SuccessSchema, 'Password changed'), ...errorResponses(400, 401, 403, 413, 429) },
    }),
    async (c) => {
      const auth = c.get('auth');
      if (auth.kind !== 'session') throw new AppError('session_required', 'This operation needs a signed-in owner session, not an API key');
      await deps.rateLimiter.consume('password_change:ip', rateLimitSubject(clientIp(c, deps.config.server.trust_proxy)), deps.config.rate_limits.auth_per_ip, {
        context: c,
      });
      await deps.rateLimiter.consume('password_change:account', auth.merchantId, deps.config.rate_limits.auth_per_email, { context: c });
      const { current_password, new_password } = c.req.valid('json');
      await changePassword(deps, auth, { currentPassword: current_password, newPassword: new_password });
      return c.json({ success: true as const }, 200);
    },
  );

  return app;
}
