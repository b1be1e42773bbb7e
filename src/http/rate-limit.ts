import type { Context } from 'hono';
import { AppError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { AppEnv } from './context.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Where a client stands with one limit, as the RateLimit-* response headers tell it. */
export interface RateLimitState {
  /** Requests a minute (also the burst). */
  limit: number;
  /** Requests that may be made right now. */
  remaining: number;
  /** Seconds until the whole burst is available again. */
  resetSeconds: number;
}

/**
 * In-process token buckets (gatewayd runs as one process): `perMinute` requests a minute with a
 * burst of the same size. A limit of 0 turns the check off.
 */
export class RateLimiter {
  private buckets = new Map<string, Bucket>();

  constructor(private readonly clock: Clock) {}

  /**
   * Takes one token or throws 429 rate_limited with Retry-After (whole seconds). Given the request's
   * context, the state is kept for the RateLimit-* headers of the answer (the tightest limit wins).
   */
  consume(scope: string, key: string, perMinute: number, c?: Context<AppEnv>): void {
    if (perMinute <= 0) return;
    const now = this.clock.now();
    const id = `${scope}\u0000${key}`;
    const ratePerMs = perMinute / 60_000;
    let bucket = this.buckets.get(id);
    if (!bucket) {
      if (this.buckets.size > 50_000) this.prune(now, ratePerMs, perMinute);
      bucket = { tokens: perMinute, updatedAt: now };
      this.buckets.set(id, bucket);
    } else {
      bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updatedAt) * ratePerMs);
      bucket.updatedAt = now;
    }
    const limited = bucket.tokens < 1;
    if (!limited) bucket.tokens -= 1;
    const state: RateLimitState = {
      limit: perMinute,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((perMinute - bucket.tokens) / ratePerMs / 1000),
    };
    if (c) noteRateLimit(c, state);
    if (limited) {
      const waitMs = (1 - bucket.tokens) / ratePerMs;
      throw new AppError('rate_limited', 'Too many requests; retry later').withHeader('Retry-After', String(Math.max(1, Math.ceil(waitMs / 1000))));
    }
  }

  /** Forgets buckets that have refilled completely (they carry no information). */
  private prune(now: number, ratePerMs: number, capacity: number): void {
    for (const [id, b] of this.buckets) {
      if (b.tokens + (now - b.updatedAt) * ratePerMs >= capacity) this.buckets.delete(id);
    }
  }
}

function noteRateLimit(c: Context<AppEnv>, state: RateLimitState): void {
  const kept = c.get('rateLimit');
  if (!kept || state.remaining < kept.remaining) c.set('rateLimit', state);
}

/** The IETF draft's RateLimit-Limit, -Remaining and -Reset of a limited answer (set by app.ts on every answer, errors included). */
export function rateLimitHeaders(state: RateLimitState): Array<[string, string]> {
  return [
    ['RateLimit-Limit', String(state.limit)],
    ['RateLimit-Remaining', String(state.remaining)],
    ['RateLimit-Reset', String(state.resetSeconds)],
  ];
}
