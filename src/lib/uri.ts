/**
 * The one rule for the URLs the API takes and gives back (docs/api.md, URLs): a URL is accepted
 * when it matches the document's pattern, which is a strict subset of RFC 3986 (so every accepted
 * value is a valid JSON Schema `format: uri`, as ajv-formats and Prism check it), and it is stored
 * and answered in its WHATWG serialisation (what browsers and fetch use), which matches the same
 * pattern again: lower-case host, no default port, dot segments removed, `'` in a query escaped.
 *
 * Only characters RFC 3986 allows unescaped are accepted (unreserved, sub-delims, ":", "@", "/",
 * "?" and percent-escapes); anything else (a space, `|`, `{`, `"`, `\`, non-ASCII text) must be
 * percent-encoded by the client. The host is a DNS name of letters, digits and inner hyphens whose
 * last label starts with a letter (an IDN in its xn-- form), fully qualified or not as the rule says;
 * where the rule allows any host (`gatewayd dev`), also an IPv4 dotted quad or a bracketed IPv6
 * literal.
 */

/** A character of a path segment, query or fragment that RFC 3986 allows as it is, or a percent-escape. */
const PCHAR = "(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const LAST_LABEL = '[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
/** One or more labels, the last starting with a letter (never read as an IPv4 address). */
const FQDN = `(?:${LABEL}\\.)+${LAST_LABEL}`;
const NAME = `(?:${LABEL}\\.)*${LAST_LABEL}`;
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
const H16 = '[0-9A-Fa-f]{1,4}';
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
/** RFC 3986's IPv6address, alternative by alternative. */
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
  `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
  `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
].join('|');
/** 0 to 65535 (a larger port is no URL to WHATWG). */
const PORT = '(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})';

export interface UriRule {
  /** `https` only, or `http` too. */
  http: boolean;
  /** fqdn: a DNS name with a dot; name: one with or without; any: a name or an IP literal. */
  host: 'fqdn' | 'name' | 'any';
  /** The ports an explicit `:port` may name (absent = any); 443 in the list makes the port optional. */
  ports?: readonly number[];
  /** A `#fragment` is allowed (a return URL), or not (a webhook). */
  fragment: boolean;
}

/** The pattern (ECMA-262, as JSON Schema reads it) of an absolute URL under `rule`. */
export function uriPattern(rule: UriRule): string {
  const scheme = rule.http ? 'https?' : 'https';
  const host = { fqdn: FQDN, name: NAME, any: `(?:${NAME}|${IPV4}|\\[(?:${IPV6})\\])` }[rule.host];
  const ports =
    rule.ports === undefined ? `(?::${PORT})?` : `(?::(?:${[...new Set(rule.ports)].sort((a, b) => a - b).join('|')}))${rule.ports.includes(443) ? '?' : ''}`;
  const rest = `(?:/${PCHAR}*)*(?:\\?(?:${PCHAR}|[/?])*)?${rule.fragment ? `(?:#(?:${PCHAR}|[/?])*)?` : ''}`;
  return `^${scheme}://${host}${ports}${rest}$`;
}

const compiled = new Map<string, RegExp>();
function regexOf(rule: UriRule): RegExp {
  const pattern = uriPattern(rule);
  let re = compiled.get(pattern);
  if (!re) compiled.set(pattern, (re = new RegExp(pattern, 'u')));
  return re;
}

/**
 * The stored form of `raw` under `rule` (its WHATWG serialisation), or undefined when `raw` is
 * outside the rule. A URL whose serialisation would leave the rule is refused too, so what is
 * stored is always what the document promises.
 */
export function canonicalUri(raw: string, rule: UriRule): string | undefined {
  const re = regexOf(rule);
  if (!re.test(raw)) return undefined;
  if (!URL.canParse(raw)) return undefined;
  const href = serialisedUri(raw);
  return re.test(href) ? href : undefined;
}

/** The WHATWG serialisation of a URL already checked (or built by the gateway itself); `raw` if it is none. */
export function serialisedUri(raw: string): string {
  try {
    return new URL(raw).href;
  } catch {
    return raw;
  }
}
