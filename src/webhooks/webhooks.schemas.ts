/** The API contract of webhooks, deliveries and events, and the mappers that build those resources. */
import { z } from '@hono/zod-openapi';
import { EventSchema } from '../events/events.schemas.js';
import { DateTime } from '../http/openapi.js';
import { iso, isoOrNull } from '../lib/clock.js';
import type { Delivery, Webhook } from './webhooks.repo.js';

export { EventSchema };

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export const CreateWebhookBody = z
  .strictObject({
    url: z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH).openapi({
      format: 'uri',
      example: 'https://shop.example.com/hooks/gatewayd',
      description:
        'Public https URL on an allowed port (443 by default); no credentials, fragment or IP literal; every address the name resolves to must be public.',
    }),
  })
  .openapi('CreateWebhook');

export const WebhookIdParam = z.object({ id: z.string().min(1).max(100).openapi({ param: { name: 'id', in: 'path' }, example: 'whk_3kTq9x' }) });
export const DeliveryIdParam = z.object({ id: z.string().min(1).max(100).openapi({ param: { name: 'id', in: 'path' }, example: 'dlv_8fHs2a' }) });

export const WebhookSchema = z
  .object({
    id: z.string(),
    url: z.string().openapi({ format: 'uri' }),
    created_at: DateTime,
    active: z.boolean(),
  })
  .openapi('Webhook');

export const DeliverySchema = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event_id: z.string(),
    status: z.enum(['pending', 'sending', 'delivered', 'failed', 'cancelled']),
    attempts: z.number().int(),
    next_attempt_at: DateTime.nullable(),
    delivered_at: DateTime.nullable(),
    last_error: z.string().nullable(),
    response_status: z.number().int().nullable(),
    created_at: DateTime,
  })
  .openapi('Delivery');

export const CreatedWebhookSchema = z
  .object({
    webhook: WebhookSchema,
    secret: z.string().openapi({ description: 'Signing secret (whsec_...). Shown once: store it now.', example: 'whsec_...' }),
  })
  .openapi('CreatedWebhook');

export const TestWebhookResultSchema = z.object({ event: EventSchema, deliveries: z.array(DeliverySchema) }).openapi('WebhookTestResult');
export const DeliveryEnvelopeSchema = z.object({ delivery: DeliverySchema }).openapi('DeliveryEnvelope');

export function toWebhookResponse(webhook: Webhook): z.infer<typeof WebhookSchema> {
  return { id: webhook.id, url: webhook.url, created_at: iso(webhook.createdAt), active: webhook.active };
}

export function toDeliveryResponse(delivery: Delivery): z.infer<typeof DeliverySchema> {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event_id: delivery.eventId,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: isoOrNull(delivery.nextAttemptAt),
    delivered_at: isoOrNull(delivery.deliveredAt),
    last_error: delivery.lastError,
    response_status: delivery.responseStatus,
    created_at: iso(delivery.createdAt),
  };
}

