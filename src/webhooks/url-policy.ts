/**
 * Where a webhook may point (docs/api.md, Webhooks: receiving events). The same rules run at registration and
 * before every delivery attempt: https, an allowed port, no userinfo, no fragment, a DNS name (never
 * an IP literal in any notation, never `localhost`), and every address the name resolves to public
 * unless `webhooks.allow_private_cidrs` exempts it. The address that passed is the one the sender
 * connects to, so DNS cannot change between the check and the connection.
 *
 * One exception, in a process started by `gatewayd dev` only (config.devMode, which no file or
 * environment variable can set): a test chain's webhooks may go to a developer's own receiver, so
 * http, any port, IP literals, localhost and private addresses are allowed there.
 */
import { isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { ConfigError, type Config } from '../config.js';

/** Resolves a host name to its addresses (the system resolver by default; an injected one in tests). */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Which rule a refused webhook URL broke: a stable word, so pages can say it in the visitor's language. */
export const URL_REJECTED_REASONS = [
  'not_url',
  'scheme',
  'credentials',
  'fragment',
  'port',
  'ip_literal',
  'localhost',
  'not_fqdn',
  'dns_timeout',
  'unresolvable',
  'blocked_address',
] as const;
export type UrlRejectedReason = (typeof URL_REJECTED_REASONS)[number];

/** A rule broken by a webhook URL; `message` says which, for the 400 answer and `last_error`. */
export class UrlRejected extends Error {
  constructor(
    readonly reason: UrlRejectedReason,
    message: string,
  ) {
    super(message);
    this.name = 'UrlRejected';
  }
}

export interface ParsedTarget {
  /** The normalised URL (WHATWG serialisation): what is stored and requested. */
  url: URL;
  /** Lower case, without a trailing dot: what SNI, Host and the resolver see. */
  hostname: string;
  port: number;
}

export interface CheckedTarget extends ParsedTarget {
  /** The address that passed the check; the connection goes there and nowhere else. */
  address: string;
  family: 4 | 6;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The compiled policy: config parsed once, so a bad CIDR or override fails at start, naming the key. */
export interface UrlPolicy {
  /**
   * Every rule, DNS included; throws UrlRejected naming the first that fails. `allowHttp` (a shop
   * connection's allow_http_notify) also accepts plain http, on port 80 or an allowed port.
   */
  check(raw: string, options?: { allowHttp?: boolean }): Promise<CheckedTarget>;
}

export function createUrlPolicy(config: Config, lookup: HostLookup = systemLookup): UrlPolicy {
  const allowedPorts = new Set(config.webhooks.allowed_ports);
  const exempt: Cidr[] = config.webhooks.allow_private_cidrs.map((text) => {
    try {
      return ipaddr.parseCIDR(text);
    } catch {
      throw new ConfigError(`${config.source}: webhooks.allow_private_cidrs: "${text}" is not a CIDR range such as 127.0.0.0/8`);
    }
  });
  const overrides = new Map<string, string>();
  for (const [name, address] of Object.entries(config.webhooks.resolve)) {
    if (isIP(address) === 0) throw new ConfigError(`${config.source}: webhooks.resolve: "${name}" must map to an IPv4 or IPv6 address (got "${address}")`);
    overrides.set(normaliseHostname(name), address);
  }
  const timeoutMs = config.webhooks.timeout_seconds * 1000;

  const resolve = async (target: ParsedTarget): Promise<CheckedTarget> => {
    const override = overrides.get(target.hostname);
    let addresses: string[];
    if (override !== undefined) {
      addresses = [override];
    } else {
      addresses = await lookupWithTimeout(lookup, target.hostname, timeoutMs);
    }
    if (addresses.length === 0) throw new UrlRejected('unresolvable', `${target.hostname} does not resolve to any address`);
    // Every address must pass, not just the first: a resolver may hand out any of them later.
    for (const address of addresses) {
      const reason = blockedReason(address, exempt);
      if (reason) throw new UrlRejected('blocked_address', `${target.hostname} resolves to ${address}, ${reason}; only public addresses may receive webhooks`);
    }
    const address = addresses[0]!;
    return { ...target, address, family: isIP(address) === 6 ? 6 : 4 };
  };

  // async: a URL refused by the static rules is a rejected promise, like one refused after DNS.
  if (config.devMode) return { check: async (raw) => resolveDev(parseDevWebhookUrl(raw), lookup, timeoutMs) };
  return { check: async (raw, options) => resolve(parseWebhookUrl(raw, allowedPorts, options?.allowHttp ?? false)) };
}

/** `gatewayd dev`: an absolute http(s) URL without credentials or fragment; any host and port. */
export function parseDevWebhookUrl(raw: string): ParsedTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRejected('not_url', 'not an absolute URL; expected http://host:port/path');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UrlRejected('scheme', `the scheme must be http or https (got ${url.protocol.replace(/:$/, '')})`);
  if (url.username !== '' || url.password !== '') throw new UrlRejected('credentials', 'credentials in the URL (user:password@) are not allowed');
  if (url.hash !== '' || raw.includes('#')) throw new UrlRejected('fragment', 'a URL fragment (#...) is not allowed');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { url, hostname: normaliseHostname(url.hostname.replace(/^\[|\]$/g, '')), port };
}

async function resolveDev(target: ParsedTarget, lookup: HostLookup, timeoutMs: number): Promise<CheckedTarget> {
  const literal = isIP(target.hostname);
  const address = literal !== 0 ? target.hostname : (await lookupWithTimeout(lookup, target.hostname, timeoutMs))[0];
  if (address === undefined) throw new UrlRejected('unresolvable', `${target.hostname} does not resolve to any address`);
  return { ...target, address, family: isIP(address) === 6 ? 6 : 4 };
}

async function lookupWithTimeout(lookup: HostLookup, hostname: string, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UrlRejected('dns_timeout', `${hostname}: DNS lookup timed out`)), timeoutMs);
  });
  try {
    const found = await Promise.race([lookup(hostname), timeout]);
    return found.map((a) => a.address);
  } catch (err) {
    if (err instanceof UrlRejected) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UrlRejected('unresolvable', `${hostname} does not resolve${code ? ` (${code})` : ''}`);
  } finally {
    clearTimeout(timer);
  }
}

