/** Public support pages: the contact form (answered by email) and the website chat widget. */
import type { Hono } from 'hono';
import type { AppDeps } from '../deps.js';
import type { AppEnv } from '../http/context.js';
import { formMessages } from './auth.pages.js';
import { pageContext, type Renderer } from './render.js';

export function supportPages(app: Hono<AppEnv>, deps: AppDeps, renderer: Renderer): void {
  app.get('/support', (c) => c.redirect('/support/contact', 303));
  app.get('/support/contact', (c) => {
    const ctx = pageContext(c, deps);
    return renderer.page(c, ctx, 'contact', {
      title: ctx.t('page.contact.title'),
      scripts: ['forms.js'],
      captcha: true,
      chat: true,
      data: { messages: formMessages(ctx) },
    });
  });
}
