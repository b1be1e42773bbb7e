/** The API contract of webhooks, deliveries and events, and the mappers that build those resources. */
import { z } from '@hono/zod-openapi';
import { EventSchema, EventTypeSchema } from '../events/events.schemas.js';
import { DateTime, INSTANCE_MARK } from '../http/openapi.js';
import { iso, isoOrNull } from '../lib/clock.js';
import type { Delivery, Webhook } from './webhooks.repo.js';
import type { Config } from '../config.js';
import { uriPattern, type UriRule } from '../lib/uri.js';

export { EventSchema };

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * The static part of the URL policy as a pattern (src/lib/uri.ts): https, a fully qualified DNS
 * name, an allowed port, no credentials or fragment; on `gatewayd dev` http or https, any host and
 * port. The served document carries this instance's (src/openapi-instance.ts).
 */
export function webhookUriRule(config: Pick<Config, 'devMode' | 'webhooks'>): UriRule {
  return config.devMode ? { http: true, host: 'any', fragment: false } : { http: false, host: 'fqdn', ports: config.webhooks.allowed_ports, fragment: false };
}

const WebhookUrl = z
  .string()
  .min(1)
  .max(MAX_WEBHOOK_URL_LENGTH)
  // The pattern is this instance's (set when the document is served, INSTANCE_MARK): the URL policy
  // refuses the rest with 400 invalid_webhook_url and a reason (scheme, credentials, fragment, ...).
  .openapi({
    [INSTANCE_MARK]: 'webhook_url',
    pattern: uriPattern({ http: false, host: 'fqdn', ports: [443], fragment: false }),
    format: 'uri',
    example: 'https://shop.example.com/hooks/gatewayd',
    description:
      'Public https URL on an allowed port (443 by default); no credentials, fragment or IP literal; every address the name resolves to must be public. ' +
      "Only characters RFC 3986 allows as they are (percent-encode the rest); stored in its WHATWG serialisation. The pattern is this instance's " +
      '(its webhooks.allowed_ports; on `gatewayd dev`, http or https to any host and port); a name that is localhost, does not resolve or resolves ' +
      'to a non-public address is refused by the URL policy with 400 invalid_webhook_url and its reason.',
  });

const EnabledEvents = z
  .array(EventTypeSchema)
  .min(1)
  .refine((types) => new Set(types).size === types.length, 'event types must not repeat')
  .nullable()
  .openapi({
    uniqueItems: true,
    description: 'The event types this webhook receives; null = every type, also types added later (webhook.test is always sent to the webhook it tests)',
    example: ['invoice.confirmed', 'invoice.expired'],
  });

export const CreateWebhookBody = z
  .strictObject({ url: WebhookUrl, enabled_events: EnabledEvents.optional() })
  .openapi('CreateWebhook', { description: 'enabled_events absent or null: every type' });

export const UpdateWebhookBody = z
  .strictObject({
    active: z.boolean().optional().openapi({ description: 'false pauses the webhook (no new deliveries; its pending ones are cancelled), true resumes it' }),
    enabled_events: EnabledEvents.optional(),
    url: WebhookUrl.optional(),
  })
  .refine((b) => b.active !== undefined || b.enabled_events !== undefined || b.url !== undefined, { message: 'give active, enabled_events or url' })
  .openapi('UpdateWebhook', { minProperties: 1 });

export const WebhookIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'whk_3kTq9x' }),
});
export const DeliveryIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'dlv_8fHs2a' }),
});

export const WebhookSchema = z
  .object({
    id: z.string(),
    url: z.string().openapi({ format: 'uri' }),
    created_at: DateTime,
    active: z.boolean().openapi({ description: 'Receives events: false when paused (PATCH active=false) or deleted' }),
    deleted: z.boolean().openapi({ description: 'Deleted (DELETE): for good; register the URL again to receive events' }),
    enabled_events: EnabledEvents,
    previous_secret_expires_at: DateTime.nullable().openapi({
      description: 'While a secret roll is in progress: when the previous secret stops signing (deliveries carry both signatures until then); else null',
    }),
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

export const WebhookEnvelopeSchema = z.object({ webhook: WebhookSchema }).openapi('WebhookEnvelope');

export const TestWebhookResultSchema = z.object({ event: EventSchema, deliveries: z.array(DeliverySchema) }).openapi('WebhookTestResult');
export const DeliveryEnvelopeSchema = z.object({ delivery: DeliverySchema }).openapi('DeliveryEnvelope');

export function toWebhookResponse(webhook: Webhook, now: number): z.infer<typeof WebhookSchema> {
  const rolling = webhook.previousSecretExpiresAt !== null && webhook.previousSecretExpiresAt > now;
  return {
    id: webhook.id,
    url: webhook.url,
    created_at: iso(webhook.createdAt),
    active: webhook.active && !webhook.paused,
    deleted: !webhook.active,
    enabled_events: webhook.enabledEvents,
    previous_secret_expires_at: rolling ? iso(webhook.previousSecretExpiresAt!) : null,
  };
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
