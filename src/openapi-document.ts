/**
 * The finishing of the served OpenAPI document: what the zod schemas cannot say per operation. Tags
 * declared, the licence, `security: []` on public operations, a 405 on every operation, every
 * response header the server sends declared once (components.headers) and referenced where it is
 * sent, and the `webhooks` section with each event type's body.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { EVENT_DESCRIPTIONS, eventOfType } from './events/events.schemas.js';
import { EVENT_TYPES } from './events/events.repo.js';
import type { AppEnv } from './http/context.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const TAGS: Record<string, string> = {
  System: 'Liveness and public configuration',
  Authentication: 'Accounts, sign-in and the owner session (the gw_session cookie)',
  Account: "The owner's Dashboard and merchant settings",
  Wallets: 'Receiving addresses the invoices are paid to',
  Invoices: 'Invoices with a unique payable amount, their list, cancel and review',
  Events: 'The event history: what was (or would have been) sent to your webhooks',
  Transfers: 'Wrong payments: unmatched, late and dust transfers to your addresses, and contests on a shared address',
  Webhooks: 'Signed event deliveries to your endpoints',
  'API keys': 'Credentials for servers: Authorization: Bearer gw_live_...',
  Checkout: "The payer's view of an invoice",
  Ledger: 'The operational ledger as CSV',
  Support: 'Contact form, chat and support tickets',
};

const int = (example: number) => ({ type: 'integer', minimum: 0, example });

/** Every response header the API sends, declared once. */
const HEADERS: Record<string, { description: string; schema: Doc }> = {
  XRequestId: {
    description: 'The id of this request: the X-Request-Id you sent if it matched [A-Za-z0-9._-]{1,64}, else a new one. Quote it when reporting a problem.',
    schema: { type: 'string', example: 'req_9fQ2Lk7Zp1Xv3Bn5Cm8Dw0' },
  },
  RateLimitLimit: {
    description: 'Requests a minute this limit allows (also the burst). Sent on every answer to a request that counted against a limit.',
    schema: int(600),
  },
  RateLimitRemaining: { description: 'Requests that may be made right now under this limit.', schema: int(599) },
  RateLimitReset: { description: 'Seconds until the whole burst is available again.', schema: int(1) },
  RetryAfter: { description: 'Seconds to wait before the next attempt.', schema: { type: 'integer', minimum: 1, example: 2 } },
  Allow: { description: 'The methods this path has.', schema: { type: 'string', example: 'GET, HEAD, POST' } },
  SetCookie: {
    description:
      'The owner session cookie (HttpOnly, SameSite=Lax), set on sign-in and when a session is renewed, cleared on sign-out: `__Host-gw_session` (Secure, Path=/, no Domain) when the public URL is https, `gw_session` on plain http (local use).',
    schema: { type: 'string', example: 'gw_session=3kT9wq2LmX8vR4pZ...; Max-Age=2592000; Path=/; HttpOnly; Secure; SameSite=Lax' },
  },
  ContentDisposition: {
    description: 'An attachment with a dated file name.',
    schema: { type: 'string', example: 'attachment; filename="ledger-2026-01-01.csv"' },
  },
};

const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The answers every operation of a kind can give, whatever its route declares, because shared
 * middleware gives them: 400 (every query string and path parameter is validated, an unknown query
 * parameter included), 405, 500; 413 where a body may be sent (the body guard reads one on every
 * POST, PUT, PATCH and DELETE); 401 with a credential; 403 with a session (the Origin rule, an API
 * key on a session-only operation) or a key (scope); 429 with a key (the per-key limit).
 */
const STANDARD_ANSWERS: Array<{ status: string; description: string; when: (op: Doc, method: string, schemes: string[]) => boolean }> = [
  { status: '400', description: 'Validation error', when: () => true },
  {
    status: '401',
    description: 'Authentication required: the credential is missing, unknown, revoked or expired',
    when: (_op, _m, schemes) => schemes.length > 0,
  },
  {
    status: '403',
    description: 'Refused: Origin not this server (session), an API key where a session is needed, or a key without the scope',
    when: (_op, _m, schemes) => schemes.includes('sessionCookie') || schemes.includes('bearerAuth'),
  },
  { status: '413', description: 'Payload too large (more than 64 KiB)', when: (_op, method) => BODY_METHODS.has(method) },
  { status: '429', description: 'Rate limit exceeded', when: (_op, _m, schemes) => schemes.includes('bearerAuth') },
  { status: '500', description: 'Internal server error', when: () => true },
];

/** The WWW-Authenticate challenge of an operation's 401, by the schemes it accepts. */
function challengeHeader(schemes: string[]): Doc {
  const challenges = [
    schemes.includes('bearerAuth') ? 'Bearer realm="gatewayd"' : undefined,
    schemes.includes('sessionCookie') ? 'Session realm="gatewayd", cookie="gw_session"' : undefined,
    schemes.includes('supportChatToken') ? 'SupportChatToken realm="gatewayd", header="X-Support-Chat-Token"' : undefined,
  ].filter(Boolean);
  return {
    description:
      'RFC 9110 challenges naming the credentials this operation accepts: Bearer (an API key), Session (the gw_session cookie from POST /api/v1/auth/login), SupportChatToken (the X-Support-Chat-Token header)',
    schema: { type: 'string', example: challenges.join(', ') || 'Session realm="gatewayd", cookie="gw_session"' },
  };
}

