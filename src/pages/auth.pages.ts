/**
 * Sign-in pages: /login, /register, /forgot, /reset (token in #reset=), /verify (token in
 * #verify=), /logout. The forms (sign-out included) post JSON to the auth API with plain JavaScript; tokens from mail
 * links stay in the URL fragment, which browsers never send to a server or a Referer.
 */
import type { Hono } from 'hono';
import { devUrlFlag, localUrl } from '../config.js';
import { optionalSession } from '../http/auth.js';
import type { AppEnv } from '../http/context.js';
import { messagesWithPrefix } from './i18n.js';
import { pageContext, type PageContext, type Renderer } from './render.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'rateLimiter'>;

/** Where to go after sign-in: only a console path of ours (never an open redirect). */
export function safeNext(value: string | undefined): string {
  return value !== undefined && /^\/console(\/[A-Za-z0-9_/-]*)?$/.test(value) ? value : '/console';
}

/** Messages the form scripts show, in the page's language. */
export function formMessages(ctx: PageContext): Record<string, string> {
  return {
    ...messagesWithPrefix(ctx.locale, 'page.error.'),
    ...messagesWithPrefix(ctx.locale, 'page.support.status.'),
    ...messagesWithPrefix(ctx.locale, 'page.chat.'),
  };
}

export function authPages(app: Hono<AppEnv>, deps: Deps, renderer: Renderer): void {
  const form = (name: string, titleKey: string, extra: { captcha?: boolean; google?: boolean; chat?: boolean } = {}) => {
    app.get(`/${name}`, async (c) => {
      const ctx = pageContext(c, deps);
      if ((name === 'login' || name === 'register') && (await optionalSession(c, deps))) return c.redirect(safeNext(c.req.query('next')), 303);
      return renderer.page(
        c,
        ctx,
        name,
        {
          title: ctx.t(titleKey),
          scripts: name === 'login' || name === 'reset' ? ['two-factor.js', 'forms.js'] : ['forms.js'],
          data: { messages: formMessages(ctx) },
          ...extra,
        },
        {
          next: safeNext(c.req.query('next')),
          // Without SMTP nobody can confirm a registration: the page says so and shows the way that works.
          emailOff: deps.config.email.smtp_url === '',
          signInUrl: `${deps.config.server.public_url.replace(/\/+$/, '')}/login`,
          // On `gatewayd dev` the database is the dev instance's own: only its client command reaches it.
          createCommand: deps.config.devMode ? `gatewayd dev merchant create${devUrlFlag(localUrl(deps.config.server.listen))}` : 'gatewayd merchant create',
        },
      );
    });
  };
  form('login', 'page.login.title', { captcha: true, google: true, chat: true });
  form('register', 'page.register.title', { captcha: true, google: true, chat: true });
  form('forgot', 'page.forgot.title', { captcha: true });
  form('reset', 'page.reset.title');
  form('verify', 'page.verify.title');

  app.get('/logout', (c) => {
    const ctx = pageContext(c, deps);
    return renderer.page(c, ctx, 'logout', { title: ctx.t('page.logout.title'), scripts: ['forms.js'], data: { messages: formMessages(ctx) } });
  });
}
