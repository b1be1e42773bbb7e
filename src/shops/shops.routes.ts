/**
 * The session API of shop connections (owner session only: a connection hands out a signing key).
 * The Epay and Epusdt facades the shops themselves call live in epay.routes.ts and epusdt.routes.ts.
 */
import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { requireSession } from '../http/auth.js';
import type { AppDeps } from '../app-deps.js';
import type { AppEnv } from '../http/context.js';
import { createRouter, EmptyBody, errorResponses, jsonBody, jsonResponse, optionalJsonBody, SESSION_ONLY, SuccessSchema } from '../http/openapi.js';
import { MANUAL_SENDS_PER_MINUTE } from '../webhooks/webhooks.service.js';
import { listConnections } from './shops.repo.js';
import {
  CreatedShopConnectionSchema,
  CreateShopConnectionBody,
  ShopConnectionIdParam,
  ShopConnectionListSchema,
  ShopNotifyEnvelopeSchema,
  ShopNotifyIdParam,
  toShopConnectionResponse,
  toShopNotifyResponse,
} from './shops.schemas.js';
import { createConnection, deleteConnection, rollConnectionKey } from './shops.service.js';
import { retryShopNotify, type ShopNotifier } from './shop-notify.js';

export function shopConnectionRoutes(deps: AppDeps, notifier: ShopNotifier) {
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
      method: 'post',
      path: '/shop-connections/notifies/{id}/retry',
      operationId: 'retryShopNotify',
      tags: ['Shop connections'],
      summary: "Make one attempt now for a shop's failed or pending paid callback",
      description:
        'Delivered, cancelled and in-flight callbacks answer 409 delivery_not_retryable. Counts against the same 30 a minute as webhook tests and retries.',
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
