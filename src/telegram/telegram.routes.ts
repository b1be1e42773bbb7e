/**
 * The owner's Telegram link (session only): GET /me/telegram (state, current code and the t.me deep
 * link), POST /me/telegram/code (a fresh one-time code), PATCH /me/telegram (which notices),
 * DELETE /me/telegram (unlink). 503 `telegram_unavailable` when no bot is configured.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { requireSession } from '../http/auth.js';
import type { AppEnv } from '../http/context.js';
import { createRouter, errorResponses, jsonBody, jsonResponse, SESSION_ONLY } from '../http/openapi.js';
import { AppError } from '../lib/errors.js';
import { NOTICE_KINDS } from './telegram.queue.js';
import { getLink, newLinkCode, setNotices, unlink } from './telegram.repo.js';
import { botUsername } from './telegram.worker.js';
import type { TelegramRuntime } from './telegram.runtime.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & { watcherStatus: WatcherStatus; telegram: TelegramRuntime | undefined };

const tags = ['Account'];
const NoticeKindSchema = z.enum(NOTICE_KINDS);
export const TelegramLinkSchema = z
  .object({
    linked: z.boolean(),
    linked_at: z.string().nullable(),
    notices: z.array(NoticeKindSchema).openapi({ description: 'The notices sent to the linked chat' }),
    code: z.string().nullable().openapi({ description: 'The current one-time link code (send it to the bot), valid 30 minutes; null when none' }),
    code_expires_at: z.string().nullable(),
    bot_username: z.string().nullable().openapi({ description: "The bot's username (getMe), when Telegram told it" }),
    deep_link: z.string().nullable().openapi({ description: 'https://t.me/<bot>?start=<code>, when both are known' }),
  })
  .openapi('TelegramLink');
const Envelope = z.object({ telegram: TelegramLinkSchema }).openapi('TelegramLinkEnvelope');
const PatchBody = z.strictObject({ notices: z.array(NoticeKindSchema).max(NOTICE_KINDS.length) }).openapi('TelegramNoticesUpdate');

export function telegramRoutes(deps: Deps): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const middleware = [requireSession(deps)];
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const view = async (merchantId: string) => {
    if (!deps.telegram) throw new AppError('telegram_unavailable', 'Telegram notices are not set up on this server (notify.telegram_bot_token)');
    const link = await getLink(deps.db, merchantId, deps.clock.now());
    const bot = await botUsername(deps);
    return {
      telegram: {
        linked: link.linked,
        linked_at: iso(link.linkedAt),
        notices: link.notices,
        code: link.code,
        code_expires_at: iso(link.codeExpiresAt),
        bot_username: bot,
        deep_link: bot && link.code ? `https://t.me/${bot}?start=${link.code}` : null,
      },
    };
  };
  const route = (method: 'get' | 'post' | 'delete', path: string, operationId: string, summary: string) =>
    createRoute({
      method,
      path,
      tags,
      security: SESSION_ONLY,
      middleware,
      operationId,
      summary,
      description: 'Owner session only. 503 `telegram_unavailable` when the operator set no notify.telegram_bot_token.',
      responses: { 200: jsonResponse(Envelope, 'The Telegram link'), ...errorResponses(401, 403, 503) },
    });

  app.openapi(route('get', '/me/telegram', 'getTelegramLink', 'The Telegram link: linked or not, the notices, the current link code'), async (c) =>
    c.json(await view(c.get('auth').merchantId), 200),
  );
  app.openapi(route('post', '/me/telegram/code', 'newTelegramLinkCode', 'A fresh one-time code to send to the bot (replaces the last one)'), async (c) => {
    if (!deps.telegram) throw new AppError('telegram_unavailable', 'Telegram notices are not set up on this server (notify.telegram_bot_token)');
    await newLinkCode(deps.db, c.get('auth').merchantId, deps.clock.now());
    return c.json(await view(c.get('auth').merchantId), 200);
  });
  app.openapi(
    createRoute({
      method: 'patch',
      path: '/me/telegram',
      tags,
      security: SESSION_ONLY,
      middleware,
      operationId: 'updateTelegramNotices',
      summary: 'Which notices the linked chat gets',
      description: 'Owner session only. 503 `telegram_unavailable` when the operator set no notify.telegram_bot_token.',
      request: { body: jsonBody(PatchBody) },
      responses: { 200: jsonResponse(Envelope, 'The Telegram link'), ...errorResponses(400, 401, 403, 413, 503) },
    }),
    async (c) => {
      if (!deps.telegram) throw new AppError('telegram_unavailable', 'Telegram notices are not set up on this server (notify.telegram_bot_token)');
      await setNotices(deps.db, c.get('auth').merchantId, c.req.valid('json').notices, deps.clock.now());
      return c.json(await view(c.get('auth').merchantId), 200);
    },
  );
  app.openapi(route('delete', '/me/telegram', 'unlinkTelegram', 'Unlink the chat: no more messages'), async (c) => {
    if (!deps.telegram) throw new AppError('telegram_unavailable', 'Telegram notices are not set up on this server (notify.telegram_bot_token)');
    await unlink(deps.db, c.get('auth').merchantId, deps.clock.now());
    return c.json(await view(c.get('auth').merchantId), 200);
  });
  return app;
}
