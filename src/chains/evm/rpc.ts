/**
 * A JSON-RPC 2.0 client for one EVM provider, over fetch. It knows the transport and the provider's
 * refusals, nothing about tokens: each failure is classified (`range` for a query the provider finds
 * too large, `rate_limited` for 429 or a rate message, `rpc`, `http`, `malformed`, `timeout`) so the
 * reader can halve a range or wait. A 429 (or a rate-limit error) pauses every call to this provider
 * for the Retry-After it names (or 1, 2, 4 s), a few times, before the error is handed up. A provider
 * that refuses batches is asked one call at a time from then on.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../lib/clock.js';
import { parseRetryAfter } from '../../lib/retry-after.js';

export type RpcErrorKind = 'range' | 'rate_limited' | 'rpc' | 'http' | 'malformed' | 'timeout' | 'batch_refused';

export class RpcError extends Error {
  constructor(
    readonly kind: RpcErrorKind,
    message: string,
    readonly provider: string,
    readonly code?: number,
    readonly retryAfterMs?: number,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'RpcError';
  }
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

export interface RpcClientOptions {
  url: string;
  /** How errors, logs and the learned range caps name this provider (default: the URL's host). */
  name?: string;
  clock: Clock;
  /** Waits; tests may pass one that records. */
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

/** What a provider refuses as "too much": a block range, a result count, a response size. */
const RANGE_MESSAGE =
  /range|more than \d[\d,]* (results|logs)|too many (results|logs)|limit exceeded|response size|result(s)? (limit|cap|window)|exceed(s|ed)? .*(results|logs)/i;
const RATE_MESSAGE = /rate.?limit|too many requests|request rate|daily request count|quota|credits|capacity exceeded/i;

/** Classifies a JSON-RPC error object by its message first (codes are reused by providers), then its code. */
export function classifyRpcError(code: number | undefined, message: string): RpcErrorKind {
  if (code === 429 || RATE_MESSAGE.test(message)) return 'rate_limited';
  if (RANGE_MESSAGE.test(message) || code === -32005) return 'range';
  return 'rpc';
}

/** Counts of what was asked of the provider, for the cost figures. */
export interface RpcStats {
  requests: number;
  calls: number;
  bytesReceived: number;
  rateLimited: number;
}

export class EvmRpcClient {
  readonly name: string;
  readonly stats: RpcStats = { requests: 0, calls: 0, bytesReceived: 0, rateLimited: 0 };
  private nextId = 1;
  private pausedUntilMs = 0;
  private batchRefused = false;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly doFetch: typeof fetch;

  constructor(private readonly options: RpcClientOptions) {
    this.name = options.name ?? new URL(options.url).host;
    this.sleep = options.sleep ?? ((ms) => delay(ms));
    this.doFetch = options.fetch ?? fetch;
  }

  /** One call; its JSON-RPC error becomes an RpcError. */
  async call<T = unknown>(method: string, params: unknown[]): Promise<T> {
    const [result] = await this.send([{ method, params }], false);
    return result as T;
  }

  /**
   * Several calls in one HTTP request (a JSON-RPC batch), answers in the order asked; the first
   * error among them is thrown. Used for reads that are sound together (block headers).
   */
  async batch(calls: readonly RpcCall[]): Promise<unknown[]> {
    if (calls.length === 0) return [];
    if (calls.length === 1 || this.batchRefused) return this.inTurn(calls);
    try {
      return await this.send(calls, true);
    } catch (err) {
      // A provider that refuses batches (one error object for the whole array) is asked in turn
      // from then on; range and rate refusals are the calls' own and go up as they are.
      if (!(err instanceof RpcError) || err.kind !== 'batch_refused') throw err;
      this.batchRefused = true;
      return this.inTurn(calls);
    }
  }

  private async inTurn(calls: readonly RpcCall[]): Promise<unknown[]> {
    const out: unknown[] = [];
    for (const c of calls) out.push(await this.call(c.method, c.params));
    return out;
  }

