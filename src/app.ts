/**
 * createApp(deps): the whole HTTP surface. Middleware (request id, access log, security headers,
 * body guard), the single error handler and envelope, the API sub-apps under /api/v1 and the
 * OpenAPI document generated from the same zod schemas that validate requests.
 */
import { isUnstorableText } from './db/postgres.js';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { AppError, errorEnvelope, type ErrorCode } from './lib/errors.js';
import { newId } from './lib/ids.js';
import type { AppDeps } from './app-deps.js';
import type { AppEnv } from './http/context.js';
import { createRouter, describeInstance, jsonResponse } from './http/openapi.js';
import { createRoute, z } from '@hono/zod-openapi';
import { rateLimitHeaders } from './http/rate-limit.js';
import { finishDocument, registerWebhookDocs } from './openapi-document.js';
import { instanceRules } from './openapi-instance.js';
import { allowedMethods } from './http/allowed-methods.js';
import { SESSION_CHALLENGE } from './http/auth.js';
import { jsonBody } from './http/json-body.js';
import { systemRoutes } from './system/system.routes.js';
import { pagesRoutes, wantsPage } from './pages/pages.routes.js';
import { supportRoutes } from './support/support.routes.js';
import { accountRoutes } from './accounts/accounts.routes.js';
import { webhookRoutes } from './webhooks/webhooks.routes.js';
import { walletRoutes } from './wallets/wallets.routes.js';
import { invoiceRoutes } from './invoices/invoices.routes.js';
import { eventRoutes } from './events/events.routes.js';
import { transferRoutes } from './transfers/transfers.routes.js';
import { apiKeyRoutes } from './api-keys/api-keys.routes.js';
import { checkoutRoutes } from './checkout/checkout.routes.js';
import { telegramRoutes } from './telegram/telegram.routes.js';
import { ledgerRoutes } from './ledger/ledger.routes.js';
import { epayRoutes } from './shops/epay.routes.js';
import { epusdtRoutes } from './shops/epusdt.routes.js';
import { shopReturnRoutes } from './shops/return.routes.js';
import { createShopNotifier } from './shops/shop-notify.js';
import { shopConnectionRoutes } from './shops/shops.routes.js';
import { API_VERSION, VERSION } from './version.js';

export const API_PREFIX = '/api/v1';

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

export type App = OpenAPIHono<AppEnv>;

