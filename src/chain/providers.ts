/**
 * The TRON providers, in the operator's order of preference (for example an own java-tron node,
 * then TronGrid with one or more keys). A request goes to the first provider that is not backing
 * off; a fault moves it to the next one at once (failover) and puts the faulty provider in
 * exponential backoff (honouring Retry-After / "suspended for N s"). Each provider keeps its own
 * pacing, so its own request rate, and its health for /health and the metrics.
 */
import type { Config } from '../config.js';
import { MINUTE, SECOND } from '../lib/clock.js';
import { DEFAULT_MAX_RPS, DEFAULT_TIMEOUT_MS, TronApiError, TronClient } from './tron.client.js';

/**
 * Backoff is capped at 15 s so that a provider that answers again is used within a poll + 15 s,
 * whatever failed before (a provider's own Retry-After is still honoured in full).
 */
export const MAX_BACKOFF_MS = 15 * SECOND;
/**
 * A provider whose answer the others outvoted (by their block answers, or by transaction id) is set
 * aside this long: asked after every other provider that may be asked, never first.
 */
export const COOLING_MS = 10 * MINUTE;
const FIRST_BACKOFF_MS = 2 * SECOND;

export interface ProviderHealth {
  /** The provider's scheme and host (never its path, query or key). */
  name: string;
  state: 'ok' | 'backing_off' | 'set_aside';
  consecutive_failures: number;
  requests: number;
  failures: number;
  /** Blocks whose re-read from this provider disagreed with an earlier read. */
  inconsistent_blocks: number;
  /** Heads it served that were refused (not credible by the clock and the last head, or beyond what another provider confirms). */
  refused_heads: number;
  /** Answers refused as malformed (a block time out of range, a transaction of another block...). */
  malformed_reads: number;
  /** Blocks about which the other providers outvoted it (its block answer, or its answer by transaction id); each sets it aside. */
  outvoted_blocks: number;
  /** Set aside until then (ms) after the other providers outvoted it; null when not. */
  set_aside_until: number | null;
  last_error: string | null;
  last_ok_at: number | null;
  retry_at: number | null;
}

export interface Provider {
  client: TronClient;
  health: ProviderHealth;
  /** Until when it is skipped (ms, injected clock): backing off. */
  until: number;
  /** Until when it is set aside (ms): asked only when no other provider may be asked. */
  asideUntil: number;
}

export interface ProviderSettings {
  url: string;
  api_key: string;
  requests_per_second: number;
  timeout_seconds: number;
}

/** tron.providers, or (backward compatible) the single provider named by tron.api_url and tron.api_key. */
export function providerSettings(config: Config): ProviderSettings[] {
  if (config.tron.providers.length > 0) return config.tron.providers.map((p) => ({ ...p }));
  return [{ url: config.tron.api_url, api_key: config.tron.api_key, requests_per_second: DEFAULT_MAX_RPS, timeout_seconds: DEFAULT_TIMEOUT_MS / 1000 }];
}

export class ProviderPool {
  readonly providers: Provider[];

  constructor(settings: ProviderSettings[], overrides: { timeoutMs?: number; maxRequestsPerSecond?: number } = {}) {
    this.providers = settings.map((s) => ({
      client: new TronClient({
        apiUrl: s.url,
        apiKey: s.api_key,
        timeoutMs: overrides.timeoutMs ?? s.timeout_seconds * 1000,
        maxRequestsPerSecond: overrides.maxRequestsPerSecond ?? s.requests_per_second,
      }),
      health: {
        name: originOf(s.url),
        state: 'ok',
        consecutive_failures: 0,
        requests: 0,
        failures: 0,
        inconsistent_blocks: 0,
        refused_heads: 0,
        malformed_reads: 0,
        outvoted_blocks: 0,
        set_aside_until: null,
        last_error: null,
        last_ok_at: null,
        retry_at: null,
      },
      until: 0,
      asideUntil: 0,
    }));
  }

  /** Those of `list` not backing off at t, in their order, the ones set aside last. */
  private ready(list: readonly Provider[], t: number): Provider[] {
    const up = list.filter((p) => p.until <= t);
    return [...up.filter((p) => p.asideUntil <= t), ...up.filter((p) => p.asideUntil > t)];
  }

  /**
   * Runs `fn` against the providers in order, skipping those backing off (unless all are) and
   * `avoid` (unless it is the only one left), those set aside last. Throws the last fault when
   * every provider failed.
   */
  async call<T>(now: () => number, fn: (client: TronClient) => Promise<T>, avoid?: Provider): Promise<{ value: T; provider: Provider }> {
    const t = now();
    let order = this.ready(
      this.providers.filter((p) => p !== avoid),
      t,
    );
    if (order.length === 0) order = this.ready(this.providers, t);
    return this.run(now, fn, order);
  }

