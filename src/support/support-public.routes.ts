/**
 * Public support operations: the contact form and the website chat. No credentials; the chat is
 * reached with its private X-Support-Chat-Token. Captcha (when configured) and per-address rate
 * limits guard the two ways in; chat messages are limited per token.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { CHAT_CHALLENGE } from '../http/auth.js';
import { requireCaptcha } from '../http/captcha.js';
import { clientIp, clientSubject } from '../http/client-ip.js';
import type { AppEnv } from '../http/context.js';
import { errorResponses, jsonBody, jsonResponse } from '../http/openapi.js';
import { iso } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { AppError } from '../lib/errors.js';
import { hasSupportStaff } from '../accounts/support-staff.js';
import { ChatStartBody, ChatStartedSchema, ChatThreadSchema, ContactBody, ContactCreatedSchema, MessageBody, toChatThreadResponse } from './support.schemas.js';
import { addChatMessage, createContactTicket, getChat, startChat } from './support.service.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { Mailer } from '../email/mailer.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & { mailer: Mailer };

const CHAT_TOKEN_HEADER = 'X-Support-Chat-Token';
const chatSecurity = [{ supportChatToken: [] }];

/**
 * 503 support_unavailable while support.staff_emails is empty: nobody could read what the visitor
 * sends. Checked first, so no captcha token and no rate-limit budget is spent on a closed door.
 */
function requireSupportStaff(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (_c, next) => {
    if (!hasSupportStaff(deps.config))
      throw new AppError('support_unavailable', 'Support is not available on this server: nobody is set up to answer messages');
    await next();
  };
}

/** Contact and chat start share one budget per client address (rate_limits.public_per_ip). */
function perIpLimit(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await deps.rateLimiter.consume('support_public', clientSubject(c, deps.config.server.trust_proxy), deps.config.rate_limits.public_per_ip, { context: c });
    await next();
  };
}

/** Chat messages: 401 without a token, then rate_limits.chat_per_token per token. */
function perTokenLimit(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = c.req.header(CHAT_TOKEN_HEADER);
    if (!token) throw new AppError('unauthorized', `${CHAT_TOKEN_HEADER} is required`).withHeader('WWW-Authenticate', CHAT_CHALLENGE);
    await deps.rateLimiter.consume('support_chat', sha256Hex(token), deps.config.rate_limits.chat_per_token, { context: c });
    await next();
  };
}

export function registerPublicSupportRoutes(app: OpenAPIHono<AppEnv>, deps: Deps): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'supportChatToken', {
    type: 'apiKey',
    in: 'header',
    name: CHAT_TOKEN_HEADER,
    description: 'The chat_token returned once by POST /support/chat; a missing or unknown token is 401',
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/support/contact',
      operationId: 'sendContactMessage',
      tags: ['Support'],
      summary: 'Send the contact form; the team answers by email',
      description:
        'Only the reference is returned. Needs captcha_token when captcha is configured. Rate limited per client address. ' +
        '503 support_unavailable while the server has no support staff (support.staff_emails empty).',
      middleware: [requireSupportStaff(deps), perIpLimit(deps)],
      request: { body: jsonBody(ContactBody) },
      responses: { 201: jsonResponse(ContactCreatedSchema, 'Ticket created'), ...errorResponses(400, 413, 429, 503) },
    }),
    async (c) => {
      const { captcha_token, ...input } = c.req.valid('json');
      await requireCaptcha(deps, captcha_token, clientIp(c, deps.config.server.trust_proxy));
      const ticket = await createContactTicket(deps, input);
      return c.json({ ticket: { reference: ticket.reference, status: 'open' as const, created_at: iso(ticket.createdAt) } }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/support/chat',
      operationId: 'startSupportChat',
      tags: ['Support'],
      summary: 'Start a website chat',
      description:
        'Returns the chat and its chat_token, shown only in this response: send it as X-Support-Chat-Token to read and continue the chat. ' +
        'Contact details are never echoed. Needs captcha_token when captcha is configured. Rate limited per client address. ' +
        '503 support_unavailable while the server has no support staff (support.staff_emails empty).',
      middleware: [requireSupportStaff(deps), perIpLimit(deps)],
      request: { body: jsonBody(ChatStartBody) },
      responses: { 201: jsonResponse(ChatStartedSchema, 'Chat started'), ...errorResponses(400, 413, 429, 503) },
    }),
    async (c) => {
      const { captcha_token, ...input } = c.req.valid('json');
      await requireCaptcha(deps, captcha_token, clientIp(c, deps.config.server.trust_proxy));
      const chat = await startChat(deps, input);
      return c.json({ ...toChatThreadResponse(chat), chat_token: chat.token }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/support/chat',
      operationId: 'getSupportChat',
      description: "The chat's messages, oldest first, for the holder of its chat token.",
      tags: ['Support'],
      summary: 'Read the chat of this token',
      security: chatSecurity,
      responses: { 200: jsonResponse(ChatThreadSchema, 'The chat'), ...errorResponses(401) },
    }),
    async (c) => c.json(toChatThreadResponse(await getChat(deps, c.req.header(CHAT_TOKEN_HEADER))), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/support/chat/messages',
      operationId: 'postSupportChatMessage',
      tags: ['Support'],
      summary: 'Write in the chat of this token; a closed chat reopens',
      description: 'Rate limited per chat token. 503 support_unavailable while the server has no support staff (reading the chat still works).',
      security: chatSecurity,
      middleware: [requireSupportStaff(deps), perTokenLimit(deps)],
      request: { body: jsonBody(MessageBody) },
      responses: { 201: jsonResponse(ChatThreadSchema, 'The chat with the new message'), ...errorResponses(400, 401, 413, 429, 503) },
    }),
    async (c) => {
      const { message } = c.req.valid('json');
      const chat = await addChatMessage(deps, c.req.header(CHAT_TOKEN_HEADER), message);
      return c.json(toChatThreadResponse(chat), 201);
    },
  );
}
