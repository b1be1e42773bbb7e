/**
 * The rate sources in the metrics: each source's last rate per currency, its age and whether its
 * last attempt failed, set at scrape time from the RateBook (the same figures /health shows).
 * A rate is exported as a Prometheus float for graphs only; prices never read it back.
 */
import type { AppDeps } from '../app-deps.js';
import type { Metrics } from '../ops/metrics.js';

export function registerPricingMetrics(metrics: Metrics, deps: Pick<AppDeps, 'rates' | 'clock'>): void {
  if (!deps.rates.enabled) return;
  const rate = metrics.gauge('gatewayd_rate_source_rate', 'Units of the currency per 1 USDT, as the source last quoted it', ['source', 'currency']);
  const age = metrics.gauge('gatewayd_rate_source_age_seconds', "Age of the source's last rates (NaN before the first)", ['source']);
  const failing = metrics.gauge('gatewayd_rate_source_failing', "1 when the source's last attempt failed", ['source']);
  metrics.onScrape(() => {
    for (const s of deps.rates.status(deps.clock.now())) {
      for (const [currency, text] of Object.entries(s.rates)) rate.set({ source: s.name, currency }, Number(text));
      age.set({ source: s.name }, s.age_seconds ?? Number.NaN);
      failing.set({ source: s.name }, s.last_error_at !== null && (s.fetched_at === null || s.last_error_at > s.fetched_at) ? 1 : 0);
    }
  });
}
