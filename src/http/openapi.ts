/**
 * Shared pieces of the OpenAPI contract: the router factory (validation failures become
 * 400 validation_error), the error envelope schema and the standard error responses.
 */
import { OpenAPIHono, z } from '@hono/zod-openapi';
import { AppError, ERROR_CODES, type ErrorDetail } from '../lib/errors.js';
import { NETWORK_IDS, type TronNetwork } from '../lib/tron.js';
import type { AppEnv } from './context.js';

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES as [string, ...string[]]),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
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
  503: 'A dependency (email, captcha, identity provider) is unavailable',
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

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

export function zodIssuesToDetails(issues: readonly z.core.$ZodIssue[], target?: string): ErrorDetail[] {
  return issues.slice(0, 20).map((issue) => {
    const path = issue.path.map(String).join('.');
    const prefix = target && target !== 'json' ? `${target}${path ? '.' : ''}` : '';
    return { path: `${prefix}${path}` || (target ?? ''), message: issue.message };
  });
}

/** Every feature builds its routes on this, so every validation failure has one shape. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const target = (result as { target?: string }).target;
        throw new AppError('validation_error', 'The request is not valid', zodIssuesToDetails(result.error.issues, target));
      }
    },
  });
}

/**
 * The document of one instance: the schemas accept every network id (one codebase serves them all),
 * but an instance runs one network, so its served document names only that one, and says in its
 * description whether its USDT is real money.
 */
export function narrowToNetwork(document: Record<string, unknown>, network: Readonly<TronNetwork>): Record<string, unknown> {
  const all = JSON.stringify(NETWORK_IDS);
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (Array.isArray(record.enum) && JSON.stringify(record.enum) === all) record.enum = [network.id];
    Object.values(record).forEach(visit);
  };
  visit(document.components);
  visit(document.paths);
  const info = document.info as { description?: string };
  const where = network.test
    ? `This instance runs on ${network.id}, a TRON test network: its USDT (contract ${network.usdtContract}) has no value, and nothing it confirms is real money.`
    : `This instance runs on ${network.id}: USDT contract ${network.usdtContract}.`;
  info.description = `${info.description ?? ''} ${where}`.trim();
  return document;
}

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
