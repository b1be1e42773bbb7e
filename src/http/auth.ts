/**
 * Credentials (docs/api.md, Merchant accounts): `Authorization: Bearer gw_live_...` API keys and the
 * `gw_session` cookie. A Bearer request is judged by its key alone; a cookie request must pass the
 * Origin rule.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { findKeyBySecret, isKeyActive, keyNeedsTouch, touchKey } from '../api-keys/api-keys.repo.js';
import { onConnection } from '../db/database.js';
import { findSession, renewSession, SESSION_COOKIE, SESSION_LIFETIME_MS } from '../accounts/sessions.repo.js';
import { AppError } from '../lib/errors.js';
import type { AppEnv, Auth, Scope } from './context.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { RateLimiter } from './rate-limit.js';

type Deps = { db: Db; config: Config; clock: Clock; rateLimiter: RateLimiter };

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The WWW-Authenticate challenges of a 401 (RFC 9110 §11.6.1): `Bearer` where an API key is
 * accepted, `Session` (the gw_session cookie from POST /auth/login) where an owner session is.
 */
export const SESSION_CHALLENGE = 'Session realm="gatewayd", cookie="gw_session"';
export const KEY_OR_SESSION_CHALLENGE = `Bearer realm="gatewayd", ${SESSION_CHALLENGE}`;
/** The public chat's token (POST /support/chat returns it once). */
export const CHAT_CHALLENGE = 'SupportChatToken realm="gatewayd", header="X-Support-Chat-Token"';

/** Refusals of a missing or bad credential name the schemes the operation accepts. */
async function challenged<T>(challenge: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError && err.status === 401) err.withHeader('WWW-Authenticate', challenge);
    throw err;
  }
}

function bearerToken(c: Context): string | undefined {
  const header = c.req.header('authorization');
  if (header === undefined) return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m) throw new AppError('unauthorized', 'Malformed Authorization header; expected "Bearer <API key>"');
  return m[1];
}

/**
 * The Origin rule for cookie requests: an unsafe method must carry Origin equal to the public
 * origin; a safe method with a foreign Origin is refused the same way.
 */
export function checkOrigin(c: Context, deps: Deps): void {
  const origin = c.req.header('origin');
  if (SAFE_METHODS.has(c.req.method)) {
    if (origin !== undefined && origin !== deps.config.publicOrigin) throw foreignOrigin(origin, deps.config.publicOrigin);
    return;
  }
  if (origin === undefined) throw new AppError('invalid_origin', 'The Origin header is required with a session');
  if (origin !== deps.config.publicOrigin) throw foreignOrigin(origin, deps.config.publicOrigin);
}

/**
 * A foreign Origin, named with the setting it is compared to: the usual cause is a browser on an
 * address that server.public_url does not name (another port, or a host name instead of an IP).
 */
export function foreignOrigin(origin: string, publicOrigin: string): AppError {
  return new AppError(
    'invalid_origin',
    `The Origin header (${origin.slice(0, 200)}) does not match server.public_url (${publicOrigin}); if this is the address you use, set server.public_url to it`,
  );
}

/** An HttpOnly, SameSite=Lax cookie for `path`, Secure when the public URL is https, living `lifetimeMs`. */
export function httpOnlyCookieOptions(deps: Deps, path: string, lifetimeMs: number) {
  return {
    httpOnly: true,
    sameSite: 'Lax' as const,
    path,
    secure: deps.config.secureCookies,
    maxAge: Math.floor(lifetimeMs / 1000),
  };
}

/**
 * A cookie's name: with an https public_url, `__Host-` + name, which a browser accepts only from a
 * secure answer of this very host, with Path=/ and no Domain, so neither a sibling subdomain nor
 * plain http on the same host can plant or overwrite it. Only that name is read then: an unprefixed
 * cookie of the same name is ignored. Plain http (local use) keeps the bare name.
 */
export function cookieName(config: { readonly secureCookies: boolean }, name: string): string {
  return config.secureCookies ? `__Host-${name}` : name;
}

export function sessionCookieOptions(deps: Deps) {
  return httpOnlyCookieOptions(deps, '/', SESSION_LIFETIME_MS);
}

