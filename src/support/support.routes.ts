/**
 * The support sub-app: merchant tickets (owner session), the staff inbox (owner session of an
 * account on support.staff_emails) and the public contact form and chat (support-public.routes.ts).
 */
import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { requireSession } from '../http/auth.js';
import type { AppEnv } from '../http/context.js';
import { createRouter, EmptyBody, errorResponses, jsonBody, jsonResponse, optionalJsonBody } from '../http/openapi.js';
import { registerPublicSupportRoutes } from './support-public.routes.js';
import {
  CreateTicketBody,
  MessageBody,
  StatusBody,
  SupportThreadSchema,
  SupportTicketListSchema,
  TicketIdParam,
  toInboxThreadResponse,
  toInboxTicketResponse,
  toThreadResponse,
  toTicketResponse,
} from './support.schemas.js';
import {
  addOwnerMessage,
  addStaffReply,
  closeOwnerTicket,
  createMerchantTicket,
  getInboxThread,
  getOwnerThread,
  listInbox,
  listOwnerTickets,
  requireStaff,
  setStatusByStaff,
} from './support.service.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { Mailer } from '../email/mailer.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & { mailer: Mailer };

const sessionSecurity = [{ sessionCookie: [] }];

export function supportRoutes(deps: Deps) {
  const app = createRouter();
  const session = requireSession(deps);
  // Staff status is checked before anything about the ticket, so the inbox tells a non-staff
  // account nothing (not even whether an id exists).
  const staff: MiddlewareHandler<AppEnv> = async (c, next) => {
    await requireStaff(deps, c.get('auth').merchantId);
    await next();
  };
  const inbox = [session, staff];

  registerPublicSupportRoutes(app, deps);

  // Owner tickets

  app.openapi(
    createRoute({
      method: 'get',
      path: '/support/tickets',
      operationId: 'listSupportTickets',
      description: 'Owner session only.',
      tags: ['Support'],
      summary: 'Your support tickets, newest activity first (at most 200)',
      security: sessionSecurity,
      middleware: [session],
      responses: { 200: jsonResponse(SupportTicketListSchema, 'Your tickets'), ...errorResponses(401, 403) },
    }),
    async (c) => {
      const tickets = await listOwnerTickets(deps, c.get('auth').merchantId);
      return c.json({ tickets: tickets.map(toTicketResponse) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/support/tickets',
      operationId: 'createSupportTicket',
      description: 'Owner session only. The team answers in the ticket and by email.',
      tags: ['Support'],
      summary: 'Open a support ticket',
      security: sessionSecurity,
      middleware: [session],
      request: { body: jsonBody(CreateTicketBody) },
      responses: { 201: jsonResponse(SupportThreadSchema, 'Ticket created'), ...errorResponses(400, 401, 403, 413) },
    }),
    async (c) => {
      const thread = await createMerchantTicket(deps, c.get('auth').merchantId, c.req.valid('json'));
      return c.json(toThreadResponse(thread), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/support/tickets/{id}',
      operationId: 'getSupportTicket',
      description: "Owner session only; another merchant's ticket answers 404.",
      tags: ['Support'],
      summary: 'One of your tickets with its messages',
      security: sessionSecurity,
      middleware: [session],
      request: { params: TicketIdParam },
      responses: { 200: jsonResponse(SupportThreadSchema, 'The ticket'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const thread = await getOwnerThread(deps, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json(toThreadResponse(thread), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/support/tickets/{id}/messages',
      operationId: 'postSupportTicketMessage',
      description: "Owner session only; another merchant's ticket answers 404.",
      tags: ['Support'],
      summary: 'Write on your ticket; the ticket becomes open (a closed one reopens)',
      security: sessionSecurity,
      middleware: [session],
      request: { params: TicketIdParam, body: jsonBody(MessageBody) },
      responses: { 201: jsonResponse(SupportThreadSchema, 'The ticket with the new message'), ...errorResponses(400, 401, 403, 404, 413) },
    }),
    async (c) => {
      const thread = await addOwnerMessage(deps, c.get('auth').merchantId, c.req.valid('param').id, c.req.valid('json').message);
      return c.json(toThreadResponse(thread), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/support/tickets/{id}/close',
      operationId: 'closeSupportTicket',
      description: "Owner session only; another merchant's ticket answers 404.",
      tags: ['Support'],
      summary: 'Close your ticket (closing a closed ticket changes nothing)',
      security: sessionSecurity,
      middleware: [session],
      request: { params: TicketIdParam, body: optionalJsonBody(EmptyBody) },
      responses: { 200: jsonResponse(SupportThreadSchema, 'The closed ticket'), ...errorResponses(400, 401, 403, 404, 413) },
    }),
    async (c) => {
      const thread = await closeOwnerTicket(deps, c.get('auth').merchantId, c.req.valid('param').id);
      return c.json(toThreadResponse(thread), 200);
    },
  );

  // Staff inbox

  app.openapi(
    createRoute({
      method: 'get',
      path: '/support/inbox',
      operationId: 'listSupportInbox',
      tags: ['Support inbox'],
      summary: 'Every ticket with contact details: open first, then answered, then closed; newest activity first within each (at most 300)',
      description: 'Needs the session of an account listed in support.staff_emails (403 support_staff_required otherwise).',
      security: sessionSecurity,
      middleware: inbox,
      responses: { 200: jsonResponse(SupportTicketListSchema, 'The inbox'), ...errorResponses(401, 403) },
    }),
    async (c) => {
      const tickets = await listInbox(deps);
      return c.json({ tickets: tickets.map(toInboxTicketResponse) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/support/inbox/{id}',
      operationId: 'getSupportInboxTicket',
      description: 'Support staff only (support.staff_emails); anyone else gets 403 support_staff_required.',
      tags: ['Support inbox'],
      summary: 'A ticket with its messages and contact details',
      security: sessionSecurity,
      middleware: inbox,
      request: { params: TicketIdParam },
      responses: { 200: jsonResponse(SupportThreadSchema, 'The ticket'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => c.json(toInboxThreadResponse(await getInboxThread(deps, c.req.valid('param').id)), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/support/inbox/{id}/messages',
      operationId: 'replySupportTicket',
      tags: ['Support inbox'],
      summary: 'Reply as staff; the ticket becomes answered',
      description: 'A contact-form ticket cannot be answered here: 409 email_reply_required (answer by email, then set the status).',
      security: sessionSecurity,
      middleware: inbox,
      request: { params: TicketIdParam, body: jsonBody(MessageBody) },
      responses: { 201: jsonResponse(SupportThreadSchema, 'The ticket with the reply'), ...errorResponses(400, 401, 403, 404, 409, 413) },
    }),
    async (c) => {
      const thread = await addStaffReply(deps, c.get('auth').merchantId, c.req.valid('param').id, c.req.valid('json').message);
      return c.json(toInboxThreadResponse(thread), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/support/inbox/{id}/status',
      operationId: 'setSupportTicketStatus',
      description: 'Support staff only (support.staff_emails): open, answered or closed.',
      tags: ['Support inbox'],
      summary: 'Set the status of any ticket',
      security: sessionSecurity,
      middleware: inbox,
      request: { params: TicketIdParam, body: jsonBody(StatusBody) },
      responses: { 200: jsonResponse(SupportThreadSchema, 'The ticket'), ...errorResponses(400, 401, 403, 404, 413) },
    }),
    async (c) => c.json(toInboxThreadResponse(await setStatusByStaff(deps, c.req.valid('param').id, c.req.valid('json').status)), 200),
  );

  return app;
}
