/**
 * What every watcher does with its providers, whatever the family: names them without their key,
 * paces their requests, and keeps each one's health from what its answers (or failures) do. A rate
 * limit keeps the provider out for its Retry-After; any other failure for a backoff that doubles up
 * to a minute; what a reader refuses to believe (a lying head, an unreadable answer) is told in
 * `refuses`, once each. One provider's trouble never stops the others being asked.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { AccountProvider, AccountProviderHealth, AccountWatch } from '../../chains/account-watch.js';
import { ReadRefused } from '../../chains/evm/reader.js';
import { RpcError } from '../../chains/evm/rpc.js';
import { SolanaAnswerError } from '../../chains/solana/rpc.js';
import { MalformedTransaction } from '../../chains/solana/transaction.js';
import { TonReadRefused } from '../../chains/ton/reader.js';
import { TonHttpError } from '../../chains/ton/rpc.js';

const MAX_BACKOFF_MS = 60_000;
const MAX_REFUSALS_SHOWN = 6;
/** An EVM provider that serves no eth_getLogs is asked again after this long (it may change its mind), not every minute. */
export const LOGS_REFUSED_RETRY_MS = 30 * 60_000;
/** How /health says it. */
export const LOGS_REFUSED = 'eth_getLogs at all (it does not serve eth_getLogs: even a one-block query is refused)';

/** Scheme and host only: many providers put the access key in the path or the query. */
export function providerName(url: string, taken: Set<string>): string {
  const u = new URL(url);
  let name = `${u.protocol}//${u.host}`;
  for (let i = 2; taken.has(name); i++) name = `${u.protocol}//${u.host} #${i}`;
  taken.add(name);
  return name;
}

/**
 * A fetch that starts at most `perSecond` requests a second (0: unpaced). Wall time on purpose, not
 * the injected clock: the provider's limit runs in real time and the wait is a real timer.
 */
export function pacedFetch(perSecond: number, inner: typeof fetch): typeof fetch {
  if (perSecond <= 0) return inner;
  let nextSlot = 0;
  return async (input, init) => {
    const now = performance.now();
    const slot = Math.max(now, nextSlot);
    nextSlot = slot + 1000 / perSecond;
    if (slot > now) await delay(slot - now);
    return inner(input, init);
  };
}

export function newHealth(name: string): AccountProviderHealth {
  return {
    name,
    state: 'ok',
    lastError: null,
    lastOkAt: null,
    retryAt: null,
    consecutiveFailures: 0,
    failures: 0,
    refuses: [],
    droppedLogs: 0,
    disagreements: 0,
  };
}

/** The providers that may be asked now, in the configuration's order. */
export function usableAccountProviders(w: AccountWatch, now: number): AccountProvider[] {
  return w.providers.filter((p) => p.health.retryAt === null || p.health.retryAt <= now);
}

function refusal(h: AccountProviderHealth, text: string): void {
  if (!h.refuses.includes(text)) h.refuses.push(text);
  if (h.refuses.length > MAX_REFUSALS_SHOWN) h.refuses.shift();
}

export type Attempt<T> = { ok: true; value: T } | { ok: false; error: string };

/** A provider's failure, in the terms the health keeps; undefined for an error that is a bug of ours. */
function classify(err: unknown): { rateLimited: boolean; retryAfterMs?: number; refused?: string; named: boolean; holdMs?: number } | undefined {
  if (err instanceof RpcError) return { rateLimited: err.kind === 'rate_limited', retryAfterMs: err.retryAfterMs, named: true };
  if (err instanceof TonHttpError) return { rateLimited: err.kind === 'rate_limited', retryAfterMs: err.retryAfterMs, named: true };
  if (err instanceof SolanaAnswerError) return { rateLimited: false, refused: 'a well-formed answer', named: true };
  // Public BSC nodes refuse even a one-block eth_getLogs: no range cap, a provider that serves no logs.
  if (err instanceof ReadRefused && err.reason === 'logs_refused')
    return { rateLimited: false, refused: LOGS_REFUSED, named: false, holdMs: LOGS_REFUSED_RETRY_MS };
  if (err instanceof ReadRefused || err instanceof TonReadRefused) {
    return { rateLimited: false, refused: err.reason === 'implausible_head' ? 'a credible final head' : `a readable answer (${err.reason})`, named: false };
  }
  if (err instanceof MalformedTransaction) return { rateLimited: false, refused: 'a well-formed transaction', named: false };
  return undefined;
}

/** Runs one read through a provider and keeps its health: the result, or the error in words. */
export async function attemptRead<T>(h: AccountProviderHealth, now: () => number, read: () => Promise<T>): Promise<Attempt<T>> {
  try {
    const value = await read();
    h.state = 'ok';
    h.consecutiveFailures = 0;
    h.retryAt = null;
    h.lastOkAt = now();
    return { ok: true, value };
  } catch (err) {
    const kind = classify(err);
    if (!kind) throw err;
    const at = now();
    h.failures += 1;
    h.consecutiveFailures += 1;
    const message = (err as Error).message;
    const text = (kind.named ? message : `${h.name}: ${message}`).slice(0, 300);
    h.lastError = text;
    if (kind.rateLimited) {
      h.state = 'backing_off';
      h.retryAt = at + (kind.retryAfterMs ?? Math.min(MAX_BACKOFF_MS, 1000 * 2 ** h.consecutiveFailures));
      refusal(h, 'bursts of requests (HTTP 429 or a rate-limit error)');
    } else if (kind.holdMs !== undefined) {
      h.state = 'failing';
      h.retryAt = at + kind.holdMs;
      if (kind.refused) refusal(h, kind.refused);
    } else {
      h.state = h.consecutiveFailures >= 3 ? 'failing' : 'backing_off';
      h.retryAt = at + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (h.consecutiveFailures - 1));
      if (kind.refused) refusal(h, kind.refused);
    }
    return { ok: false, error: text };
  }
}