function normaliseHostname(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** The static rules, no network. Throws UrlRejected naming the first rule that fails. */
export function parseWebhookUrl(raw: string, allowedPorts: ReadonlySet<number>, allowHttp = false): ParsedTarget {
  let url: URL;
  try {
    // WHATWG parsing, as browsers and fetch do: it rewrites every IPv4 notation (decimal, octal,
    // hex, short forms) to dotted quads and decodes percent-escapes in the host, so the checks
    // below see the host the connection would really use.
    url = new URL(raw);
  } catch {
    throw new UrlRejected('not_url', 'not an absolute URL; expected https://host/path');
  }
  const http = allowHttp && url.protocol === 'http:';
  if (url.protocol !== 'https:' && !http) throw new UrlRejected('scheme', `the scheme must be https (got ${url.protocol.replace(/:$/, '')})`);
  if (url.username !== '' || url.password !== '') throw new UrlRejected('credentials', 'credentials in the URL (user:password@) are not allowed');
  // `url.hash` is empty for a bare trailing "#", so look at the raw text too.
  if (url.hash !== '' || raw.includes('#')) throw new UrlRejected('fragment', 'a URL fragment (#...) is not allowed');
  const port = url.port === '' ? (http ? 80 : 443) : Number(url.port);
  if (!allowedPorts.has(port) && !(http && port === 80)) throw new UrlRejected('port', `port ${port} is not allowed; allowed: ${[...allowedPorts].join(', ')}`);
  const host = url.hostname;
  if (host.startsWith('[') || isIP(host) !== 0) throw new UrlRejected('ip_literal', 'an IP address is not allowed; use a DNS name');
  const hostname = normaliseHostname(host);
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) throw new UrlRejected('localhost', 'localhost is not allowed');
  // A single label resolves through the local search domains: an internal name by construction.
  if (!hostname.includes('.')) throw new UrlRejected('not_fqdn', 'the host must be a fully qualified DNS name');
  // The WHATWG parser rejects a numeric last label that is not a valid IPv4; anything numeric-looking
  // that got through is still refused rather than handed to a resolver that may read it as an address.
  if (/^[0-9.]+$/.test(hostname) || /^(0x[0-9a-f]*\.?)+$/i.test(hostname)) throw new UrlRejected('ip_literal', 'an IP address is not allowed; use a DNS name');
  return { url, hostname, port };
}

