/** What the HTTP layer knows about a request: who is calling (Auth, scopes) and hono's context variables. */
import type { RateLimitState } from './rate-limit.js';
import type { IdempotencyStore } from './idempotency.js';

/** Who is calling: an owner session or an API key. Set by the auth middleware. */
export type Auth =
  | { kind: 'session'; merchantId: string; sessionHash: string }
  | { kind: 'key'; merchantId: string; keyId: string; scopes: readonly Scope[] };

export const SCOPES = ['invoices:read', 'invoices:write', 'ledger:read'] as const;
export type Scope = (typeof SCOPES)[number];

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
