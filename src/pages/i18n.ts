/**
 * Page catalogues: locales/<lang>.json, flat objects of dotted keys ("page.checkout.title") to
 * strings with `{name}` placeholders, read once through the asset reader (so the packaged
 * executable finds them). Same shape and rules as the email catalogues (src/lib/i18n.ts on the
 * accounts branch): a key missing from a catalogue falls back to English; a key missing from
 * English is a programming error and throws. Also: which language a page request gets.
 */
import { readAssetText } from '../lib/assets.js';

export const LOCALES = ['en', 'fa', 'ar', 'zh', 'es', 'fr', 'ru'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** Each language named in itself, for the switcher. */
export const LOCALE_NAMES: Readonly<Record<Locale, string>> = {
  en: 'English',
  fa: 'فارسی',
  ar: 'العربية',
  zh: '中文',
  es: 'Español',
  fr: 'Français',
  ru: 'Русский',
};

const RTL: ReadonlySet<Locale> = new Set(['fa', 'ar']);
const catalogues = new Map<Locale, Readonly<Record<string, string>>>();

export function catalogue(locale: Locale): Readonly<Record<string, string>> {
  let cat = catalogues.get(locale);
  if (!cat) {
    const parsed = JSON.parse(readAssetText(`locales/${locale}.json`)) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`locales/${locale}.json: expected an object`);
    for (const [key, value] of Object.entries(parsed)) {
      if (typeof value !== 'string') throw new Error(`locales/${locale}.json: "${key}" is not a string`);
    }
    cat = Object.freeze(parsed as Record<string, string>);
    catalogues.set(locale, cat);
  }
  return cat;
}

export function isLocale(value: string | undefined | null): value is Locale {
  return (LOCALES as readonly string[]).includes(value ?? '');
}

/** The supported locale for a tag such as "fr", "fr-CA" or "zh_Hans", or undefined. */
export function matchLocale(value: string | undefined | null): Locale | undefined {
  if (!value) return undefined;
  const primary = value.trim().toLowerCase().split(/[-_]/)[0];
  return isLocale(primary) ? primary : undefined;
}

/** The best supported language of an Accept-Language header (q-values honoured; ties keep order). */
export function fromAcceptLanguage(header: string | undefined): Locale | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(',')
    .slice(0, 20)
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find(Boolean);
      return { tag: tag ?? '', q: q ? Number(q[1]) : 1, index };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const r of ranked) {
    const locale = matchLocale(r.tag);
    if (locale) return locale;
  }
  return undefined;
}

/** Order of precedence (issue 8): `?lang=`, then the language cookie, then Accept-Language. */
export function negotiateLocale(query: string | undefined, cookie: string | undefined, acceptLanguage: string | undefined): Locale {
  return matchLocale(query) ?? matchLocale(cookie) ?? fromAcceptLanguage(acceptLanguage) ?? DEFAULT_LOCALE;
}

export function isRtl(locale: Locale): boolean {
  return RTL.has(locale);
}

export type Translate = (key: string, params?: Record<string, string | number>) => string;

export function translate(locale: Locale, key: string, params: Record<string, string | number> = {}): string {
  const template = catalogue(locale)[key] ?? catalogue(DEFAULT_LOCALE)[key];
  if (template === undefined) throw new Error(`i18n: no message "${key}" in locales/${DEFAULT_LOCALE}.json`);
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

export function translator(locale: Locale): Translate {
  return (key, params) => translate(locale, key, params);
}

/** Every key of one namespace prefix, translated: handed to page scripts as a JSON data block. */
export function messagesWithPrefix(locale: Locale, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(catalogue(DEFAULT_LOCALE))) if (key.startsWith(prefix)) out[key] = translate(locale, key);
  return out;
}
