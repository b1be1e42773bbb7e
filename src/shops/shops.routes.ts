/**
 * The session API of shop connections (owner session only: a connection hands out a signing key).
 * The Epay and Epusdt facades the shops themselves call live in epay.routes.ts and epusdt.routes.ts.
 */
import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { requireKeyOrSession, requireSession } from '../http/auth.js';
import type { AppEnv } from '../http/context.js';
import {
  createRouter,
  EmptyBody,
  errorResponses,
  jsonBody,
  jsonResponse,
  KEY_OR_SESSION,
  optionalJsonBody,
  SESSION_ONLY,
  SuccessSchema,
} from '../http/openapi.js';
import { pageRequest } from '../http/paging.js';
import { notFound } from '../lib/errors.js';
import { MANUAL_SENDS_PER_MINUTE } from '../webhooks/webhooks.service.js';
import { findCallbackCursor, listCallbackPage } from './shop-notifies.repo.js';
import { findConnection, listConnections } from './shops.repo.js';
import {
  CallbackListQuerySchema,
  CreatedShopConnectionSchema,
  CreateShopConnectionBody,
  ShopConnectionIdParam,
  ShopCallbackEnvelopeSchema,
  ShopCallbackListSchema,
  ShopCallbackParams,
  ShopConnectionListSchema,
  ShopNotifyEnvelopeSchema,
  ShopNotifyIdParam,
  toShopCallbackResponse,
  toShopConnectionResponse,
  toShopNotifyResponse,
} from './shops.schemas.js';
import { createConnection, deleteConnection, rollConnectionKey } from './shops.service.js';
import { retryCallback, retryShopNotify, type ShopNotifier } from './shop-notify.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { HostLookup } from '../webhooks/url-policy.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & { dnsLookup: HostLookup };

