/**
 * Pages on top of the shared catalogues (src/lib/i18n.ts, locales/<lang>.json; page keys live
 * under "page." and "console."): which language a page request gets, the switcher's names, and
 * the messages handed to page scripts.
 */
import { readAssetText } from '../lib/assets.js';
import { DEFAULT_LOCALE, hasMessage, isRtl, LOCALES, translate as translateShared, type Locale } from '../lib/i18n.js';

export { DEFAULT_LOCALE, isRtl, LOCALES, type Locale };

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

export type Translate = (key: string, params?: Record<string, string | number>) => string;

/**
 * A message that depends on a number is stored as plural forms, `<key>.<category>` for each
 * category of `Intl.PluralRules` in that language (en: one, other; ru: one, few, many, other; ar:
 * zero, one, two, few, many, other; zh: other alone), and asked for by its bare key with a `count`
 * parameter: the form is chosen by the rules of the page's language (English having a `.one` and an
 * `.other` marks a key as plural). A count shown as "200+" is chosen by its number. A form the
 * catalogue lacks falls back to its `.other`.
 */
export function pluralKey(locale: Locale, key: string, count: string | number | undefined): string {
  if (!hasMessage(DEFAULT_LOCALE, `${key}.one`) || !hasMessage(DEFAULT_LOCALE, `${key}.other`)) return key;
  const n = typeof count === 'number' ? count : Number.parseFloat(String(count ?? ''));
  const form = `${key}.${Number.isFinite(n) ? pluralRules(locale).select(n) : 'other'}`;
  return hasMessage(locale, form) ? form : `${key}.other`;
}

const rules = new Map<Locale, Intl.PluralRules>();
function pluralRules(locale: Locale): Intl.PluralRules {
  let r = rules.get(locale);
  if (!r) rules.set(locale, (r = new Intl.PluralRules(locale)));
  return r;
}

export function translator(locale: Locale): Translate {
  return (key, params = {}) =>
    translateShared(locale, pluralKey(locale, key, params.count), Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])));
}

let englishKeys: readonly string[] | undefined;

/** Every key of one namespace prefix, translated: handed to page scripts as a JSON data block. */
export function messagesWithPrefix(locale: Locale, prefix: string): Record<string, string> {
  englishKeys ??= Object.keys(JSON.parse(readAssetText(`locales/${DEFAULT_LOCALE}.json`)) as Record<string, string>);
  const out: Record<string, string> = {};
  for (const key of englishKeys) if (key.startsWith(prefix)) out[key] = translateShared(locale, key);
  return out;
}

/** The request's language, direction and translator, as every page renders with. */
export interface PageContext {
  locale: Locale;
  dir: 'rtl' | 'ltr';
  t: Translate;
}
