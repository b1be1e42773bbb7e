/** Public support pages: the contact form (answered by email) and the website chat widget. */
import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { hasSupportStaff } from '../accounts/support-staff.js';
import { formMessages } from './auth.pages.js';
import { pageContext, type Renderer } from './render.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'config'>;

export function supportPages(app: Hono<AppEnv>, deps: Deps, renderer: Renderer): void {
  app.get('/support', (c) => c.redirect('/support/contact', 303));
  app.get('/support/contact', (c) => {
    const ctx = pageContext(c, deps);
    // Without support staff the page says that support is off, with no form, captcha or chat.
    const open = hasSupportStaff(deps.config);
    return renderer.page(
      c,
      ctx,
      'contact',
      {
        title: ctx.t('page.contact.title'),
        scripts: open ? ['forms.js'] : [],
        captcha: open,
        chat: true,
        data: { messages: formMessages(ctx) },
      },
      { open },
    );
  });
}
