/**
 * Shared pieces of the OpenAPI contract: the router factory (validation failures become
 * 400 validation_error), the error envelope schema and the standard error responses.
 */
import { OpenAPIHono, z } from '@hono/zod-openapi';
import { AppError, ERROR_CODES, type ErrorDetail } from '../lib/errors.js';
import type { TronNetwork } from '../lib/tron.js';
import type { AppEnv } from './context.js';
import { IdempotencyKeyHeader, idempotencyLayer } from './idempotency.js';

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z
        .enum(ERROR_CODES as [string, ...string[]])
        .openapi({ description: 'Stable, machine-readable; the closed list is the enum', example: 'validation_error' }),
      message: z.string().openapi({ description: 'For people; may change', example: 'The request is not valid' }),
      details: z
        .array(
          z.object({
            path: z.string().openapi({ description: 'The field, query parameter or header at fault', example: 'merchant_order_id' }),
            message: z.string().openapi({ example: 'Already used by invoice inv_3kT9wq2LmX8vR4pZ' }),
            invoice_id: z.string().optional().openapi({ description: 'duplicate_order_id: the invoice holding the order id', example: 'inv_3kT9wq2LmX8vR4pZ' }),
            reason: z.string().optional().openapi({
              description:
                'A stable word naming the broken rule, where one exists (invalid_webhook_url: not_url, scheme, credentials, fragment, port, ip_literal, localhost, not_fqdn, dns_timeout, unresolvable, blocked_address)',
            }),
          }),
        )
        .optional()
        .openapi({ description: 'One entry per field at fault; a field is listed once (its first broken rule)' }),
      challenge: z.string().optional().openapi({
        description: 'two_factor_required only: the signed sign-in challenge (valid 5 minutes) to send with the code to POST /auth/login/two-factor',
      }),
    }),
    mode: z.literal('live'),
  })
  .openapi('Error');

const STATUS_TEXT: Record<number, string> = {
  400: 'Validation error',
  401: 'Authentication required',
  403: 'Insufficient scope or invalid origin',
  404: 'Resource not found',
  405: 'Method not allowed',
  409: 'Conflict, exhausted amount pool or manual review required',
  413: 'Payload too large',
  429: 'Rate limit exceeded',
  500: 'Internal server error',
  503: 'A dependency (email, captcha, identity provider, exchange rates) is unavailable, or public support is off (nobody answers it)',
};

/** `responses` entries for the given error statuses, all with the error envelope. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, { description: string; content: { 'application/json': { schema: typeof ErrorEnvelopeSchema } } }> = {};
  for (const status of [...new Set([...statuses, 500])]) {
    out[status] = { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema: ErrorEnvelopeSchema } } };
  }
  return out;
}

/** A JSON request body that is required (so a missing or non-JSON body is validated, not skipped). */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { 'application/json': { schema } } };
}

/**
 * A body the server does not need: optional in the document (a client may send none, or `{}`), and
 * still validated when sent (the body guard turns an absent body into `{}`, so an unknown field is a
 * 400 either way).
 */
export function optionalJsonBody<T extends z.ZodType>(schema: T, description = 'Optional: no body, or `{}`') {
  return { required: false, description, content: { 'application/json': { schema } } };
}

/** The body of an action that takes no input. */
export const EmptyBody = z.strictObject({}).openapi('EmptyBody');

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/**
 * One detail per field at fault, its path prefixed with the request part for anything but the JSON
 * body (`query.limit`, `param.id`, `header.idempotency-key`). Unknown keys get one detail each. A
 * field that breaks two rules (a pattern and a maximum) is named once, by its first.
 */
