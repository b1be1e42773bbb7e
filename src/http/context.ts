/** What the HTTP layer knows about a request: who is calling (Auth, scopes) and hono's context variables. */
import type { Db } from '../db/database.js';

/** Who is calling: an owner session or an API key. Set by the auth middleware. */
export type Auth = { kind: 'session'; merchantId: string; sessionHash: string } | { kind: 'key'; merchantId: string; keyId: string; scopes: readonly Scope[] };

export const SCOPES = ['invoices:read', 'invoices:write', 'ledger:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** A rate limit as one request saw it (http/rate-limit.ts sets it; the RateLimit-* headers show it). */
export interface RateLimitState {
  /** Requests a minute (also the burst). */
  limit: number;
  /** Requests that may be made right now. */
  remaining: number;
  /** Seconds until the whole burst is available again. */
  resetSeconds: number;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    auth: Auth;
    /** The tightest rate limit this request counted against (RateLimit-* headers). */
    rateLimit?: RateLimitState;
    /** Where the Idempotency-Key layer keeps its claims (set for every API request). */
    idempotency?: IdempotencyStore;
  };
}

/** What the Idempotency-Key layer (idempotency.ts) needs; set once per request by the app (the routers are built without deps). */
export interface IdempotencyStore {
  db: Db;
  serverSecret: string;
  now(): number;
}
