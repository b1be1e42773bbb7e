/**
 * An EVM watcher's providers: which may be asked now, and what each answer (or failure) does to the
 * provider's health, by the rule every watcher shares (src/payments/watch/providers.ts). A rate limit keeps the provider out for its Retry-After (the client has already
 * waited out the short ones); any other failure for a backoff that doubles up to a minute; a head a
 * reader refuses (a lying or lagging `finalized`) and a range it cannot read at all are told in
 * `refuses`, once each; a provider that refuses even a one-block eth_getLogs serves no logs: it is
 * told so and left out for half an hour, not asked again at every pass. One provider's trouble never stops the others being asked.
 */
import type { EvmProvider, EvmWatch } from '../../chains/evm/watch.js';
import { attemptRead, type Attempt } from '../watch/providers.js';

export { LOGS_REFUSED, LOGS_REFUSED_RETRY_MS } from '../watch/providers.js';

/** The providers that may be asked now, in the configuration's order. */
export function usableProviders(w: EvmWatch, now: number): EvmProvider[] {
  return w.providers.filter((p) => p.health.retryAt === null || p.health.retryAt <= now);
}

export { refusals } from '../../chains/evm/watch.js';

export type { Attempt } from '../watch/providers.js';

/** Runs one read through a provider and keeps its health (the neutral rule, src/payments/watch/providers.ts). */
export function attempt<T>(p: EvmProvider, now: () => number, read: () => Promise<T>): Promise<Attempt<T>> {
  return attemptRead(p.health, now, read);
}
