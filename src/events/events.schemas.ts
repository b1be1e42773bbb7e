/** The Event resource: one schema for the API, the Dashboard and the webhook body. */
import { z } from '@hono/zod-openapi';
import { DateTime, Mode } from '../http/openapi.js';
import { EVENT_TYPES } from './events.repo.js';

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