export function shopConnectionRoutes(deps: Deps, notifier: ShopNotifier) {
  const app = createRouter();
  const session = requireSession(deps);
  const publicUrl = deps.config.server.public_url;
  // Manual retries send a request on demand: the same per-account budget as the webhooks' ones.
  const manualSends: MiddlewareHandler<AppEnv> = async (c, next) => {
    await deps.rateLimiter.consume('webhook_send', c.get('auth').merchantId, MANUAL_SENDS_PER_MINUTE, { context: c });
    await next();
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/shop-connections',
      operationId: 'createShopConnection',
      tags: ['Shop connections'],
      summary: 'Connect a shop through the Epay or Epusdt protocol; the key is shown once',
      description:
        'Owner session only. The answer carries what the shop is configured with: api_url, pid and key (docs/shops.md). ' +
        'At most 16 active connections per account (409 shop_connection_limit_reached).',
      security: SESSION_ONLY,
      middleware: [session] as const,
      request: { body: jsonBody(CreateShopConnectionBody) },
      responses: { 201: jsonResponse(CreatedShopConnectionSchema, 'Connected'), ...errorResponses(400, 401, 403, 404, 409, 413) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const { connection, key } = await createConnection(deps, c.get('auth').merchantId, {
        protocol: body.protocol,
        name: body.name,
        walletId: body.wallet_id,
        currency: body.currency,
        allowHttpNotify: body.allow_http_notify ?? false,
      });
      return c.json({ connection: toShopConnectionResponse(connection, publicUrl), key }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/shop-connections',
      operationId: 'listShopConnections',
      tags: ['Shop connections'],
      summary: 'The shop connections of the account, active first, newest first (never their keys)',
      description: 'Owner session only. Deleted connections stay listed with active false; a key is shown only when it is created or rolled.',
      security: SESSION_ONLY,
      middleware: [session] as const,
      responses: { 200: jsonResponse(ShopConnectionListSchema, 'The connections'), ...errorResponses(401, 403) },
    }),
    async (c) => {
      const connections = await listConnections(deps.db, c.get('auth').merchantId);
      return c.json({ connections: connections.map((x) => toShopConnectionResponse(x, publicUrl)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/shop-connections/{id}',
      operationId: 'deleteShopConnection',
      tags: ['Shop connections'],
      summary: 'Disconnect a shop: its key stops working and its pending callbacks are cancelled',
      description: "Its invoices stay as they are. Another merchant's connection answers 404.",
      security: SESSION_ONLY,
      middleware: [session] as const,
      request: { params: ShopConnectionIdParam },
      responses: { 200: jsonResponse(SuccessSchema, 'Deleted (also when it already was)'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      await deleteConnection(deps, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json({ success: true as const }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/shop-connections/{id}/roll',
      operationId: 'rollShopConnectionKey',
      tags: ['Shop connections'],
      summary: 'Replace the key of an active connection; the new key is shown once and the old one stops working at once',
      description: 'Callbacks sent from now on are signed with the new key. A deleted connection answers 404.',
      security: SESSION_ONLY,
      middleware: [session] as const,
      request: { params: ShopConnectionIdParam, body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(CreatedShopConnectionSchema, 'The connection and its new key'), ...errorResponses(400, 401, 403, 404, 413) },
    }),
    async (c) => {
      const { connection, key } = await rollConnectionKey(deps, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json({ connection: toShopConnectionResponse(connection, publicUrl), key }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/shop-connections/{id}/callbacks',
      operationId: 'listShopCallbacks',
      tags: ['Shop connections'],
      summary: "A connection's paid callbacks to its shop, newest first, each with every attempt made",
      description:
        'Paged like GET /invoices: `limit` (1 to 500, 500 when absent), `starting_after` / `ending_before` a callback id of this ' +
        'connection, `has_more`; filters `created_gte`, `created_lt`. Each callback carries its state and `attempt_history` (when, ' +
        "how long, the shop's HTTP status, the error, the Retry-After honoured, the next attempt planned). A deleted connection's " +
        "callbacks stay listed. An API key needs invoices:read. Another merchant's connection answers 404, as an unknown id does.",
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      request: { params: ShopConnectionIdParam, query: CallbackListQuerySchema },
      responses: { 200: jsonResponse(ShopCallbackListSchema, 'One page of callbacks'), ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (c) => {
      const merchantId = c.get('auth').merchantId;
      const connectionId = c.req.valid('param').id;
      if (!(await findConnection(deps.db, merchantId, connectionId))) throw notFound('Shop connection');
      const q = c.req.valid('query');
      const page = await pageRequest(q, 'callback', (id) => findCallbackCursor(deps.db, merchantId, connectionId, id));
      const { items, hasMore } = await listCallbackPage(deps.db, merchantId, connectionId, page);
      return c.json({ callbacks: items.map(toShopCallbackResponse), has_more: hasMore }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/shop-connections/{id}/callbacks/{callback_id}/retry',
      operationId: 'retryShopCallback',
      tags: ['Shop connections'],
      summary: "Make one attempt now for a shop's failed or pending paid callback",
      description:
        'As POST /webhooks/deliveries/{id}/retry does for a delivery: the attempt is made before the answer, and recorded in ' +
        '`attempt_history`. Delivered, cancelled and in-flight callbacks answer 409 delivery_not_retryable. Counts against the ' +
        "same 30 a minute as webhook tests and retries. Another merchant's connection, or a callback of another connection, answers 404.",
      security: SESSION_ONLY,
      middleware: [session, manualSends] as const,
      request: { params: ShopCallbackParams, body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(ShopCallbackEnvelopeSchema, 'The callback after the attempt'), ...errorResponses(400, 401, 403, 404, 409, 413, 429) },
    }),
    async (c) => {
      const { id, callback_id } = c.req.valid('param');
      const callback = await retryCallback(deps, notifier, c.get('auth').merchantId, id, callback_id);
      return c.json({ callback: toShopCallbackResponse(callback) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/shop-connections/notifies/{id}/retry',
      operationId: 'retryShopNotify',
      tags: ['Shop connections'],
      summary: "Make one attempt now for a shop's failed or pending paid callback (deprecated: use retryShopCallback)",
      description:
        'Deprecated: POST /shop-connections/{id}/callbacks/{callback_id}/retry does the same and answers the callback with its attempts. ' +
        'Delivered, cancelled and in-flight callbacks answer 409 delivery_not_retryable. Counts against the same 30 a minute as webhook tests and retries.',
      deprecated: true,
      security: SESSION_ONLY,
      middleware: [session, manualSends] as const,
      request: { params: ShopNotifyIdParam, body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(ShopNotifyEnvelopeSchema, 'The callback after the attempt'), ...errorResponses(400, 401, 403, 404, 409, 413, 429) },
    }),
    async (c) => {
      const notify = await retryShopNotify(deps, notifier, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json({ notify: toShopNotifyResponse(notify) }, 200);
    },
  );

  return app;
}
