/**
 * Rate sources for tests: the product's simulated rate server (src/devnet/rate-source.ts), a real
 * loopback HTTP server answering CoinGecko's, Kraken's and Coinbase's public shapes, and the
 * `[pricing]` configuration that points a test app at it.
 *
 *   const rates = await startRateSources({ CNY: '7.115' });
 *   const t = await startTestApp({ config: { pricing: pricingConfig(rates) } });
 *   await fetchRates(t);                       // one pass of the background fetcher
 */
import { startSimulatedRates, type SimulatedRates } from '../../src/devnet/rate-source.js';
import { runOnce } from '../../src/pricing/rates.worker.js';
import type { SourceKind } from '../../src/pricing/sources.js';
import type { TestApp } from './app.js';

export type RateSources = SimulatedRates;

export function startRateSources(rates?: Record<string, string>): Promise<RateSources> {
  return startSimulatedRates(rates ? { rates } : {});
}

/** A [pricing] section with one source of each kind on the stand-in (or the kinds given). */
export function pricingConfig(rates: RateSources, extra: Record<string, unknown> = {}, kinds: SourceKind[] = ['coingecko', 'kraken', 'coinbase']) {
  return { sources: kinds.map((kind) => ({ kind, url: rates.url })), ...extra };
}

/** One pass of the background fetcher, at the app's clock. */
export function fetchRates(t: TestApp): Promise<void> {
  return runOnce(t.deps);
}
