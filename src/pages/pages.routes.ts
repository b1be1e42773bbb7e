/**
 * Everything a browser opens outside /api/v1: the checkout page, the sign-in pages, the public
 * support pages, the console and the static files. Mounted at the root by createApp.
 */
import { Hono, type Context } from 'hono';
import { optionalSession } from '../http/auth.js';
import type { AppEnv } from '../http/context.js';
import { authPages } from './auth.pages.js';
import { checkoutPages } from './checkout.pages.js';
import { consolePages } from './console.pages.js';
import { consoleSupportPages } from './console-support.pages.js';
import { consoleShopPages } from './console-shops.pages.js';
import { consoleWalletPages } from './console-wallets.pages.js';
import { guidesPages } from './guides.pages.js';
import { createRenderer, pageContext } from './render.js';
import { serveStatic } from './static.js';
import { supportPages } from './support.pages.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { RateBook } from '../pricing/rate-book.js';
import type { TelegramRuntime } from '../telegram/telegram.runtime.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & {
  watcherStatus: WatcherStatus;
  rates: RateBook;
  telegram: TelegramRuntime | undefined;
};

export function pagesRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();
  const renderer = createRenderer(deps);

  app.get('/static/:name', (c) => {
    const res = serveStatic(c, c.req.param('name'));
    if (res) return res;
    return c.text('Not found', 404);
  });

  app.get('/', async (c) => c.redirect((await optionalSession(c, deps)) ? '/console' : '/login', 303));

  checkoutPages(app, deps, renderer);
  authPages(app, deps, renderer);
  supportPages(app, deps, renderer);
  consolePages(app, deps, renderer);
  consoleSupportPages(app, deps, renderer);
  consoleShopPages(app, deps, renderer);
  consoleWalletPages(app, deps, renderer);
  guidesPages(app, deps, renderer);

  const notFound = (c: Context) => {
    const ctx = pageContext(c, deps);
    const back = c.req.path.startsWith('/console') ? '/console' : '/';
    return renderer.page(c, ctx, 'message', { title: ctx.t('page.error.not_found_title') }, { message: ctx.t('page.error.not_found'), back }, 404);
  };

  return { routes: app, notFound };
}

/** A browser asking for a page that does not exist gets the HTML 404; API clients keep the JSON envelope. */
export function wantsPage(c: Context, apiPrefix: string): boolean {
  return (c.req.method === 'GET' || c.req.method === 'HEAD') && !c.req.path.startsWith(`${apiPrefix}/`) && (c.req.header('accept') ?? '').includes('text/html');
}