export function zodIssuesToDetails(issues: readonly z.core.$ZodIssue[], target?: string): ErrorDetail[] {
  const detail = (segments: readonly PropertyKey[], message: string): ErrorDetail => {
    const path = segments.map(String).join('.');
    const prefix = target && target !== 'json' ? `${target}${path ? '.' : ''}` : '';
    return { path: `${prefix}${path}` || (target ?? ''), message };
  };
  const details = issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => detail([...issue.path, key], target === 'query' ? 'unknown query parameter' : 'unknown field'))
      : [detail(issue.path, issue.message)],
  );
  const byPath = new Map<string, ErrorDetail>();
  for (const d of details) if (!byPath.has(d.path)) byPath.set(d.path, d);
  return [...byPath.values()].slice(0, 20);
}

interface RouteShape {
  method: string;
  security?: Array<Record<string, string[]>>;
  middleware?: unknown;
  responses?: Record<string, unknown>;
  request?: { query?: unknown; headers?: unknown };
}

/**
 * Every POST that needs a credential accepts an optional Idempotency-Key (src/http/idempotency.ts),
 * run after the route's own middleware (which names the merchant). A route with headers of its own
 * (POST /invoices, which keeps its key with the invoice) is left as it is.
 */
function withIdempotency(route: RouteShape): RouteShape {
  const credentials = (route.security ?? []).some((s) => 'sessionCookie' in s || 'bearerAuth' in s);
  if (route.method !== 'post' || !credentials || route.request?.headers) return route;
  const middleware = [...((route.middleware as unknown[] | undefined) ?? []), idempotencyLayer()];
  // The key reused for another request (or while its first request is answered) is a 409.
  const responses = { ...errorResponses(409), ...route.responses };
  return { ...route, middleware, responses, request: { ...route.request, headers: IdempotencyKeyHeader } };
}

/** What an operation that declares no query parameters accepts: none at all. */
const NO_QUERY = z.strictObject({});

/**
 * Every feature builds its routes on this, so every validation failure has one shape, and every
 * operation's query string is strict: one that declares no query schema gets an empty strict one,
 * so an unknown query parameter is a 400 naming it instead of being silently ignored.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const target = (result as { target?: string }).target;
        throw new AppError('validation_error', 'The request is not valid', zodIssuesToDetails(result.error.issues, target));
      }
    },
  });
  const register = router.openapi.bind(router) as (route: RouteShape, ...rest: unknown[]) => unknown;
  router.openapi = ((route: RouteShape, ...rest: unknown[]) =>
    register(withIdempotency(route.request?.query ? route : { ...route, request: { ...route.request, query: NO_QUERY } }), ...rest)) as typeof router.openapi;
  return router;
}

/**
 * One document per API version: the schemas list every network id whatever the instance runs (a
 * client generated from a test instance must accept mainnet answers), and the server entry says
 * which network this instance runs and whether its USDT is real money. (The request rules that
 * follow the configuration are written in by src/openapi-instance.ts.)
 */
export function describeInstance(document: Record<string, unknown>, network: Readonly<TronNetwork>): Record<string, unknown> {
  const where = network.test
    ? `This gatewayd server: ${network.id}, a TRON test network; its USDT (contract ${network.usdtContract}) has no value, and nothing it confirms is real money.`
    : `This gatewayd server: ${network.id}, USDT contract ${network.usdtContract}.`;
  for (const server of (document.servers as Array<{ description?: string }> | undefined) ?? []) server.description = where;
  return document;
}

/**
 * Marks a schema whose exact rule is this instance's configuration (src/openapi-instance.ts
 * sets it, then removes the mark): its value names which rule.
 */
export const INSTANCE_MARK = 'x-gatewayd-instance';

/** ISO 8601 date-time string schema used by every resource. */
export const DateTime = z.string().openapi({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' });
export const Mode = z.literal('live');
export const SuccessSchema = z.object({ success: z.literal(true) }).openapi('Success');

/**
 * `security` of an operation. Typed as a plain array: an inline literal with two differently keyed
 * objects makes @hono/zod-openapi infer `never` for the validated request.
 */
export const KEY_OR_SESSION: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { sessionCookie: [] }];
export const SESSION_ONLY: Array<Record<string, string[]>> = [{ sessionCookie: [] }];