  /**
   * Runs `fn` as `call` does, starting with provider `turn` modulo their number and going on in
   * order (the heavy read of block n alternates between the providers so each carries its share).
   */
  async callInTurn<T>(now: () => number, fn: (client: TronClient) => Promise<T>, turn: number): Promise<{ value: T; provider: Provider }> {
    const t = now();
    const k = this.providers.length;
    const rotated = this.providers.map((_, i) => this.providers[(i + (turn % k)) % k]!);
    return this.run(now, fn, this.ready(rotated, t));
  }

  /**
   * Runs `fn` against another provider than those in `exclude` (never one of them), failing over
   * among the others (those set aside last: with two providers, one set aside is still the second
   * opinion, never the only one); undefined when no other provider may be asked now.
   */
  async callOther<T>(
    now: () => number,
    fn: (client: TronClient) => Promise<T>,
    exclude: readonly Provider[],
  ): Promise<{ value: T; provider: Provider } | undefined> {
    const t = now();
    const order = this.ready(
      this.providers.filter((p) => !exclude.includes(p)),
      t,
    );
    if (order.length === 0) return undefined;
    try {
      return await this.run(now, fn, order);
    } catch (err) {
      if (err instanceof TronApiError) return undefined;
      throw err;
    }
  }

  /**
   * Runs `fn` against provider `p` alone (a question only it can answer: what it says by
   * transaction id); undefined when it fails (the fault is counted and it backs off).
   */
  async ask<T>(p: Provider, now: () => number, fn: (client: TronClient) => Promise<T>): Promise<{ value: T } | undefined> {
    try {
      return { value: (await this.run(now, fn, [p])).value };
    } catch (err) {
      if (err instanceof TronApiError) return undefined;
      throw err;
    }
  }

  /** Sets a provider aside for the cooling period: the others outvoted its answer about a block. */
  setAside(p: Provider, t: number, reason: string): void {
    p.asideUntil = Math.max(p.asideUntil, t + COOLING_MS);
    p.health.outvoted_blocks += 1;
    if (p.health.state !== 'backing_off') p.health.state = 'set_aside';
    p.health.set_aside_until = p.asideUntil;
    p.health.last_error = reason;
  }

  private async run<T>(now: () => number, fn: (client: TronClient) => Promise<T>, order: Provider[]): Promise<{ value: T; provider: Provider }> {
    const t = now();
    if (order.length === 0) {
      const soonest = Math.min(...this.providers.map((p) => p.until));
      throw new TronApiError('rate_limited', 'providers', 'every provider is backing off', soonest - t);
    }
    let last: TronApiError | undefined;
    for (const p of order) {
      p.health.requests += 1;
      try {
        const value = await fn(p.client);
        const at = now();
        p.health.consecutive_failures = 0;
        p.health.retry_at = null;
        p.health.last_ok_at = at;
        p.until = 0;
        // An answer ends a backoff, never a set-aside: that lasts its cooling period.
        if (p.asideUntil <= at) {
          p.asideUntil = 0;
          p.health.set_aside_until = null;
        }
        p.health.state = p.asideUntil > at ? 'set_aside' : 'ok';
        return { value, provider: p };
      } catch (err) {
        if (!(err instanceof TronApiError)) throw err;
        last = err;
        this.fault(p, err, now());
      }
    }
    throw last!;
  }

  fault(p: Provider, err: TronApiError, t: number): void {
    p.health.failures += 1;
    if (err.refusal === 'head') p.health.refused_heads += 1;
    if (err.refusal === 'malformed') p.health.malformed_reads += 1;
    p.health.consecutive_failures += 1;
    p.health.last_error = `${err.kind} (${err.endpoint}): ${err.message}`;
    const wait = Math.max(Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (p.health.consecutive_failures - 1)), err.retryAfterMs ?? 0);
    p.until = t + wait;
    p.health.state = 'backing_off';
    p.health.retry_at = p.until;
  }

  /** Each provider's health; at `t`, a set-aside whose cooling period is over shows as over. */
  health(t?: number): ProviderHealth[] {
    if (t !== undefined) {
      for (const p of this.providers) {
        if (p.health.state !== 'set_aside' || p.asideUntil > t) continue;
        p.asideUntil = 0;
        p.health.state = 'ok';
        p.health.set_aside_until = null;
      }
    }
    return this.providers.map((p) => ({ ...p.health }));
  }

  totals(): { requests: number; bytes: number } {
    return this.providers.reduce((sum, p) => ({ requests: sum.requests + p.client.stats.requests, bytes: sum.bytes + p.client.stats.bytes }), {
      requests: 0,
      bytes: 0,
    });
  }
}

/** Scheme and host only: GetBlock, QuickNode and others put the access token in the path. */
function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'invalid-url';
  }
}
