/**
 * The background rate fetcher: every `pricing.refresh_seconds` (60) it asks each configured source
 * once for all the currencies it quotes, in parallel, and files the answers in the RateBook. One
 * request a minute per source stays far inside each public API's limits; a 429 is honoured (its
 * Retry-After, else ten minutes). Requests never run on an invoice's path: creation reads the book.
 */
import type { AppDeps } from '../app-deps.js';
import type { Worker } from '../lib/loop.js';
import { MINUTE } from '../lib/clock.js';
import type { RateBook, SourceState } from './rate-book.js';

const TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 1_000_000;

type FetcherDeps = Pick<AppDeps, 'clock' | 'log'> & { rates: RateBook };

/** One pass over every source; resolves when all have answered or failed. */
export async function runOnce(deps: FetcherDeps, timeoutMs = TIMEOUT_MS): Promise<void> {
  const now = deps.clock.now();
  await Promise.all(deps.rates.sources.filter((s) => s.currencies.length > 0 && now >= s.notBefore).map((s) => fetchSource(deps, s, timeoutMs)));
}

async function fetchSource(deps: FetcherDeps, source: SourceState, timeoutMs: number): Promise<void> {
  const { url } = source.def.request(source.baseUrl, source.currencies);
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    const body = await readLimited(response);
    const at = deps.clock.now();
    if (response.status === 429) {
      const retry = Number(response.headers.get('retry-after'));
      source.notBefore = at + (Number.isInteger(retry) && retry > 0 ? Math.min(retry, 3600) * 1000 : 10 * MINUTE);
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

export function ratesWorker(deps: AppDeps): Worker {
  return {
    name: 'rates',
    intervalMs: deps.config.pricing.refresh_seconds * 1000,
    runOnce: async () => {
      await runOnce(deps);
      return false;
    },
  };
}
