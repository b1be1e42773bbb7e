/**
 * createApp(deps): the whole HTTP surface. Middleware (request id, access log, security headers,
 * body guard), the single error handler and envelope, the API sub-apps under /api/v1 and the
 * OpenAPI document generated from the same zod schemas that validate requests.
 */
import type { IncomingMessage } from 'node:http';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { bodyLimit } from 'hono/body-limit';
import { AppError, errorEnvelope } from './lib/errors.js';
import { newId } from './lib/ids.js';
import type { AppDeps, AppEnv } from './http/context.js';
import { createRouter, narrowToNetwork } from './http/openapi.js';
import { systemRoutes } from './system/system.routes.js';
import { pagesRoutes, wantsPage } from './pages/pages.routes.js';
import { supportRoutes } from './support/support.routes.js';
import { accountRoutes } from './accounts/accounts.routes.js';
import { webhookRoutes } from './webhooks/webhooks.routes.js';
import { walletRoutes } from './wallets/wallets.routes.js';
import { invoiceRoutes } from './invoices/invoices.routes.js';
import { apiKeyRoutes } from './api-keys/api-keys.routes.js';
import { checkoutRoutes } from './checkout/checkout.routes.js';
import { ledgerRoutes } from './ledger/ledger.routes.js';
import { API_VERSION, VERSION } from './version.js';

export const API_PREFIX = '/api/v1';
export const MAX_JSON_BODY = 64 * 1024;

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPE_RE = /^application\/([\w.-]+\+)?json\s*(;.*)?$/i;

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

  // JSON bodies: at most 64 KiB, valid JSON, declared as JSON. An empty body counts as {}.
  app.use(`${API_PREFIX}/*`, async (c, next) => {
    // Unknown routes and wrong methods answer 404/405 whatever the body holds.
    if (!BODY_METHODS.has(c.req.method) || !allowedMethods(app, c.req.path).includes(c.req.method)) return next();
    const text = await readJsonBodyText(c);
    if (text.trim() === '') {
      // No body at all: validate it as {} (operations whose body is `{}` accept an empty POST).
      const headers = new Headers(c.req.raw.headers);
      headers.set('content-type', 'application/json');
      c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers, body: '{}' });
      cacheBody(c, '{}', {});
      return next();
    }
    const type = c.req.header('content-type') ?? '';
    if (!JSON_TYPE_RE.test(type)) throw new AppError('invalid_json', 'The request body must be JSON with Content-Type: application/json');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AppError('invalid_json', 'The request body is not valid JSON');
    }
    cacheBody(c, text, parsed);
    return next();
  });

  app.route(API_PREFIX, systemRoutes(deps, VERSION));
  app.route(API_PREFIX, supportRoutes(deps));
  app.route(API_PREFIX, accountRoutes(deps));
  app.route(API_PREFIX, webhookRoutes(deps));
  app.route(API_PREFIX, walletRoutes(deps));
  app.route(API_PREFIX, invoiceRoutes(deps));
  app.route(API_PREFIX, apiKeyRoutes(deps));
  app.route(API_PREFIX, checkoutRoutes(deps));
  app.route(API_PREFIX, ledgerRoutes(deps));
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
    description: 'Owner session; unsafe methods also need Origin equal to the public origin',
  });

  let openApiDocument: unknown;
  app.get(`${API_PREFIX}/openapi.json`, (c) => {
    openApiDocument ??= buildOpenApiDocument(app, deps);
    return c.json(openApiDocument as object, 200);
  });

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
      const status = err.status;
      const code = status === 415 ? 'invalid_json' : status === 413 ? 'payload_too_large' : status === 400 ? (/json/i.test(err.message) ? 'invalid_json' : 'validation_error') : status === 401 ? 'unauthorized' : status === 404 ? 'not_found' : undefined;
      if (code) return respondError(c, new AppError(code, err.message || 'Bad request'));
    }
    deps.log.error({ err, req_id: c.get('requestId'), method: c.req.method, route: c.req.routePath }, 'unhandled error');
    return respondError(c, new AppError('internal_error', `Internal error; quote request id ${c.get('requestId') ?? 'unknown'} when reporting it`));
  });

  return app;
}

export function respondError(c: Context, err: AppError): Response {
  for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
  return c.json(errorEnvelope(err), err.status as 400);
}

export function buildOpenApiDocument(app: App, deps: AppDeps): Record<string, unknown> {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'gatewayd API',
      version: API_VERSION,
      description:
        'Noncustodial USDT (TRC20) invoicing. Money amounts are decimal strings with six fractional digits. ' +
        'Every error has the envelope {error: {code, message, details?}, mode: "live"}.',
    },
    // Paths carry the /api/v1 prefix themselves, so the server is the bare public origin.
    servers: [{ url: deps.config.server.public_url.replace(/\/+$/, '') }],
  }) as unknown as Record<string, unknown>;
  return narrowToNetwork(document, deps.config.network);
}

interface RoutePattern {
  method: string;
  re: RegExp;
}

const patternCache = new WeakMap<App, RoutePattern[]>();

/**
 * What the validators read. hono keeps promises in bodyCache (its type says values) and its json()
 * reads the cached text: a cached `json` alone would be re-serialized through a Response first.
 */
function cacheBody(c: Context<AppEnv>, text: string, parsed: unknown): void {
  c.req.bodyCache = { text: Promise.resolve(text), json: Promise.resolve(parsed) } as unknown as typeof c.req.bodyCache;
}

const tooLarge = () => new AppError('payload_too_large', `The request body exceeds ${MAX_JSON_BODY} bytes`);

/**
 * The body as UTF-8 text, at most MAX_JSON_BODY bytes (413 beyond, whatever Content-Length says).
 * Under @hono/node-server it is read straight from Node's IncomingMessage: asking hono for the body
 * builds a full fetch Request with a web stream around it, which cost more than the rest of an
 * invoice creation's HTTP handling. Elsewhere (app.request() in tools) hono's bodyLimit reads it.
 */
async function readJsonBodyText(c: Context<AppEnv>): Promise<string> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) {
    let text = '';
    await bodyLimit({ maxSize: MAX_JSON_BODY, onError: () => { throw tooLarge(); } })(c, async () => {
      text = await c.req.text();
    });
    return text;
  }
  const declared = Number(c.req.header('content-length'));
  if (declared > MAX_JSON_BODY) throw tooLarge();
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_JSON_BODY) {
        cleanup();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
    };
    if (incoming.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
  });
  // As fetch's text(): UTF-8, a leading byte order mark dropped, bad sequences replaced.
  const text = body.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Answers by path, kept for the most recent paths (a POST /invoices asks on every request). */
const allowedByPath = new WeakMap<App, Map<string, string[]>>();
const ALLOWED_PATHS_KEPT = 512;

function allowedMethods(app: App, path: string): string[] {
  let byPath = allowedByPath.get(app);
  if (!byPath) {
    byPath = new Map();
    allowedByPath.set(app, byPath);
  }
  let allowed = byPath.get(path);
  if (!allowed) {
    allowed = matchAllowedMethods(app, path);
    // Paths are the client's: the map is bounded, and simply starts over when full.
    if (byPath.size >= ALLOWED_PATHS_KEPT) byPath.clear();
    byPath.set(path, allowed);
  }
  return allowed;
}

function matchAllowedMethods(app: App, path: string): string[] {
  let patterns = patternCache.get(app);
  if (!patterns) {
    patterns = app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => ({
        method: r.method,
        re: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/\*$/, '/.*').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`),
      }));
    patternCache.set(app, patterns);
  }
  const methods = new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
