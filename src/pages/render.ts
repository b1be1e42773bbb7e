/**
 * Server-rendered pages: eta templates from templates/pages (auto-escaped: `<%= %>` escapes,
 * `<%~ %>` is kept for our own markup such as the QR SVG and the rendered body), one layout with
 * the language switcher, the Content-Security-Policy and the page headers.
 */
import { hasSupportStaff } from '../accounts/support-staff.js';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { Eta } from 'eta/core';
import { formatAmount } from '../lib/amounts.js';
import { listAssets, readAssetText } from '../lib/assets.js';
import { isRtl, LOCALE_NAMES, LOCALES, negotiateLocale, translator, type Locale, type PageContext } from './i18n.js';
import { staticUrl } from './static.js';
import { fiatText, formatRate, utcTime } from './price-format.js';
import { groupsHtml, run, SafeHtml, timeRun, translateHtml, urlHtml } from './runs.js';
import { findNetwork } from '../chains/networks.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'config'>;

export const LANG_COOKIE = 'gw_lang';
const LANG_COOKIE_MAX_AGE = 365 * 24 * 3600;

const CAPTCHA_ORIGINS = {
  turnstile: ['https://challenges.cloudflare.com'],
  hcaptcha: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
} as const;
const CAPTCHA_SCRIPTS = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
  hcaptcha: 'https://js.hcaptcha.com/1/api.js',
} as const;
const GOOGLE_ORIGIN = 'https://accounts.google.com';
export const GOOGLE_SCRIPT = 'https://accounts.google.com/gsi/client';

export interface PageView {
  /** Already translated. */
  title: string;
  /** Static script file names (templates/static), loaded deferred in this order. */
  scripts?: string[];
  /** Load the configured captcha provider's script (forms that need a captcha token). */
  captcha?: boolean;
  /** Load Google's sign-in script (sign-in and registration, when configured). */
  google?: boolean;
  /** Messages and settings handed to the page scripts as a JSON data block (never executed). */
  data?: Record<string, unknown>;
  /** Without JavaScript, reload the page every N seconds (checkout). */
  noscriptRefresh?: number;
  /** The website chat widget (public pages); shown only while someone answers support (support.staff_emails). */
  chat?: boolean;
  /** Console pages show the console navigation and the sign-out button. */
  nav?: { merchantName: string; staff: boolean; active: string; banner?: string | null };
}

export type { PageContext } from './i18n.js';

/** The request's language; a `?lang=` choice is remembered in a cookie. */
export function pageContext(c: Context, deps: Deps): PageContext {
  const query = c.req.query('lang');
  const locale = negotiateLocale(query, getCookie(c, LANG_COOKIE), c.req.header('accept-language'));
  if (query !== undefined && query === locale) {
    setCookie(c, LANG_COOKIE, locale, {
      path: '/',
      sameSite: 'Lax',
      maxAge: LANG_COOKIE_MAX_AGE,
      secure: deps.config.secureCookies,
    });
  }
  return { locale, dir: isRtl(locale) ? 'rtl' : 'ltr', t: translator(locale) };
}

export interface Renderer {
  /** Renders `templates/pages/<name>.eta` inside the layout and answers with it. */
  page(c: Context, ctx: PageContext, name: string, view: PageView, data?: Record<string, unknown>, status?: number): Response;
}

