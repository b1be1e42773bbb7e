/**
 * Console support pages: the owner's tickets (list, new, thread, reply, close) and, for staff
 * accounts, the inbox (every ticket, thread with contact details, reply, status). Reads go through
 * the support repository; actions are forms sent to the support JSON API, like every console form.
 */
import { hasSupportStaff, staffLacksTwoFactor } from '../accounts/support-staff.js';
import type { Context, Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { findInboxTicket, findMerchantTicket, listInboxTickets, listMerchantTickets, listMessages } from '../support/support.repo.js';
import { consoleGet, consoleRenderer, type ConsoleRequest } from './console.pages.js';
import type { Renderer } from './render.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { RateBook } from '../pricing/rate-book.js';
import type { TelegramRuntime } from '../telegram/telegram.runtime.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & {
  watcherStatus: WatcherStatus;
  rates: RateBook;
  telegram: TelegramRuntime | undefined;
};

const TICKET_LIST_LIMIT = 200;
const INBOX_LIST_LIMIT = 300;

export function consoleSupportPages(app: Hono<AppEnv>, deps: Deps, renderer: Renderer): void {
  const render = consoleRenderer(renderer, deps);
  const notFound = (c: Context, req: ConsoleRequest, back: string) =>
    renderer.page(c, req.ctx, 'message', { title: req.ctx.t('page.error.not_found_title') }, { message: req.ctx.t('page.error.not_found'), back }, 404);

  consoleGet(app, deps, '/console/support', async (c, req) => {
    const tickets = await listMerchantTickets(deps.db, req.merchant.id, TICKET_LIST_LIMIT);
    return render(c, req, 'console-support', 'support', req.ctx.t('console.support.title'), { tickets, inbox: false, staffed: hasSupportStaff(deps.config) });
  });

  consoleGet(app, deps, '/console/support/:id', async (c, req) => {
    const ticket = await findMerchantTicket(deps.db, req.merchant.id, c.req.param('id') ?? '');
    if (!ticket) return notFound(c, req, '/console/support');
    const messages = await listMessages(deps.db, ticket.id);
    return render(c, req, 'console-ticket', 'support', ticket.subject, { ticket, messages, inbox: false, contact: null });
  });

  consoleGet(app, deps, '/console/inbox', async (c, req) => {
    // Not staff: the same page as an unknown path (the API answers 403 support_staff_required).
    if (!req.staff) return notFound(c, req, '/console');
    // auth.require_2fa_for_staff: the account page says why and sets it up.
    if (await staffLacksTwoFactor(deps, req.merchant.id)) return c.redirect('/console/account#two-factor', 303);
    const tickets = await listInboxTickets(deps.db, INBOX_LIST_LIMIT);
    return render(c, req, 'console-support', 'inbox', req.ctx.t('console.inbox.title'), { tickets, inbox: true });
  });

  consoleGet(app, deps, '/console/inbox/:id', async (c, req) => {
    if (!req.staff) return notFound(c, req, '/console');
    // auth.require_2fa_for_staff: the account page says why and sets it up.
    if (await staffLacksTwoFactor(deps, req.merchant.id)) return c.redirect('/console/account#two-factor', 303);
    const ticket = await findInboxTicket(deps.db, c.req.param('id') ?? '');
    if (!ticket) return notFound(c, req, '/console/inbox');
    const messages = await listMessages(deps.db, ticket.id);
    return render(c, req, 'console-ticket', 'inbox', ticket.subject, {
      ticket,
      messages,
      inbox: true,
      contact: { name: ticket.name, email: ticket.email, merchantName: ticket.merchantName },
    });
  });
}
