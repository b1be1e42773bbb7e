/** The Event resource: one schema for the API, the Dashboard and the webhook body. */
import { z } from '@hono/zod-openapi';
import { DateTime, Mode } from '../http/openapi.js';
import { iso } from '../lib/clock.js';
import { EVENT_TYPES, type StoredEvent } from './events.repo.js';

export const EventSchema = z
  .object({
    id: z.string(),
    type: z.enum(EVENT_TYPES),
    created_at: DateTime,
    mode: Mode,
    data: z.record(z.string(), z.unknown()).openapi({
      description: 'invoice events: {invoice}; invoice.confirmed and a paid invoice.review add {transaction}; webhook.test: {webhook_id}',
    }),
  })
  .openapi('Event');

/** The Event resource as the API and the webhook body show it. */
export function toEventResponse(event: StoredEvent) {
  return { id: event.id, type: event.type, created_at: iso(event.createdAt), mode: 'live' as const, data: event.data };
}