/** "2026-05-12 09:30 UTC": one unambiguous format in every language (the time zone is stated). */
export function formatDate(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A date as markup: a <time> isolated left-to-right, so right-to-left pages never reorder its parts. */
export function formatDateHtml(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return `<time datetime="${new Date(ms).toISOString()}" dir="ltr">${formatDate(ms)}</time>`;
}

/** The configured block explorer's page of a transaction, or undefined when links are off. */
export function explorerLink(template: string): ((hash: string) => string) | undefined {
  if (template === '') return undefined;
  return (hash) => template.replace('{tx}', encodeURIComponent(hash));
}

/** JSON that is safe inside a <script type="application/json"> block. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

function contentSecurityPolicy(deps: Deps, view: PageView): string {
  const scripts = ["'self'"];
  const frames: string[] = [];
  const connect = ["'self'"];
  const styles = ["'self'"];
  const provider = deps.config.captcha.provider;
  if (view.captcha && provider !== '') {
    scripts.push(...CAPTCHA_ORIGINS[provider]);
    frames.push(...CAPTCHA_ORIGINS[provider]);
    connect.push(...CAPTCHA_ORIGINS[provider]);
    // Both widgets inject their own styles.
    styles.push(...CAPTCHA_ORIGINS[provider], "'unsafe-inline'");
  }
  if (view.google && deps.config.google.client_id !== '') {
    scripts.push(GOOGLE_ORIGIN);
    frames.push(GOOGLE_ORIGIN);
    connect.push(GOOGLE_ORIGIN);
    if (!styles.includes("'unsafe-inline'")) styles.push("'unsafe-inline'");
    styles.push(`${GOOGLE_ORIGIN}/gsi/style`);
  }
  return [
    "default-src 'self'",
    `script-src ${scripts.join(' ')}`,
    `style-src ${styles.join(' ')}`,
    "img-src 'self' data:",
    `connect-src ${connect.join(' ')}`,
    `frame-src ${frames.length ? frames.join(' ') : "'none'"}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * A request path made safe to print as a link of ours: path-absolute and same-origin. A path that
 * starts with `//` or `/\` (a request for `//evil.example/x` reaches the 404 page) would be read by
 * a browser as another host, so leading slashes and backslashes collapse into one.
 */
export function sameOriginPath(pathname: string): string {
  return `/${pathname.replace(/^[/\\]+/, '')}`;
}

/** The current path with `lang` replaced, for the switcher (the rest of the query is kept). */
function languageLinks(c: Context, current: Locale) {
  const url = new URL(c.req.url);
  const path = sameOriginPath(url.pathname);
  return LOCALES.map((locale) => {
    const params = new URLSearchParams(url.search);
    params.set('lang', locale);
    return { locale, name: LOCALE_NAMES[locale], href: `${path}?${params.toString()}`, current: locale === current };
  });
}

let templates: Eta | undefined;

/**
 * The page templates, one set per process (shared by every renderer: the console's, the EPay
 * pages', the shop return pages'). Each file is read and compiled when first rendered: an idle
 * server (or one that never shows the console) holds neither their text nor their compiled
 * functions, and pays for neither at start-up.
 */
function pageTemplates(): Eta {
  if (templates) return templates;
  const eta = new Eta({ autoEscape: true, autoTrim: false, cache: true, varName: 'it' });
  for (const file of listAssets('templates/pages')) {
    if (!file.endsWith('.eta')) continue;
    let compiled: ReturnType<Eta['compile']> | undefined;
    eta.loadTemplate(`@${file.slice(0, -4)}`, function (this: Eta, data?: object, options?: Parameters<ReturnType<Eta['compile']>>[1]) {
      compiled ??= eta.compile(readAssetText(`templates/pages/${file}`));
      return compiled.call(this, data, options);
    });
  }
  return (templates = eta);
}

export function createRenderer(deps: Deps): Renderer {
  const eta = pageTemplates();
  const provider = deps.config.captcha.provider;

  return {
    page(c, ctx, name, view, data = {}, status = 200) {
      const common = {
        ...ctx,
        static: staticUrl,
        date: formatDate,
        dateHtml: formatDateHtml,
        explorer: explorerLink(deps.config.console.explorer_tx_url),
        amount: formatAmount,
        // Fiat prices: the amount in the page's language with its symbol, a rate to 4 decimals, HH:MM of an ISO time.
        fiat: (amount: string, currency: string) => fiatText(ctx, amount, currency),
        rate: formatRate,
        utcTime,
        // Sentences with amounts and dates inside, as escaped markup for `<%~`: each value an isolated run.
        tHtml: (key: string, values: Record<string, string | SafeHtml>) => translateHtml(ctx.t, key, values),
        run,
        timeRun,
        // Addresses, hashes and URLs as markup that wraps only between groups (or after '/', '?', '&').
        groupsHtml,
        urlHtml,
        captcha: view.captcha && provider !== '' ? { provider, siteKey: deps.config.captcha.site_key } : null,
        google: view.google && deps.config.google.client_id !== '' ? { clientId: deps.config.google.client_id } : null,
        // A test network says so on every page: a payer must never mistake it for a real payment.
        testNetwork: deps.config.network.test ? deps.config.network.id : null,
        networkLabel: deps.config.network.label,
        // Any network's plain name ("BNB Smart Chain (BEP20)"), the same in every language.
        networkName,
      };
      const body = eta.render(`@${name}`, { ...common, title: view.title, ...data });
      const scripts = (view.scripts ?? []).map(staticUrl);
      const chat = view.chat === true && hasSupportStaff(deps.config);
      if (chat) scripts.push(staticUrl('chat.js'));
      const external: string[] = [];
      if (common.captcha) external.push(CAPTCHA_SCRIPTS[common.captcha.provider]);
      if (common.google) external.push(GOOGLE_SCRIPT);
      const html = eta.render('@layout', {
        ...common,
        title: view.title,
        body,
        scripts,
        external,
        nav: view.nav ?? null,
        chat,
        // The contact form answers "not available" without support staff: no link to it then.
        contact: hasSupportStaff(deps.config),
        noscriptRefresh: view.noscriptRefresh ?? null,
        languages: languageLinks(c, ctx.locale),
        pageData: jsonForScript({ locale: ctx.locale, ...(view.data ?? {}) }),
      });
      c.header('Content-Security-Policy', contentSecurityPolicy(deps, view));
      // Pages can hold capability links (checkout) or account data (console): never cached.
      c.header('Cache-Control', 'no-store');
      c.header('Vary', 'Cookie, Accept-Language');
      return c.html(html, status as 200);
    },
  };
}

/** The plain name of a network by its id; the id itself for one this version does not know. */
export function networkName(id: string): string {
  return findNetwork(id)?.label ?? id;
}
