import type { Context } from 'hono';
import type { Conn, Db } from '../db/database.js';
import { takeToken } from '../db/rate-buckets.js';
import { AppError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { AppEnv, RateLimitState } from './context.js';

export type { RateLimitState } from './context.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
  /** The limit this bucket was last consumed under: its capacity, refilled over one minute. */
  perMinute: number;
}

/** The request whose answer carries the RateLimit-* headers. */
export type RateLimitContext = Context<AppEnv>;

/** Past this many buckets, the next new one first forgets the full ones. */
const PRUNE_ABOVE = 50_000;

export interface ConsumeOptions {
  /** The 429's message (default: "Too many requests; retry later"). */
  message?: string;
  /** The request whose answer carries the RateLimit-* headers (the tightest limit wins). */
  context?: Context<AppEnv>;
  /**
   * The open transaction's connection, when the take happens inside one (an invoice creation): with
   * shared buckets the take runs on it, never on a second pooled connection.
   */
  tx?: Conn;
}

/**
 * Token buckets: `perMinute` requests a minute with a burst of the same size. A limit of 0 turns the
 * check off. Scopes have different limits, so each bucket refills and is pruned by its own limit,
 * never by the limit of whichever scope happened to trigger the pruning.
 *
 * Where the buckets live (docs/operations.md, "Running several instances"): in this process's
 * memory on SQLite (one process; a take is synchronous and costs no query), in the database on
 * PostgreSQL (`shared`: several instances take from the same rows, src/db/rate-buckets.ts, so a limit
 * does not multiply with the number of instances). `consume` is therefore awaitable: callers await
 * it either way (on SQLite the value is already settled).
 */
export class RateLimiter {
  private buckets = new Map<string, Bucket>();

  /** shared: the PostgreSQL database whose rate_limit_buckets every instance shares; none on SQLite. */
  constructor(
    private readonly clock: Clock,
    private readonly shared?: Db,
  ) {}

  /**
   * Takes one token or throws 429 rate_limited with Retry-After (whole seconds). Given the request's
   * context, the state is kept for the RateLimit-* headers of the answer (the tightest limit wins).
   */
  consume(scope: string, key: string, perMinute: number, options: ConsumeOptions = {}): void | Promise<void> {
    if (perMinute <= 0) return;
    const now = this.clock.now();
    if (this.shared) {
      return takeToken(options.tx ?? this.shared, scope, key, perMinute, now).then((taken) => settle(taken.tokens, !taken.allowed, perMinute, options));
    }
    const id = `${scope}\u0000${key}`;
    let bucket = this.buckets.get(id);
    if (!bucket) {
      if (this.buckets.size >= PRUNE_ABOVE) this.prune(now);
      bucket = { tokens: perMinute, updatedAt: now, perMinute };
      this.buckets.set(id, bucket);
    } else {
      bucket.tokens = refilled(bucket, now, perMinute);
      bucket.updatedAt = now;
      bucket.perMinute = perMinute;
    }
    const limited = bucket.tokens < 1;
    if (!limited) bucket.tokens -= 1;
    settle(bucket.tokens, limited, perMinute, options);
  }

  /** Forgets buckets that have refilled completely under their own limit (they carry no information). */
  private prune(now: number): void {
    for (const [id, b] of this.buckets) {
      if (refilled(b, now, b.perMinute) >= b.perMinute) this.buckets.delete(id);
    }
  }
}

/** Notes the state for the RateLimit-* headers; throws the 429 when the take was refused. */
function settle(tokens: number, limited: boolean, perMinute: number, options: ConsumeOptions): void {
  const state: RateLimitState = {
    limit: perMinute,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((perMinute - tokens) / (perMinute / 60_000) / 1000),
  };
  if (options.context) noteRateLimit(options.context, state);
  if (limited) {
    const waitMs = (1 - tokens) / (perMinute / 60_000);
    throw new AppError('rate_limited', options.message ?? 'Too many requests; retry later').withHeader(
      'Retry-After',
      String(Math.max(1, Math.ceil(waitMs / 1000))),
    );
  }
}

function refilled(bucket: Bucket, now: number, perMinute: number): number {
  return Math.min(perMinute, bucket.tokens + (now - bucket.updatedAt) * (perMinute / 60_000));
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
