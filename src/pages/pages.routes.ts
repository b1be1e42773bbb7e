/**
 * Everything a browser opens outside /api/v1: the checkout page, the sign-in pages, the public
 * support pages, the console and the static files. Mounted at the root by createApp.
 */
import { Hono } from 'hono';
import { optionalSession } from '../http/auth.js';
import type { AppDeps, AppEnv } from '../http/context.js';
import { authPages } from './auth.pages.js';
import { checkoutPages } from './checkout.pages.js';
import { consolePages } from './console.pages.js';
import { consoleSupportPages } from './console-support.pages.js';
import { createRenderer, pageContext } from './render.js';
import { serveStatic } from './static.js';
import { supportPages } from './support.pages.js';

export function pagesRoutes(deps: AppDeps) {
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

  // The HTML 404 of the page area (the API keeps its JSON 404).
  app.get('/console/*', (c) => {
    const ctx = pageContext(c, deps);
    return renderer.page(c, ctx, 'message', { title: ctx.t('page.error.not_found_title') }, { message: ctx.t('page.error.not_found'), back: '/console' }, 404);
  });

  return app;
}
