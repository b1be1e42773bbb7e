import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import ipaddr from 'ipaddr.js';

/**
 * The client's address. Behind a reverse proxy (server.trust_proxy) it is the last address of
 * X-Forwarded-For, the one our own proxy appended; earlier entries are client-controlled.
 */
export function clientIp(c: Context, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = c.req.header('x-forwarded-for');
    if (forwarded) {
      const parts = forwarded
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const last = parts[parts.length - 1];
      if (last) return last;
    }
  }
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * What a per-IP rate limit counts: an IPv4 address as itself (an IPv4-mapped IPv6 address too), an
 * IPv6 address by its /64. One IPv6 subscriber or server is routinely handed a whole /64 (2^64
 * addresses), so counting single IPv6 addresses would give each request a fresh budget.
 */
export function rateLimitSubject(ip: string): string {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return ip;
  }
  if (addr.kind() === 'ipv4') return addr.toString();
  const v6 = addr as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const parts = v6.parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

/** The client's rate-limit subject (see rateLimitSubject). */
export function clientSubject(c: Context, trustProxy: boolean): string {
  return rateLimitSubject(clientIp(c, trustProxy));
}
