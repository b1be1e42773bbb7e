import { createRoute } from '@hono/zod-openapi';
import { toEventResponse } from '../events/events.schemas.js';
import { requireSession } from '../http/auth.js';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/context.js';
import { createRouter, EmptyBody, errorResponses, jsonBody, jsonResponse, optionalJsonBody, SuccessSchema } from '../http/openapi.js';
import { createDeliverer } from './deliverer.js';
import { changeWebhook, rollSecret } from './webhook-controls.service.js';
import {
  CreatedWebhookSchema,
  CreateWebhookBody,
  DeliveryEnvelopeSchema,
  DeliveryIdParam,
  TestWebhookResultSchema,
  toDeliveryResponse,
  toWebhookResponse,
  UpdateWebhookBody,
  WebhookEnvelopeSchema,
  WebhookIdParam,
} from './webhooks.schemas.js';
import { deleteWebhook, MANUAL_SENDS_PER_MINUTE, registerWebhook, retryDelivery, sendTestEvent } from './webhooks.service.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { HostLookup } from './url-policy.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter' | 'deliveriesQueued'> & { dnsLookup: HostLookup };

const security = [{ sessionCookie: [] }];

export function webhookRoutes(deps: Deps) {
  const app = createRouter();
  const deliverer = createDeliverer(deps);
  // Per route, not app.use('/webhooks/*'): a path-wide guard would answer 401 to a wrong method
  // (405) or an unknown path under /webhooks (404).
  const session = requireSession(deps);
  // Test events and manual retries share one budget per account, counted once the session is known.
  const manualSends: MiddlewareHandler<AppEnv> = async (c, next) => {
    await deps.rateLimiter.consume('webhook_send', c.get('auth').merchantId, MANUAL_SENDS_PER_MINUTE, { context: c });
    await next();
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      tags: ['Webhooks'],
      summary: 'Register a webhook endpoint; the signing secret is shown once',
      description:
        'The URL is checked now and again before every delivery: https, an allowed port, no credentials or fragment, a DNS name ' +
        '(no IP literal, no localhost) whose every address is public. At most 16 active webhooks per account. A URL that already is ' +
        'an active webhook of the account answers 200 with that webhook (no secret, nothing changed) instead of making a second one.',
      security,
      middleware: [session] as const,
      request: { body: jsonBody(CreateWebhookBody) },
      responses: {
        200: jsonResponse(WebhookEnvelopeSchema, 'This URL already is an active webhook: that webhook, unchanged (its secret is not shown again)'),
        201: jsonResponse(CreatedWebhookSchema, 'Registered'),
        ...errorResponses(400, 401, 403, 409, 413),
      },
    }),
    async (c) => {
      const { url, enabled_events } = c.req.valid('json');
      const { webhook, secret } = await registerWebhook(deps, deliverer, c.get('auth').merchantId, url, enabled_events ?? null);
      const view = toWebhookResponse(webhook, deps.clock.now());
      return secret === null ? c.json({ webhook: view }, 200) : c.json({ webhook: view, secret }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/webhooks/{id}',
      operationId: 'updateWebhook',
      tags: ['Webhooks'],
      summary: 'Pause or resume a webhook, choose its event types, or change its URL',
      description:
        'Only the fields given change. active=false pauses (no new deliveries, pending ones cancelled); enabled_events null = every type; ' +
        'a new URL is checked as at registration. A deleted webhook answers 409 webhook_inactive.',
      security,
      middleware: [session] as const,
      request: { params: WebhookIdParam, body: jsonBody(UpdateWebhookBody) },
      responses: { 200: jsonResponse(WebhookEnvelopeSchema, 'The webhook after the change'), ...errorResponses(400, 401, 403, 404, 409, 413) },
    }),
    async (c) => {
      const webhook = await changeWebhook(deps, deliverer, c.get('auth').merchantId, c.req.valid('param').id, c.req.valid('json'));
      return c.json({ webhook: toWebhookResponse(webhook, deps.clock.now()) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/webhooks/{id}/roll-secret',
      operationId: 'rollWebhookSecret',
      tags: ['Webhooks'],
      summary: 'Make a new signing secret; the old one keeps signing for 24 hours',
      description:
        'The new secret is shown once. For 24 hours every delivery carries both signatures, X-Gateway-Signature: sha256=<new>,sha256=<old>, ' +
        'so a receiver can switch to the new secret at any time in between; a receiver accepts a delivery when any one value matches. ' +
        'Rolling again during a roll drops the oldest secret. Send an Idempotency-Key: a retry then gets the same new secret.',
      security,
      middleware: [session] as const,
      request: { params: WebhookIdParam, body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(CreatedWebhookSchema, 'The webhook and its new secret'), ...errorResponses(400, 401, 403, 404, 409, 413) },
    }),
    async (c) => {
      const { webhook, secret } = await rollSecret(deps, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json({ webhook: toWebhookResponse(webhook, deps.clock.now()), secret }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/webhooks/{id}',
      operationId: 'deleteWebhook',
      description: "Owner session only. The webhook stops receiving events and its pending deliveries are cancelled; another merchant's webhook answers 404.",
      tags: ['Webhooks'],
      summary: 'Deactivate a webhook and cancel its pending deliveries',
      security,
      middleware: [session] as const,
      request: { params: WebhookIdParam },
      responses: { 200: jsonResponse(SuccessSchema, 'Deactivated (also when it already was)'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      await deleteWebhook(deps, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json({ success: true as const }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/webhooks/{id}/test',
      operationId: 'testWebhook',
      tags: ['Webhooks'],
      summary: 'Send a signed webhook.test event to this webhook only',
      description:
        'The first attempt is made before the answer, so the delivery shows its outcome (bounded by webhooks.timeout_seconds); ' +
        'a failed attempt is retried on the usual schedule. Test events and manual retries: at most 30 a minute per account.',
      security,
      middleware: [session, manualSends] as const,
      request: { params: WebhookIdParam, body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(TestWebhookResultSchema, 'The stored event and its delivery'), ...errorResponses(400, 401, 403, 404, 409, 413, 429) },
    }),
    async (c) => {
      const { event, deliveries } = await sendTestEvent(deps, deliverer, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json({ event: toEventResponse(event), deliveries: deliveries.map(toDeliveryResponse) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/webhooks/deliveries/{id}/retry',
      operationId: 'retryDelivery',
      tags: ['Webhooks'],
      summary: 'Make one attempt now for a failed or pending delivery',
      description: 'Delivered, cancelled and in-flight deliveries answer 409 delivery_not_retryable; a delivery of a deleted webhook 409 webhook_inactive.',
      security,
      middleware: [session, manualSends] as const,
      request: { params: DeliveryIdParam, body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(DeliveryEnvelopeSchema, 'The delivery after the attempt'), ...errorResponses(400, 401, 403, 404, 409, 413, 429) },
    }),
    async (c) => {
      const delivery = await retryDelivery(deps, deliverer, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json({ delivery: toDeliveryResponse(delivery) }, 200);
    },
  );

  return app;
}
