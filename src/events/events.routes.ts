/** GET /events and GET /events/{id}: the event history, for catching up after missed webhooks (key with invoices:read, or session). */
import { createRoute, z } from '@hono/zod-openapi';
import { requireKeyOrSession } from '../http/auth.js';
import { createRouter, errorResponses, jsonResponse, KEY_OR_SESSION } from '../http/openapi.js';
import { pageRequest, pagingQuery, repeatable } from '../http/paging.js';
import { AppError } from '../lib/errors.js';
import { EVENT_TYPES, findEventCursor, findMerchantEvent, listEventPage } from './events.repo.js';
import { EVENT_ID_EXAMPLE, EventEnvelopeSchema, EventIdParamSchema, EventListSchema, EventTypeSchema, toEventResponse } from './events.schemas.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'rateLimiter'>;

export const EventListQuerySchema = z.strictObject({
  ...pagingQuery('event', EVENT_ID_EXAMPLE),
  type: repeatable(EventTypeSchema, EVENT_TYPES.length)
    .optional()
    .openapi({
      param: { name: 'type', in: 'query', style: 'form', explode: true, description: 'Only events of these types; repeat it for several' },
      example: ['invoice.confirmed'],
    }),
});

export function eventRoutes(deps: Deps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/events',
      tags: ['Events'],
      operationId: 'listEvents',
      summary: 'List events, newest first, a page at a time',
      description:
        'Every event ever sent to your webhooks (and those that would have been), with the same body. Paged like GET /invoices: `limit` ' +
        '(1 to 500, 500 when absent), `starting_after` / `ending_before` an event id, `has_more`; filters `type` (repeatable), ' +
        '`created_gte`, `created_lt`. To catch up after missed webhooks, page with `ending_before` from the newest event you processed.',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      request: { query: EventListQuerySchema },
      responses: { 200: jsonResponse(EventListSchema, 'One page of events'), ...errorResponses(400, 401, 403, 429) },
    }),
    async (c) => {
      const merchantId = c.get('auth').merchantId;
      const q = c.req.valid('query');
      const page = await pageRequest(q, 'event', (id) => findEventCursor(deps.db, merchantId, id));
      const { items, hasMore } = await listEventPage(deps.db, merchantId, q.type, page);
      return c.json({ events: items.map(toEventResponse), has_more: hasMore }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/events/{id}',
      tags: ['Events'],
      operationId: 'getEvent',
      summary: 'One event of the calling merchant',
      description: "Another merchant's event answers 404, as an unknown id does.",
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      request: { params: EventIdParamSchema },
      responses: { 200: jsonResponse(EventEnvelopeSchema, 'The event'), ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (c) => {
      const event = await findMerchantEvent(deps.db, c.get('auth').merchantId, c.req.valid('param').id);
      if (!event) throw new AppError('not_found', 'Event not found');
      return c.json({ event: toEventResponse(event) }, 200);
    },
  );

  return app;
}
