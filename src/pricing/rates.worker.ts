/**
 * The background rate fetcher: every `pricing.refresh_seconds` (60) it asks each configured source
 * once for all the currencies it quotes, in parallel, files the answers in the RateBook and lets it
 * settle (accept the agreeing rates, hold or confirm jumps). One request a minute per source stays
 * far inside each public API's limits; a 429 is honoured: its Retry-After (seconds or a date), else
 * `pricing.retry_after_max_seconds`, and never longer than that, so a source that asked for an hour
 * or a day is probed again after five minutes. Requests never run on an invoice's path: creation
 * reads the book.
 */
import type { Worker } from '../lib/loop.js';
import type { RateBook, SourceState } from './rate-book.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'config' | 'clock' | 'log'> & { rates: RateBook };

const TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 1_000_000;

type FetcherDeps = Pick<Deps, 'clock' | 'log'> & { rates: RateBook };

/** One pass over every source; resolves when all have answered or failed. */
export async function runOnce(deps: FetcherDeps, timeoutMs = TIMEOUT_MS): Promise<void> {
  const now = deps.clock.now();
  await Promise.all(deps.rates.sources.filter((s) => s.currencies.length > 0 && now >= s.notBefore).map((s) => fetchSource(deps, s, timeoutMs)));
  deps.rates.settle(deps.clock.now(), deps.log);
}

async function fetchSource(deps: FetcherDeps, source: SourceState, timeoutMs: number): Promise<void> {
  const { url } = source.def.request(source.baseUrl, source.currencies);
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    const body = await readLimited(response);
    const at = deps.clock.now();
    if (response.status === 429) {
      const capMs = deps.rates.config.retry_after_max_seconds * 1000;
      source.notBefore = at + Math.min(retryAfterMs(response.headers.get('retry-after'), at) ?? capMs, capMs);
      throw new Error('HTTP 429 (rate limited by the source)');
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const rates = source.def.parse(body, source.currencies);
    if (rates.size === 0) throw new Error('the answer quoted none of the configured currencies');
    deps.rates.record(source, rates, at);
    deps.log.debug({ source: source.name, currencies: rates.size }, 'rates fetched');
  } catch (err) {
    const message = describe(err, timeoutMs);
    deps.rates.recordError(source, message, deps.clock.now());
    deps.log.warn({ source: source.name, host: new URL(url).host, error: message }, 'rate source failed');
  }
}

/** A Retry-After header in ms from `now`: delay-seconds or an HTTP-date; undefined when absent or malformed. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  const text = header?.trim() ?? '';
  if (/^[0-9]{1,12}$/.test(text)) return Number(text) * 1000;
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function readLimited(response: Response): Promise<string> {
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_BODY_BYTES) throw new Error('answer too large');
  const text = await response.text();
  if (text.length > MAX_BODY_BYTES) throw new Error('answer too large');
  return text;
}

function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
    const cause = (err as { cause?: { code?: string } }).cause;
    if (cause?.code) return `${err.message} (${cause.code})`;
    if (err instanceof SyntaxError) return 'the answer is not JSON';
    return err.message.slice(0, 300);
  }
  return String(err).slice(0, 300);
}

export function ratesWorker(deps: Deps): Worker {
  return {
    name: 'rates',
    intervalMs: deps.config.pricing.refresh_seconds * 1000,
    runOnce: async () => {
      await runOnce(deps);
      return false;
    },
  };
}