  private async send(calls: readonly RpcCall[], asBatch: boolean): Promise<unknown[]> {
    const retries = this.options.rateLimitRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      await this.waitForPause();
      try {
        return await this.sendOnce(calls, asBatch);
      } catch (err) {
        if (!(err instanceof RpcError) || err.kind !== 'rate_limited') throw err;
        this.stats.rateLimited++;
        const waitMs = err.retryAfterMs ?? 1000 * 2 ** attempt;
        // The pause holds for every later call too, even when this one gives up.
        this.pausedUntilMs = Math.max(this.pausedUntilMs, this.options.clock.now() + waitMs);
        if (attempt >= retries || waitMs > this.maxWaitMs()) throw err;
      }
    }
  }

  private maxWaitMs(): number {
    return this.options.maxRetryAfterMs ?? 30_000;
  }

  /**
   * Every call to this provider waits out the pause a rate-limited answer asked for; a pause longer
   * than the client waits fails the call at once, without a request, so a reader can go to another
   * provider instead of hanging or hammering this one.
   */
  private async waitForPause(): Promise<void> {
    for (;;) {
      const left = this.pausedUntilMs - this.options.clock.now();
      if (left <= 0) return;
      if (left > this.maxWaitMs())
        throw new RpcError('rate_limited', `paused for ${Math.ceil(left / 1000)} s by the provider's Retry-After`, this.name, 429, left);
      await this.sleep(left);
    }
  }

  private async sendOnce(calls: readonly RpcCall[], asBatch: boolean): Promise<unknown[]> {
    const requests = calls.map((c) => ({ jsonrpc: '2.0', id: this.nextId++, method: c.method, params: c.params }));
    this.stats.requests++;
    this.stats.calls += calls.length;
    let response: Response;
    try {
      response = await this.doFetch(this.options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(asBatch ? requests : requests[0]),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
    } catch (err) {
      const timeout = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new RpcError(timeout ? 'timeout' : 'http', timeout ? 'no answer in time' : `request failed: ${(err as Error).message}`, this.name);
    }
    const text = await response.text();
    this.stats.bytesReceived += Buffer.byteLength(text);
    if (response.status === 429) {
      const wait = parseRetryAfter(response.headers.get('retry-after'), this.options.clock.now());
      throw new RpcError('rate_limited', 'HTTP 429 Too Many Requests', this.name, 429, wait);
    }
    if (text.length > (this.options.maxResponseBytes ?? 16 * 1024 * 1024)) throw new RpcError('malformed', 'answer too large', this.name);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new RpcError(response.ok ? 'malformed' : 'http', response.ok ? 'answer is not JSON' : `HTTP ${response.status}`, this.name, response.status);
    }
    // A provider answers a whole batch it refuses with one error object (or one 4xx).
    const answers = Array.isArray(body) ? body : [body];
    if (!Array.isArray(body) && asBatch) {
      this.throwIfError(body, response, true);
      throw new RpcError('batch_refused', 'a batch was not answered with a list', this.name);
    }
    const byId = new Map<unknown, Record<string, unknown>>();
    for (const a of answers) if (a && typeof a === 'object') byId.set((a as Record<string, unknown>).id, a as Record<string, unknown>);
    return requests.map((req) => {
      const answer = byId.get(req.id);
      if (!answer) {
        if (!response.ok) throw new RpcError('http', `HTTP ${response.status}`, this.name, response.status);
        throw new RpcError('malformed', `no answer to ${req.method}`, this.name);
      }
      this.throwIfError(answer, response);
      if (!('result' in answer)) throw new RpcError('malformed', `answer to ${req.method} has no result`, this.name);
      return answer.result;
    });
  }

  private throwIfError(answer: unknown, response: Response, wholeBatch = false): void {
    const error = (answer as { error?: unknown } | null)?.error;
    if (error === undefined || error === null) return;
    const code = typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : undefined;
    const message = String((error as { message?: unknown }).message ?? 'error');
    const classified = classifyRpcError(code, message);
    const kind = wholeBatch && classified === 'rpc' ? 'batch_refused' : classified;
    const wait = kind === 'rate_limited' ? parseRetryAfter(response.headers.get('retry-after'), this.options.clock.now()) : undefined;
    throw new RpcError(kind, `${message}${code === undefined ? '' : ` (${code})`}`, this.name, code, wait);
  }
}
