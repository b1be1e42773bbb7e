/**
 * The rate sources in the metrics: each source's last rate per currency, its age and whether its
 * last attempt failed, whether its rate for a currency is set aside (an outlier, or outside the
 * plausible range) and whether a currency's rate is held (a jump waiting for its confirming read),
 * set at scrape time from the RateBook (the same figures /health shows).
 * A rate is exported as a Prometheus float for graphs only; prices never read it back.
 */
import type { Metrics } from '../ops/metrics.js';
import { refusalReason } from './rate-book.js';
import type { RateBook } from './rate-book.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'clock'> & { rates: RateBook };

export function registerPricingMetrics(metrics: Metrics, deps: Pick<Deps, 'rates' | 'clock'>): void {
  if (!deps.rates.enabled) return;
  const rate = metrics.gauge('gatewayd_rate_source_rate', 'Units of the currency per 1 USDT, as the source last quoted it', ['source', 'currency']);
  const age = metrics.gauge('gatewayd_rate_source_age_seconds', "Age of the source's last rates (NaN before the first)", ['source']);
  const failing = metrics.gauge('gatewayd_rate_source_failing', "1 when the source's last attempt failed", ['source']);
  const setAside = metrics.gauge(
    'gatewayd_rate_source_set_aside',
    "1 when the source's fresh rate for the currency does not count: an outlier, or outside the plausible range (its rate is gatewayd_rate_source_rate)",
    ['source', 'currency'],
  );
  const held = metrics.gauge('gatewayd_rate_held', "1 when the currency's rate jumped and waits for a confirming read (new prices refused)", ['currency']);
  metrics.onScrape(() => {
    const now = deps.clock.now();
    for (const a of deps.rates.assessAll(now)) {
      const aside = new Set(a.setAside.map((x) => x.name));
      for (const s of deps.rates.sources)
        if (s.currencies.includes(a.currency)) setAside.set({ source: s.name, currency: a.currency }, aside.has(s.name) ? 1 : 0);
      held.set({ currency: a.currency }, a.pending !== null || (a.refusal !== null && refusalReason(a.refusal) === 'jump_unconfirmed') ? 1 : 0);
    }
    for (const s of deps.rates.status(now)) {
      for (const [currency, text] of Object.entries(s.rates)) rate.set({ source: s.name, currency }, Number(text));
      age.set({ source: s.name }, s.age_seconds ?? Number.NaN);
      failing.set({ source: s.name }, s.last_error_at !== null && (s.fetched_at === null || s.last_error_at > s.fetched_at) ? 1 : 0);
    }
  });
}