/** The session token the request carries, if any (under the name cookieName gives). */
export function sessionToken(c: Context, deps: Deps): string | undefined {
  return getCookie(c, cookieName(deps.config, SESSION_COOKIE)) || undefined;
}

export function setSessionCookie(c: Context, deps: Deps, token: string): void {
  setCookie(c, cookieName(deps.config, SESSION_COOKIE), token, sessionCookieOptions(deps));
}

export function clearSessionCookie(c: Context, deps: Deps): void {
  setCookie(c, cookieName(deps.config, SESSION_COOKIE), '', { ...sessionCookieOptions(deps), maxAge: 0 });
}

async function sessionAuth(c: Context, deps: Deps, token: string): Promise<Auth> {
  checkOrigin(c, deps);
  const now = deps.clock.now();
  const session = await findSession(deps.db, token, now);
  if (!session) throw new AppError('unauthorized', 'Sign in first: the session is missing or expired');
  if (await renewSession(deps.db, session, now)) setSessionCookie(c, deps, token);
  return { kind: 'session', merchantId: session.merchantId, sessionHash: session.tokenHash };
}

async function keyAuth(c: Context<AppEnv>, deps: Deps, secret: string): Promise<Auth> {
  const now = deps.clock.now();
  // Compiled queries on the one connection, taken as Kysely's own queries take it (never inside
  // another request's open transaction).
  const key = await onConnection(deps.db, (conn) => findKeyBySecret(conn, secret));
  if (!key || !isKeyActive(key, now)) {
    throw new AppError('unauthorized', 'Unknown, revoked or expired API key');
  }
  // Awaited only when the take is pending (shared buckets, PostgreSQL): on SQLite it is done already,
  // and an await of nothing would still cost a turn of the microtask queue on every API request.
  const taking = deps.rateLimiter.consume('api_key', key.id, deps.config.rate_limits.api_per_key, { context: c });
  if (taking) await taking;
  if (keyNeedsTouch(key, now)) await onConnection(deps.db, (conn) => touchKey(conn, key, now));
  return { kind: 'key', merchantId: key.merchantId, keyId: key.id, scopes: key.scopes };
}

/** Owner session only: an API key is refused with 403 session_required. */
export function requireSession(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const auth = await challenged(SESSION_CHALLENGE, async () => {
      if (bearerToken(c) !== undefined) {
        throw new AppError('session_required', 'This operation needs a signed-in owner session, not an API key');
      }
      const token = sessionToken(c, deps);
      if (!token) throw new AppError('unauthorized', 'Sign in first: no session');
      return sessionAuth(c, deps, token);
    });
    c.set('auth', auth);
    await next();
  };
}

/** An API key holding `scope`, or an owner session. */
export function requireKeyOrSession(deps: Deps, scope: Scope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const auth = await challenged(KEY_OR_SESSION_CHALLENGE, async (): Promise<Auth> => {
      const secret = bearerToken(c);
      if (secret !== undefined) {
        const byKey = await keyAuth(c, deps, secret);
        if (byKey.kind === 'key' && !byKey.scopes.includes(scope)) {
          throw new AppError('insufficient_scope', `This API key lacks the ${scope} scope`);
        }
        return byKey;
      }
      const token = sessionToken(c, deps);
      if (!token) throw new AppError('unauthorized', 'Authentication required: an API key (Bearer) or a session');
      return sessionAuth(c, deps, token);
    });
    c.set('auth', auth);
    await next();
  };
}

/** The signed-in session's merchant id, if the request carries a valid cookie (no errors). */
export async function optionalSession(c: Context, deps: Deps): Promise<Auth | undefined> {
  const token = sessionToken(c, deps);
  if (!token) return undefined;
  const session = await findSession(deps.db, token, deps.clock.now());
  return session ? { kind: 'session', merchantId: session.merchantId, sessionHash: session.tokenHash } : undefined;
}

/** The session behind an owner-only request (requireSession has run): its token hash, or 403 session_required. */
export function sessionHashOf(auth: Auth): string {
  if (auth.kind !== 'session') throw new AppError('session_required', 'This operation needs a signed-in owner session, not an API key');
  return auth.sessionHash;
}
