/**
 * The rates the background fetcher last read from each source, in memory, and the one rule that
 * turns them into a rate or a refusal (docs/payments.md, Prices in fiat): the median of the rates
 * younger than `pricing.max_age_seconds`, refused (503 `rate_unavailable`) when fewer than
 * `pricing.min_sources` are that fresh, when they differ by more than `pricing.max_spread_percent`,
 * or when the currency is not configured. There is no built-in rate and no stale fallback.
 * Reading a quote is synchronous and never touches the network.
 */
import type { Config } from '../config.js';
import { AppError } from '../lib/errors.js';
import { formatDecimal, median, parseDecimal, spreadExceeds, spreadPercentText, type Decimal } from './decimal.js';
import { DEFAULT_SOURCE_URLS, SOURCES, type RateSourceDef, type SourceKind } from './sources.js';

export type PricingConfig = Config['pricing'];

export interface SourceState {
  /** The kind, or kind-2, kind-3… when several entries share a kind. */
  readonly name: string;
  readonly kind: SourceKind;
  readonly def: RateSourceDef;
  readonly baseUrl: string;
  /** The currencies this source is asked for (configured ones it can quote). */
  readonly currencies: readonly string[];
  rates: Map<string, Decimal>;
  /** When the rates above were read (ms); null before the first success. */
  fetchedAt: number | null;
  lastAttemptAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  /** A 429's Retry-After: no request before this time (ms). */
  notBefore: number;
}

export interface Quote {
  currency: string;
  /** Units of the currency per 1 USDT: the median of the fresh rates. */
  rate: Decimal;
  /** Names of the sources whose rates made the median. */
  sources: string[];
  /** When the oldest of those rates was read (ms). */
  rateAt: number;
}

export class RateBook {
  readonly sources: SourceState[];

  constructor(readonly config: PricingConfig) {
    const seen = new Map<string, number>();
    this.sources = config.sources.map((entry) => {
      const n = (seen.get(entry.kind) ?? 0) + 1;
      seen.set(entry.kind, n);
      const def = SOURCES[entry.kind];
      return {
        name: n === 1 ? entry.kind : `${entry.kind}-${n}`,
        kind: entry.kind,
        def,
        baseUrl: entry.url === '' ? DEFAULT_SOURCE_URLS[entry.kind] : entry.url,
        currencies: def.quotable(config.currencies),
        rates: new Map(),
        fetchedAt: null,
        lastAttemptAt: null,
        lastError: null,
        lastErrorAt: null,
        notBefore: 0,
      };
    });
  }

  get enabled(): boolean {
    return this.sources.length > 0;
  }

  record(source: SourceState, rates: Map<string, Decimal>, at: number): void {
    source.rates = rates;
    source.fetchedAt = at;
    source.lastAttemptAt = at;
  }

  recordError(source: SourceState, message: string, at: number): void {
    source.lastAttemptAt = at;
    source.lastError = message;
    source.lastErrorAt = at;
  }

  /** The rate for a new invoice now, or the 503 that says why there is none. */
  quote(currency: string, now: number): Quote {
    const { config } = this;
    if (!config.currencies.includes(currency)) {
      throw unavailable(
        `${currency} is not a price currency of this gateway (pricing.currencies: ${config.currencies.join(', ') || 'none'})`,
        'currency_not_configured',
      );
    }
    if (!this.enabled) {
      throw unavailable(`No ${currency} rate: this gateway has no rate sources ([[pricing.sources]]); price in USDT`, 'no_sources');
    }
    const maxAgeMs = config.max_age_seconds * 1000;
    const fresh: Array<{ name: string; rate: Decimal; at: number }> = [];
    for (const s of this.sources) {
      const rate = s.rates.get(currency);
      if (rate !== undefined && s.fetchedAt !== null && now - s.fetchedAt <= maxAgeMs) fresh.push({ name: s.name, rate, at: s.fetchedAt });
    }
    if (fresh.length < config.min_sources) {
      throw unavailable(
        `No ${currency} rate now: ${fresh.length} of the ${config.min_sources} rate source(s) required (pricing.min_sources) ` +
          `has a rate younger than ${config.max_age_seconds} s; nothing was created, retry later`,
        'stale',
      ).withHeader('Retry-After', String(config.refresh_seconds));
    }
    const rates = fresh.map((f) => f.rate);
    const mid = median(rates);
    if (spreadExceeds(rates, mid, parseDecimal(config.max_spread_percent)!)) {
      throw unavailable(
        `No ${currency} rate now: the fresh rates (${fresh.map((f) => `${f.name} ${formatDecimal(f.rate)}`).join(', ')}) differ by ` +
          `${spreadPercentText(rates, mid)} %, more than pricing.max_spread_percent (${config.max_spread_percent} %); nothing was created, retry later`,
        'spread',
      ).withHeader('Retry-After', String(config.refresh_seconds));
    }
    return {
      currency,
      rate: mid,
      sources: fresh.map((f) => f.name).sort(),
      rateAt: Math.min(...fresh.map((f) => f.at)),
    };
  }

  /** Each source's last rates, age and error, for /health, the metrics, `doctor` and the console. */
  status(now: number): SourceStatus[] {
    return this.sources.map((s) => ({
      name: s.name,
      kind: s.kind,
      host: hostOf(s.baseUrl),
      currencies: [...s.currencies],
      rates: Object.fromEntries([...s.rates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, d]) => [c, formatDecimal(d)])),
      fetched_at: s.fetchedAt,
      age_seconds: s.fetchedAt === null ? null : Math.max(0, Math.floor((now - s.fetchedAt) / 1000)),
      fresh: s.fetchedAt !== null && now - s.fetchedAt <= this.config.max_age_seconds * 1000,
      last_error: s.lastError,
      last_error_at: s.lastErrorAt,
    }));
  }
}

export interface SourceStatus {
  name: string;
  kind: SourceKind;
  /** The host asked (never the whole URL, which may carry a key). */
  host: string;
  currencies: string[];
  rates: Record<string, string>;
  fetched_at: number | null;
  age_seconds: number | null;
  fresh: boolean;
  last_error: string | null;
  last_error_at: number | null;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

function unavailable(message: string, reason: string): AppError {
  return new AppError('rate_unavailable', message, [{ path: 'currency', message, reason }]);
}