export function createApp(deps: AppDeps): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: createRouter().defaultHook });

  app.use('*', async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && REQUEST_ID_RE.test(incoming) ? incoming : newId('req');
    c.set('requestId', requestId);
    const started = performance.now();
    await next();
    deps.metrics.observeRequest(c.req.method, c.req.routePath, c.res.status, (performance.now() - started) / 1000);
    // On the response's own headers: c.header() after the handler copies the whole response each time.
    const headers: Array<[string, string]> = [
      ['X-Request-Id', requestId],
      ['X-Content-Type-Options', 'nosniff'],
      ['Referrer-Policy', 'no-referrer'],
    ];
    if (!c.res.headers.has('X-Frame-Options')) headers.push(['X-Frame-Options', 'DENY']);
    const rateLimit = c.get('rateLimit');
    if (rateLimit) headers.push(...rateLimitHeaders(rateLimit));
    if (c.req.path.startsWith(API_PREFIX) && !c.res.headers.has('Cache-Control')) headers.push(['Cache-Control', 'no-store']);
    try {
      for (const [name, value] of headers) c.res.headers.set(name, value);
    } catch {
      // An immutable response (Response.redirect, a fetched one): hono copies it.
      for (const [name, value] of headers) c.header(name, value);
    }
    // The route pattern, never the raw path: paths can hold capability tokens (checkout links).
    deps.log.info(
      { req_id: requestId, method: c.req.method, route: c.req.routePath, status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10 },
      'request',
    );
  });

  // The shops' Epusdt facade answers in Epusdt's own shape, errors included: before the JSON body guard.
  app.route('/', epusdtRoutes(deps));

  // JSON bodies: at most 64 KiB, valid JSON, declared as JSON. An empty body counts as {}.
  app.use(`${API_PREFIX}/*`, jsonBody(app));
  const idempotency = { db: deps.db, serverSecret: deps.config.server.secret, now: () => deps.clock.now() };
  app.use(`${API_PREFIX}/*`, async (c, next) => {
    c.set('idempotency', idempotency);
    await next();
  });

  const system = systemRoutes(deps, VERSION);
  app.route(API_PREFIX, system);
  // The health answer at the short path too, for monitors and load balancers set up with it: the
  // same handler, uncached like every API answer. The documented path is /api/v1/health.
  app.get('/health', async (c) => {
    const res = await system.fetch(c.req.raw);
    const answer = new Response(res.body, res);
    answer.headers.set('Cache-Control', 'no-store');
    return answer;
  });
  app.route(API_PREFIX, supportRoutes(deps));
  app.route(API_PREFIX, accountRoutes(deps));
  app.route(API_PREFIX, webhookRoutes(deps));
  app.route(API_PREFIX, walletRoutes(deps));
  app.route(API_PREFIX, invoiceRoutes(deps));
  app.route(API_PREFIX, eventRoutes(deps));
  app.route(API_PREFIX, transferRoutes(deps));
  app.route(API_PREFIX, apiKeyRoutes(deps));
  app.route(API_PREFIX, checkoutRoutes(deps));
  app.route(API_PREFIX, telegramRoutes(deps));
  app.route(API_PREFIX, ledgerRoutes(deps));
  app.route(API_PREFIX, shopConnectionRoutes(deps, createShopNotifier(deps)));
  app.route('/', epayRoutes(deps));
  app.route('/', shopReturnRoutes(deps));
  const pages = pagesRoutes(deps);
  app.route('/', pages.routes);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key: gw_live_...',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: 'gw_session',
    description: 'Owner session (named `__Host-gw_session` when the public URL is https); unsafe methods also need Origin equal to the public origin',
  });

  registerWebhookDocs(app);

  let openApiDocument: Record<string, unknown> | undefined;
  app.openapi(
    createRoute({
      method: 'get',
      path: `${API_PREFIX}/openapi.json`,
      operationId: 'getOpenApiDocument',
      tags: ['System'],
      summary: 'This document',
      description:
        'The OpenAPI 3.1 document of this API version as this instance serves it: the rules that follow its configuration are in the schemas ' +
        "(the webhook URL pattern, `gatewayd dev`'s URL policy included; the currencies of pricing.currencies and their decimals), " +
        'and `servers` names this server and its TRON network. Everything else is the same on every instance of a version.',
      security: [],
      request: { query: z.strictObject({}) },
      responses: { 200: jsonResponse(z.record(z.string(), z.unknown()).openapi({ description: 'An OpenAPI 3.1 document' }), 'The document') },
    }),
    (c) => {
      openApiDocument ??= buildOpenApiDocument(app, deps);
      return c.json(openApiDocument, 200);
    },
  );

  app.notFound((c) => {
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length > 0) {
      const err = new AppError('method_not_allowed', `Method ${c.req.method} is not allowed here; use ${allowed.join(', ')}`);
      return respondError(c, err.withHeader('Allow', allowed.join(', ')));
    }
    if (wantsPage(c, API_PREFIX)) return pages.notFound(c);
    return respondError(c, new AppError('not_found', 'No such resource'));
  });

  app.onError((err, c) => {
    if (err instanceof AppError) return respondError(c, err);
    if (err instanceof HTTPException) {
      const code = httpExceptionCode(err);
      if (code) return respondError(c, new AppError(code, err.message || 'Bad request'));
    }
    if (isUnstorableText(err)) {
      return respondError(c, new AppError('validation_error', 'Text may not contain the NUL character (U+0000) on this server'));
    }
    deps.log.error({ err, req_id: c.get('requestId'), method: c.req.method, route: c.req.routePath }, 'unhandled error');
    return respondError(c, new AppError('internal_error', `Internal error; quote request id ${c.get('requestId') ?? 'unknown'} when reporting it`));
  });

  return app;
}

export function respondError(c: Context, err: AppError): Response {
  for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
  // RFC 9110: every 401 names the way to authenticate; the credential middlewares name theirs.
  if (err.status === 401 && !err.headers['WWW-Authenticate']) c.header('WWW-Authenticate', SESSION_CHALLENGE);
  return c.json(errorEnvelope(err), err.status as 400);
}

export function buildOpenApiDocument(app: App, deps: AppDeps): Record<string, unknown> {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'gatewayd API',
      version: API_VERSION,
      description:
        'Noncustodial USDT (TRC20) invoicing. Money amounts are decimal strings with six fractional digits. ' +
        'Every error has the envelope {error: {code, message, details?}, mode: "live"}.',
    },
    // Paths carry the /api/v1 prefix themselves, so the server is the bare public origin.
    servers: [{ url: deps.config.server.public_url.replace(/\/+$/, ''), description: 'This gatewayd server' }],
  });
  return describeInstance(instanceRules(finishDocument(doc as unknown as Record<string, unknown>), deps.config), deps.config.network);
}

/** The error code for an exception hono's own middleware threw; undefined for one that is our bug (a 500). */
function httpExceptionCode(err: HTTPException): ErrorCode | undefined {
  switch (err.status) {
    case 400:
      return /json/i.test(err.message) ? 'invalid_json' : 'validation_error';
    case 401:
      return 'unauthorized';
    case 404:
      return 'not_found';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'invalid_json';
    default:
      return undefined;
  }
}