/**
 * Why an address may not receive webhooks (a phrase such as "a private address"), or undefined
 * when it may. IPv6 forms that embed an IPv4 address (mapped, translated, NAT64, 6to4,
 * IPv4-compatible) are judged by the embedded address.
 */
export function blockedReason(text: string, exempt: readonly Cidr[] = []): string | undefined {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(text);
  } catch {
    return 'not an IP address';
  }
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).zoneId) return 'a scoped (zone) address';
  const embedded = addr.kind() === 'ipv6' ? embeddedIPv4(addr as ipaddr.IPv6) : undefined;
  if (isExempt(addr, exempt) || (embedded && isExempt(embedded.v4, exempt))) return undefined;
  if (embedded) {
    const inner = blockedReason(embedded.v4.toString());
    return inner ? `the ${embedded.form} form of ${embedded.v4.toString()} (${inner})` : undefined;
  }
  if (addr.kind() === 'ipv4') {
    const range = (addr as ipaddr.IPv4).range();
    return range === 'unicast' ? undefined : describeRange(range);
  }
  const v6 = addr as ipaddr.IPv6;
  const range = v6.range();
  if (range !== 'unicast') return describeRange(range);
  // Only 2000::/3 is allocated as global unicast; everything else is reserved.
  if ((v6.parts[0]! & 0xe000) !== 0x2000) return 'a reserved address';
  return undefined;
}

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (CGNAT) address',
  private: 'a private address',
  uniqueLocal: 'a unique-local address',
  deprecatedSiteLocal: 'a site-local address',
  teredo: 'a Teredo tunnel address',
  rfc6052: 'a local-use NAT64 address',
  discard: 'a discard-only address',
};

function describeRange(range: string): string {
  return RANGE_NAMES[range] ?? `a reserved address (${range})`;
}

function embeddedIPv4(addr: ipaddr.IPv6): { v4: ipaddr.IPv4; form: string } | undefined {
  const p = addr.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = addr.range();
  if (range === 'ipv4Mapped') return { v4: v4(p[6]!, p[7]!), form: 'IPv4-mapped' };
  if (range === 'rfc6145') return { v4: v4(p[6]!, p[7]!), form: 'IPv4-translated' };
  // NAT64 well-known prefix 64:ff9b::/96; the local-use 64:ff9b:1::/48 stays blocked as a whole.
  if (range === 'rfc6052' && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return { v4: v4(p[6]!, p[7]!), form: 'NAT64' };
  // 6to4: 2002:AABB:CCDD::/48 routes to AA.BB.CC.DD.
  if (range === '6to4') return { v4: v4(p[1]!, p[2]!), form: '6to4' };
  // Deprecated IPv4-compatible ::a.b.c.d (but not :: or ::1, which have their own ranges).
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1)) return { v4: v4(p[6]!, p[7]!), form: 'IPv4-compatible' };
  return undefined;
}

function isExempt(addr: ipaddr.IPv4 | ipaddr.IPv6, exempt: readonly Cidr[]): boolean {
  return exempt.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
}
