/**
 * An HTTP JSON client for one TON index provider (toncenter v3, tonapi v2): GET with repeated query
 * parameters (`owner_address=…&owner_address=…`) and POST with a JSON body. It knows the transport and
 * the provider's refusals, nothing about jettons; each failure is classified so a reader can react:
 * `rate_limited` (429), `too_long` (414, 431, 413: the URL or body of a long owner list), `not_found`
 * (404, which toncenter also answers for "nothing adjacent yet"), `refused` (another 4xx, with the
 * provider's message), `http`, `malformed`, `timeout`.
 *
 * Pacing: calls to one provider are spaced by 1 / requests_per_second (toncenter allows one request a
 * second without an API key, ten with a free one); a 429 pauses every call to that provider for its
 * Retry-After (or 1, 2, 4 s), a few times, before the error is handed up.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../lib/clock.js';
import { parseRetryAfter } from '../../lib/retry-after.js';

export type TonHttpErrorKind = 'rate_limited' | 'too_long' | 'not_found' | 'refused' | 'http' | 'malformed' | 'timeout';

export class TonHttpError extends Error {
  constructor(
    readonly kind: TonHttpErrorKind,
    message: string,
    readonly provider: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'TonHttpError';
  }
}

export interface TonHttpOptions {
  /** The API root, e.g. https://toncenter.com/api/v3 or https://tonapi.io (no trailing slash needed). */
  url: string;
  /** How errors and figures name this provider (default: the URL's host). */
  name?: string;
  /** Sent as toncenter's `X-API-Key` or tonapi's `Authorization: Bearer`, by `keyHeader`. */
  apiKey?: string;
  keyHeader?: 'x-api-key' | 'bearer';
  /** At most this many requests a second (default 1, toncenter's allowance without a key). */
  requestsPerSecond?: number;
  clock: Clock;
  sleep?: (ms: number) => Promise<void>;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** How many times a rate-limited call waits and tries again before it fails (default 3). */
  rateLimitRetries?: number;
  /** The longest single wait a Retry-After may ask for (default 30 s); a longer ask fails at once. */
  maxRetryAfterMs?: number;
  /** Answers larger than this are refused (default 16 MiB). */
  maxResponseBytes?: number;
}

/** Counts of what was asked of the provider, for the cost figures. */
export interface TonHttpStats {
  requests: number;
  bytesReceived: number;
  rateLimited: number;
}

export type QueryValue = string | number | bigint | boolean | readonly string[] | undefined;

/** A query string with repeated keys for lists, in the order given (undefined values left out). */
export function queryString(params: Record<string, QueryValue>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [String(value)];
    for (const v of values) parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(v)}`);
  }
  return parts.join('&');
}

export class TonHttpClient {
  readonly name: string;
  readonly stats: TonHttpStats = { requests: 0, bytesReceived: 0, rateLimited: 0 };
  private nextAtMs = 0;
  private pausedUntilMs = 0;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly doFetch: typeof fetch;
  private readonly base: string;

  constructor(private readonly options: TonHttpOptions) {
    this.name = options.name ?? new URL(options.url).host;
    this.sleep = options.sleep ?? ((ms) => delay(ms));
    this.doFetch = options.fetch ?? fetch;
    this.base = options.url.replace(/\/+$/, '');
  }

  async get<T = unknown>(path: string, params: Record<string, QueryValue> = {}): Promise<T> {
    const query = queryString(params);
    return (await this.send('GET', `${this.base}${path}${query ? `?${query}` : ''}`, undefined)) as T;
  }

  async post<T = unknown>(path: string, body: unknown): Promise<T> {
    return (await this.send('POST', `${this.base}${path}`, JSON.stringify(body))) as T;
  }

  private async send(method: 'GET' | 'POST', url: string, body: string | undefined): Promise<unknown> {
    const retries = this.options.rateLimitRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      await this.waitTurn();
      try {
        return await this.once(method, url, body);
      } catch (err) {
        if (!(err instanceof TonHttpError) || err.kind !== 'rate_limited') throw err;
        this.stats.rateLimited++;
        const waitMs = err.retryAfterMs ?? 1000 * 2 ** attempt;
        this.pausedUntilMs = Math.max(this.pausedUntilMs, this.options.clock.now() + waitMs);
        if (attempt >= retries || waitMs > this.maxWaitMs()) throw err;
      }
    }
  }

  private maxWaitMs(): number {
    return this.options.maxRetryAfterMs ?? 30_000;
  }

  /** Waits out a Retry-After pause and the provider's pace; a pause longer than allowed fails at once. */
  private async waitTurn(): Promise<void> {
    for (;;) {
      const now = this.options.clock.now();
      const paused = this.pausedUntilMs - now;
      if (paused > this.maxWaitMs()) {
        throw new TonHttpError('rate_limited', `paused for ${Math.ceil(paused / 1000)} s by the provider's Retry-After`, this.name, 429, paused);
      }
      const left = Math.max(paused, this.nextAtMs - now);
      if (left <= 0) break;
      await this.sleep(left);
    }
    const perSecond = this.options.requestsPerSecond ?? 1;
    this.nextAtMs = this.options.clock.now() + Math.ceil(1000 / (perSecond > 0 ? perSecond : 1));
  }

  private headers(json: boolean): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json' };
    if (json) h['content-type'] = 'application/json';
    const key = this.options.apiKey;
    if (key) {
      if (this.options.keyHeader === 'bearer') h.authorization = `Bearer ${key}`;
      else h['x-api-key'] = key;
    }
    return h;
  }

  private async once(method: 'GET' | 'POST', url: string, body: string | undefined): Promise<unknown> {
    this.stats.requests++;
    let response: Response;
    try {
      response = await this.doFetch(url, {
        method,
        headers: this.headers(body !== undefined),
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
    } catch (err) {
      const timeout = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new TonHttpError(timeout ? 'timeout' : 'http', timeout ? 'no answer in time' : `request failed: ${(err as Error).message}`, this.name);
    }
    const text = await response.text();
    this.stats.bytesReceived += Buffer.byteLength(text);
    const status = response.status;
    if (status === 429) {
      throw new TonHttpError(
        'rate_limited',
        'HTTP 429 Too Many Requests',
        this.name,
        429,
        parseRetryAfter(response.headers.get('retry-after'), this.options.clock.now()),
      );
    }
    if (status === 414 || status === 431 || status === 413) throw new TonHttpError('too_long', `HTTP ${status}: the request is too long`, this.name, status);
    if (text.length > (this.options.maxResponseBytes ?? 16 * 1024 * 1024)) throw new TonHttpError('malformed', 'answer too large', this.name, status);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      if (!response.ok) throw new TonHttpError(status === 404 ? 'not_found' : 'http', `HTTP ${status}`, this.name, status);
      throw new TonHttpError('malformed', 'answer is not JSON', this.name, status);
    }
    if (!response.ok) {
      // toncenter answers {"error": "..."}, tonapi {"error": "..."}; both may name the limit they enforce.
      const message = String((parsed as { error?: unknown } | null)?.error ?? `HTTP ${status}`);
      if (status === 404) throw new TonHttpError('not_found', message, this.name, status);
      if (status >= 400 && status < 500) throw new TonHttpError('refused', message, this.name, status);
      throw new TonHttpError('http', `HTTP ${status}: ${message}`, this.name, status);
    }
    return parsed;
  }
}
