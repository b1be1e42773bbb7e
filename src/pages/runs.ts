/**
 * Sentences with amounts, dates and ids inside, as markup: each value its own left-to-right
 * isolate (`<bdi dir="ltr" class="num">` or `<time dir="ltr">`), so a right-to-left page never
 * reorders its digits with the words around it. Everything else, the catalogue's text and any
 * text a person typed (a merchant's name), is HTML-escaped here: the result is safe for `<%~`.
 */
import type { Translate } from './i18n.js';

/** Markup already made safe by this module. */
export class SafeHtml {
  constructor(readonly html: string) {}
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

/** A number, amount, id or address as one isolated left-to-right run. */
export function run(value: string | number): SafeHtml {
  return new SafeHtml(`<bdi dir="ltr" class="num">${escapeHtml(String(value))}</bdi>`);
}

/** A time as an isolated `<time>` with its machine-readable value. */
export function timeRun(iso: string, text: string): SafeHtml {
  return new SafeHtml(`<time datetime="${escapeHtml(iso)}" dir="ltr">${escapeHtml(text)}</time>`);
}

/** Runs joined as the language lists things ("a, b and c"; Arabic "a وb"), as one piece of markup. */
export function listRun(locale: string, items: readonly SafeHtml[], type: Intl.ListFormatType = 'conjunction'): SafeHtml {
  const text = new Intl.ListFormat(locale, { type }).format(items.map((_, i) => `\u0000${i}\u0000`));
  return new SafeHtml(escapeHtml(text).replace(/\u0000(\d+)\u0000/g, (_, i: string) => items[Number(i)]!.html));
}

/** An identifier shown as is (an event type), isolated left-to-right. */
export function codeRun(value: string): SafeHtml {
  return new SafeHtml(`<code dir="ltr">${escapeHtml(value)}</code>`);
}

/**
 * The catalogue sentence `key` as markup: plain string values and the sentence itself escaped,
 * SafeHtml values (runs) inserted as they are.
 */
export function translateHtml(t: Translate, key: string, values: Record<string, string | SafeHtml>): string {
  const marks: string[] = [];
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (value instanceof SafeHtml) {
      params[name] = `\u0000${marks.length}\u0000`;
      marks.push(value.html);
    } else {
      // A typed NUL could otherwise pose as one of the marks.
      params[name] = value.replace(/\u0000/g, '');
    }
  }
  return escapeHtml(t(key, params)).replace(/\u0000(\d+)\u0000/g, (_, i: string) => marks[Number(i)]!);
}

/**
 * A long value (an address, a hash, an id) as markup in groups of `size` characters, each a span that
 * never breaks inside, with a break opportunity (`<wbr>`) between groups: a narrow screen wraps it
 * only at a group boundary. A last group shorter than half a group joins the one before it, so no
 * line ever holds two lone characters. The text itself has no spaces: selecting it copies the value.
 */
export function groupsHtml(value: string, size = 4): string {
  return valueGroups(value, size)
    .map((g) => `<span class="g">${escapeHtml(g)}</span>`)
    .join('<wbr>');
}

export function valueGroups(value: string, size: number): string[] {
  const groups: string[] = [];
  for (let i = 0; i < value.length; i += size) groups.push(value.slice(i, i + size));
  if (groups.length > 1 && groups[groups.length - 1]!.length <= size / 2) groups[groups.length - 2] += groups.pop()!;
  return groups;
}

/**
 * A URL as markup that breaks only after a `/`, `?` or `&`, never inside its host and port; a part
 * longer than 24 characters (a token) is itself in groups of 8.
 */
export function urlHtml(url: string): string {
  const parts = url.match(/[^/?&]*(?:[/?&]+|$)/g)!.filter((p) => p !== '');
  return parts
    .flatMap((p) => (p.length > 24 ? valueGroups(p, 8) : [p]))
    .map((p) => `<span class="u">${escapeHtml(p)}</span>`)
    .join('<wbr>');
}