/** HEAD of a GET operation: the same answers with their headers and no body. */
function headOf(get: Doc): Doc {
  const responses: Doc = {};
  for (const [status, response] of Object.entries<Doc>(get.responses)) responses[status] = { description: response.description, headers: response.headers };
  return {
    ...get,
    operationId: `${get.operationId}Head`,
    summary: `${get.summary ?? get.operationId} (headers only)`,
    description: `HEAD of GET: the same status and headers, no body. ${get.description ?? ''}`.trim(),
    responses,
  };
}

/** The webhook bodies, one per event type, as the `webhooks` section of the document. */
export function registerWebhookDocs(app: OpenAPIHono<AppEnv>): void {
  const header = (name: string, description: string, example: string) => z.string().openapi({ param: { name, in: 'header', description }, example });
  for (const type of EVENT_TYPES) {
    app.openAPIRegistry.registerWebhook({
      method: 'post',
      path: type,
      tags: ['Webhooks'],
      operationId: `${type.replace(/[._]([a-z])/g, (_, c: string) => c.toUpperCase())}Webhook`,
      summary: `The ${type} event, POSTed to your webhook URL`,
      description:
        `${EVENT_DESCRIPTIONS[type]} Verify X-Gateway-Signature over the raw body before trusting it (HMAC-SHA256 keyed by the whole whsec_ secret, ` +
        'over timestamp + "." + body, compared as bytes in constant time), reject stale timestamps, and deduplicate on the event id: a delivery may be repeated.',
      security: [],
      request: {
        headers: z.object({
          'X-Gateway-Signature': header(
            'X-Gateway-Signature',
            '"sha256=" + lowercase hex HMAC-SHA256',
            'sha256=5d41402abc4b2a76b9719d911017c592ae1b3f2c6d1e0f9a8b7c6d5e4f3a2b1c',
          ),
          'X-Gateway-Timestamp': header('X-Gateway-Timestamp', 'Unix seconds of this attempt; part of the signed text', '1767225600'),
          'X-Gateway-Event-Id': header('X-Gateway-Event-Id', 'The event id (also in the body)', 'evt_Jd8Kq2Lw5Rt0Yx3Bn6Cv9m'),
        }),
        body: { required: true, content: { 'application/json': { schema: eventOfType(type) } } },
      },
      responses: {
        200: { description: 'Any 2xx acknowledges the delivery; anything else, or no answer within webhooks.timeout_seconds, is retried on the schedule' },
      },
    });
  }
}

export function finishDocument(doc: Doc): Doc {
  const used = new Set<string>();
  doc.info.license = { name: 'MIT', identifier: 'MIT' };
  doc.components.headers = HEADERS;
  for (const [path, item] of Object.entries<Doc>(doc.paths)) {
    for (const [method, op] of Object.entries<Doc>(item)) {
      for (const tag of op.tags ?? []) used.add(tag);
      // Public operations say so: no security requirement at all.
      op.security ??= [];
      const schemes: string[] = op.security.flatMap((s: Doc) => Object.keys(s));
      const session = schemes.includes('sessionCookie');
      for (const answer of STANDARD_ANSWERS)
        if (answer.when(op, method, schemes)) op.responses[answer.status] ??= { description: answer.description, content: ERROR_CONTENT };
      op.responses['405'] ??= {
        description: 'Method not allowed: this path has no such method',
        headers: { Allow: ref('Allow') },
        content: ERROR_CONTENT,
      };
      op.responses = Object.fromEntries(Object.entries<Doc>(op.responses).sort(([x], [y]) => x.localeCompare(y)));
      const limited = '429' in op.responses;
      if (op.responses['401']) op.responses['401'].headers = { 'WWW-Authenticate': challengeHeader(schemes), ...op.responses['401'].headers };
      for (const [status, response] of Object.entries<Doc>(op.responses)) {
        const headers: Doc = { 'X-Request-Id': ref('XRequestId'), ...response.headers };
        if (limited)
          Object.assign(headers, {
            'RateLimit-Limit': ref('RateLimitLimit'),
            'RateLimit-Remaining': ref('RateLimitRemaining'),
            'RateLimit-Reset': ref('RateLimitReset'),
          });
        if (status === '429') headers['Retry-After'] = ref('RetryAfter');
        const ok = status.startsWith('2');
        if (ok && (session || path.includes('/auth/'))) headers['Set-Cookie'] = ref('SetCookie');
        if (ok && response.content?.['text/csv']) headers['Content-Disposition'] = ref('ContentDisposition');
        response.headers = headers;
      }
    }
    // Every GET answers HEAD too (hono serves it), so the document says so.
    if (item.get) item.head = headOf(item.get);
  }
  for (const hook of Object.values<Doc>(doc.webhooks ?? {})) for (const op of Object.values<Doc>(hook)) for (const tag of op.tags ?? []) used.add(tag);
  doc.tags = [...used].sort().map((name) => ({ name, description: TAGS[name] ?? name }));
  return doc;
}
