import { AppError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * In-process token buckets (gatewayd runs as one process): `perMinute` requests a minute with a
 * burst of the same size. A limit of 0 turns the check off.
 */
export class RateLimiter {
  private buckets = new Map<string, Bucket>();

  constructor(private readonly clock: Clock) {}

  /** Takes one token or throws 429 rate_limited with Retry-After (whole seconds). */
  consume(scope: string, key: string, perMinute: number): void {
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
    if (bucket.tokens < 1) {
      const waitMs = (1 - bucket.tokens) / ratePerMs;
      throw new AppError('rate_limited', 'Too many requests; retry later').withHeader(
        'Retry-After',
        String(Math.max(1, Math.ceil(waitMs / 1000))),
      );
    }
    bucket.tokens -= 1;
  }

  /** Forgets buckets that have refilled completely (they carry no information). */
  private prune(now: number, ratePerMs: number, capacity: number): void {
    for (const [id, b] of this.buckets) {
      if (b.tokens + (now - b.updatedAt) * ratePerMs >= capacity) this.buckets.delete(id);
    }
  }
}
