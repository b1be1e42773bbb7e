/**
 * An EVM watcher's providers: which may be asked now, and what each answer (or failure) does to the
 * provider's health. A rate limit keeps the provider out for its Retry-After (the client has already
 * waited out the short ones); any other failure for a backoff that doubles up to a minute; a head a
 * reader refuses (a lying or lagging `finalized`) and a range it cannot read at all are told in
 * `refuses`, once each; a provider that refuses even a one-block eth_getLogs serves no logs: it is
 * told so and left out for half an hour, not asked again at every pass. One provider's trouble never stops the others being asked.
 */
import { ReadRefused } from '../../chains/evm/reader.js';
import { RpcError } from '../../chains/evm/rpc.js';
import type { EvmProvider, EvmWatch } from '../../chains/evm/watch.js';

const MAX_BACKOFF_MS = 60_000;
/** A provider that serves no eth_getLogs is asked again after this long (it may change its mind), not every minute. */
export const LOGS_REFUSED_RETRY_MS = 30 * 60_000;
/** How /health says it. */
export const LOGS_REFUSED = 'eth_getLogs at all (it does not serve eth_getLogs: even a one-block query is refused)';
const MAX_REFUSALS_SHOWN = 6;

/** The providers that may be asked now, in the configuration's order. */
export function usableProviders(w: EvmWatch, now: number): EvmProvider[] {
  return w.providers.filter((p) => p.health.retryAt === null || p.health.retryAt <= now);
}

function refusal(p: EvmProvider, text: string): void {
  const r = p.health.refuses;
  if (!r.includes(text)) r.push(text);
  if (r.length > MAX_REFUSALS_SHOWN) r.shift();
}

/** What a provider refuses, as /health says it: its remembered range cap, and its own refusals. */
export function refusals(w: EvmWatch, p: EvmProvider): string[] {
  const cap = w.caps.get(p.health.name);
  return [...(cap !== undefined ? [`eth_getLogs over more than ${cap} blocks`] : []), ...p.health.refuses];
}

export type Attempt<T> = { ok: true; value: T } | { ok: false; error: string };

/** Runs one read through a provider and keeps its health: the result, or the error in words. */
export async function attempt<T>(p: EvmProvider, now: () => number, read: () => Promise<T>): Promise<Attempt<T>> {
  try {
    const value = await read();
    const h = p.health;
    h.state = 'ok';
    h.consecutiveFailures = 0;
    h.retryAt = null;
    h.lastOkAt = now();
    return { ok: true, value };
  } catch (err) {
    if (!(err instanceof RpcError) && !(err instanceof ReadRefused)) throw err;
    const h = p.health;
    const at = now();
    h.failures += 1;
    h.consecutiveFailures += 1;
    // An RpcError names its provider already; a reader's refusal does not.
    const text = (err instanceof RpcError ? err.message : `${h.name}: ${err.message}`).slice(0, 300);
    h.lastError = text;
    if (err instanceof RpcError && err.kind === 'rate_limited') {
      h.state = 'backing_off';
      h.retryAt = at + (err.retryAfterMs ?? Math.min(MAX_BACKOFF_MS, 1000 * 2 ** h.consecutiveFailures));
      refusal(p, 'bursts of requests (HTTP 429 or a rate-limit error)');
    } else if (err instanceof ReadRefused && err.reason === 'logs_refused') {
      h.state = 'failing';
      h.retryAt = at + LOGS_REFUSED_RETRY_MS;
      refusal(p, LOGS_REFUSED);
    } else {
      h.state = h.consecutiveFailures >= 3 ? 'failing' : 'backing_off';
      h.retryAt = at + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (h.consecutiveFailures - 1));
      if (err instanceof ReadRefused) refusal(p, err.reason === 'implausible_head' ? 'a credible final head' : `a readable answer (${err.reason})`);
    }
    return { ok: false, error: text };
  }
}
