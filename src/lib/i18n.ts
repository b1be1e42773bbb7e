/**
 * Message catalogues: locales/<lang>.json, flat objects of dotted keys ("email.verify.subject")
 * to strings with `{name}` placeholders. A key missing from a catalogue falls back to English; a
 * key missing from English is a programming error and throws. Catalogues ship with the program and
 * are read once through the asset reader (so the packaged executable finds them too).
 */
import { readAssetText } from './assets.js';

export const LOCALES = ['en', 'fa', 'ar', 'zh', 'es', 'fr', 'ru'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

const RTL: ReadonlySet<Locale> = new Set(['fa', 'ar']);

/** Catalogues are immutable program assets, so one copy per process is enough. */
const catalogues = new Map<Locale, Readonly<Record<string, string>>>();

function catalogue(locale: Locale): Readonly<Record<string, string>> {
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

/**
 * The supported locale for a request value such as "fr", "fr-CA" or "zh_Hans" (matched on the
 * primary language subtag, case-insensitively); English when absent or unsupported.
 */
export function resolveLocale(value: string | undefined | null): Locale {
  if (!value) return DEFAULT_LOCALE;
  const primary = value.trim().toLowerCase().split(/[-_]/)[0];
  return (LOCALES as readonly string[]).includes(primary ?? '') ? (primary as Locale) : DEFAULT_LOCALE;
}

export function isRtl(locale: Locale): boolean {
  return RTL.has(locale);
}

/** Whether `locale`'s own catalogue (no English fallback) has `key`. */
export function hasMessage(locale: Locale, key: string): boolean {
  return Object.hasOwn(catalogue(locale), key);
}

/** The message for `key` in `locale` (English when missing there), with `{param}` replaced. */
export function translate(locale: Locale, key: string, params: Record<string, string> = {}): string {
  const template = catalogue(locale)[key] ?? catalogue(DEFAULT_LOCALE)[key];
  if (template === undefined) throw new Error(`i18n: no message "${key}" in locales/${DEFAULT_LOCALE}.json`);
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? params[name]! : whole));
}

/** A translator bound to one locale, handy for templates. */
export function translator(locale: Locale): (key: string, params?: Record<string, string>) => string {
  return (key, params) => translate(locale, key, params);
}
