/**
 * The rates the background fetcher last read from each source, in memory, and the rules that turn
 * them into a rate or a refusal (docs/payments.md, Prices in fiat). Of the rates younger than
 * `pricing.max_age_seconds`, those outside the currency's plausible range (`pricing.rate_bounds`,
 * else the built-in one) are set aside; of the rest, the largest group that agrees within
 * `pricing.max_spread_percent` gives the median, and the sources outside it are set aside as
 * outliers. Refused (503 `rate_unavailable`, with the reason) when fewer than `pricing.min_sources`
 * are fresh, in range or in that group, when two groups tie, when the median jumped more than
 * `pricing.max_jump_percent` from a rate accepted within `pricing.jump_window_seconds` and no later
 * read has confirmed it yet, or when the currency is not configured. There is no built-in rate and
 * no stale fallback. Reading a quote is synchronous and never touches the network; the fetcher
 * calls settle() after each pass to accept rates and confirm jumps.
 */
import type { Config } from '../config.js';
import { AppError } from '../lib/errors.js';
import type { Log } from '../lib/log.js';
import { plausibleRange } from './currencies.js';
import { compare, formatDecimal, median, movesMoreThan, parseDecimal, spreadExceeds, spreadPercentText, type Decimal } from './decimal.js';
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
  /** A 429's Retry-After (capped at pricing.retry_after_max_seconds): no request before this time (ms). */
  notBefore: number;
}

export interface Quote {
  currency: string;
  /** Units of the currency per 1 USDT: the median of the agreeing fresh rates. */
  rate: Decimal;
  /** Names of the sources whose rates made the median. */
  sources: string[];
  /** When the oldest of those rates was read (ms). */
  rateAt: number;
}

export type SetAsideReason = 'outlier' | 'out_of_bounds';

/** A fresh rate that did not count: outside the agreeing group, or outside the plausible range. */
export interface SetAside {
  name: string;
  rate: Decimal;
  reason: SetAsideReason;
}

/** A currency's state now: its quote or the refusal, and the rates set aside on the way. */
export interface Assessment {
  currency: string;
  quote: Quote | null;
  refusal: AppError | null;
  setAside: SetAside[];
  /** A jump waiting for its confirming read (null when none). */
  pending: Pending | null;
}

interface Sample {
  rate: Decimal;
  at: number;
}

interface Pending {
  rate: Decimal;
  /** The read that first saw it (ms); a read jump_confirm_seconds later that agrees confirms it. */
  since: number;
}

/** Per currency: the rates accepted within the jump window and a jump waiting to be confirmed. */
interface Guard {
  accepted: Sample[];
  pending: Pending | null;
  /** The set-aside sources last logged, to log a change once. */
  setAsideKey: string;
}

interface Fresh {
  name: string;
  rate: Decimal;
  at: number;
}

export class RateBook {
  readonly sources: SourceState[];
  private readonly guards = new Map<string, Guard>();

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
    const a = this.assess(currency, now);
    if (a.refusal) throw a.refusal;
    return a.quote!;
  }

  /** Every configured currency's state now, for /health, the metrics, `doctor` and the console. */
  assessAll(now: number): Assessment[] {
    return this.config.currencies.map((c) => this.assess(c, now));
  }

  assess(currency: string, now: number): Assessment {
    const guard = this.guards.get(currency);
    const pending = guard?.pending ?? null;
    const agreed = this.agree(currency, now);
    if (agreed.refusal) return { currency, quote: null, refusal: agreed.refusal, setAside: agreed.setAside, pending };
    const quote = agreed.quote!;
    const { config } = this;
    const from = guard ? jumpedFrom(quote.rate, accepted(guard, now, config), config) : undefined;
    if (from === undefined) return { currency, quote, refusal: null, setAside: agreed.setAside, pending };
    const wait = pending ? Math.ceil((pending.since + config.jump_confirm_seconds * 1000 - now) / 1000) : config.jump_confirm_seconds;
    const refusal = unavailable(
      `No ${currency} rate now: the agreeing rates moved from ${formatDecimal(from)} to ${formatDecimal(quote.rate)}, more than ` +
        `pricing.max_jump_percent (${config.max_jump_percent} %) within ${config.jump_window_seconds} s; the new rate is used once a read ` +
        `at least ${config.jump_confirm_seconds} s after the first one agrees with it. Nothing was created, retry later`,
      'jump_unconfirmed',
    ).withHeader('Retry-After', String(Math.max(config.refresh_seconds, wait)));
    return { currency, quote: null, refusal, setAside: agreed.setAside, pending };
  }

  /**
   * After each pass of the fetcher: per currency, the agreeing rate is accepted unless it jumped
   * (then it waits as pending); a pending jump is accepted by a read at least jump_confirm_seconds
   * after it was first seen that agrees with it (within max_spread_percent), every rate of it read
   * after the jump was first seen, and replaced by a read that does not agree.
   */
  settle(now: number, log?: Log): void {
    const { config } = this;
    for (const currency of config.currencies) {
      let guard = this.guards.get(currency);
      if (!guard) this.guards.set(currency, (guard = { accepted: [], pending: null, setAsideKey: '' }));
      guard.accepted = accepted(guard, now, config);
      const agreed = this.agree(currency, now);
      const key = agreed.setAside.map((x) => `${x.name} ${formatDecimal(x.rate)} ${x.reason}`).join(', ');
      if (key !== guard.setAsideKey && log) {
        if (key === '') log.info({ currency }, 'no rate source set aside any more');
        else log.warn({ currency, set_aside: key }, 'rate source set aside');
      }
      guard.setAsideKey = key;
      if (!agreed.quote) continue;
      const rate = agreed.quote.rate;
      if (jumpedFrom(rate, guard.accepted, config) === undefined) {
        accept(guard, rate, now);
        guard.pending = null;
        continue;
      }
      const spread = parseDecimal(config.max_spread_percent)!;
      const { pending } = guard;
      if (pending && !movesMoreThan(rate, pending.rate, spread)) {
        // Only rates read after the jump was first seen confirm it: a source that stopped answering
        // (an error, a 429) keeps its last rate fresh for max_age_seconds, and that is the same read.
        if (now - pending.since >= config.jump_confirm_seconds * 1000 && agreed.quote.rateAt > pending.since) {
          log?.warn({ currency, rate: formatDecimal(rate) }, 'rate jump confirmed by a later read; it is used from now on');
          guard.accepted = [{ rate, at: now }];
          guard.pending = null;
        }
      } else {
        log?.warn({ currency, rate: formatDecimal(rate) }, 'rate jump held until a later read confirms it');
        guard.pending = { rate, since: now };
      }
    }
  }

  /** The median of the largest agreeing group of plausible fresh rates, or the refusal. */
  private agree(currency: string, now: number): { quote?: Quote; refusal?: AppError; setAside: SetAside[] } {
    const { config } = this;
    if (!config.currencies.includes(currency)) {
      return {
        refusal: unavailable(
          `${currency} is not a price currency of this gateway (pricing.currencies: ${config.currencies.join(', ') || 'none'})`,
          'currency_not_configured',
        ),
        setAside: [],
      };
    }
    if (!this.enabled) {
      return { refusal: unavailable(`No ${currency} rate: this gateway has no rate sources ([[pricing.sources]]); price in USDT`, 'no_sources'), setAside: [] };
    }
    const retry = (e: AppError) => e.withHeader('Retry-After', String(config.refresh_seconds));
    const maxAgeMs = config.max_age_seconds * 1000;
    const fresh: Fresh[] = [];
    for (const s of this.sources) {
      const rate = s.rates.get(currency);
      if (rate !== undefined && s.fetchedAt !== null && now - s.fetchedAt <= maxAgeMs) fresh.push({ name: s.name, rate, at: s.fetchedAt });
    }
    const required = `${config.min_sources} rate source(s) required (pricing.min_sources)`;
    if (fresh.length < config.min_sources) {
      return {
        refusal: retry(
          unavailable(
            `No ${currency} rate now: ${fresh.length} of the ${required} has a rate younger than ${config.max_age_seconds} s; nothing was created, retry later`,
            'stale',
          ),
        ),
        setAside: [],
      };
    }
    const range = this.range(currency);
    const inRange = range ? fresh.filter((f) => compare(f.rate, range.min) >= 0 && compare(f.rate, range.max) <= 0) : fresh;
    const setAside: SetAside[] = fresh.filter((f) => !inRange.includes(f)).map((f) => ({ name: f.name, rate: f.rate, reason: 'out_of_bounds' }));
    if (inRange.length < config.min_sources) {
      return {
        refusal: retry(
          unavailable(
            `No ${currency} rate now: the fresh rates (${listRates(setAside)}) are outside the plausible range ` +
              `${formatDecimal(range!.min)} to ${formatDecimal(range!.max)} ${currency} per USDT (pricing.rate_bounds), leaving ` +
              `${inRange.length} of the ${required}; nothing was created, retry later`,
            'out_of_bounds',
          ),
        ),
        setAside,
      };
    }
    const groups = agreeingGroups(inRange, parseDecimal(config.max_spread_percent)!);
    const largest = groups[0]!;
    if (groups.length > 1 || largest.length < config.min_sources) {
      const rates = inRange.map((f) => f.rate);
      const why =
        groups.length > 1
          ? `no group of them agrees within pricing.max_spread_percent (${config.max_spread_percent} %) without another group of ${largest.length} as large`
          : `fewer than pricing.min_sources (${config.min_sources}) of them agree within pricing.max_spread_percent (${config.max_spread_percent} %)`;
      return {
        refusal: retry(
          unavailable(
            `No ${currency} rate now: the fresh rates (${listRates(inRange)}) differ by ${spreadPercentText(rates, median(rates))} %, and ${why}; ` +
              'nothing was created, retry later',
            'spread',
          ),
        ),
        setAside,
      };
    }
    for (const f of inRange) if (!largest.includes(f)) setAside.push({ name: f.name, rate: f.rate, reason: 'outlier' });
    setAside.sort((a, b) => (a.name < b.name ? -1 : 1));
    return {
      quote: {
        currency,
        rate: median(largest.map((f) => f.rate)),
        sources: largest.map((f) => f.name).sort(),
        rateAt: Math.min(...largest.map((f) => f.at)),
      },
      setAside,
    };
  }

  /** The plausible range of a currency's rate: pricing.rate_bounds, else the built-in one. */
  range(currency: string): { min: Decimal; max: Decimal } | undefined {
    const own = Object.hasOwn(this.config.rate_bounds, currency) ? this.config.rate_bounds[currency] : undefined;
    return own ? { min: parseDecimal(own.min)!, max: parseDecimal(own.max)! } : plausibleRange(currency);
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
      paused_until: s.notBefore > now ? s.notBefore : null,
    }));
  }
}

/**
 * The largest groups of rates that agree (their spread within `limit` percent of their own median),
 * each a run of the rates in order; more than one when several groups are equally large.
 */
function agreeingGroups(fresh: readonly Fresh[], limit: Decimal): Fresh[][] {
  const sorted = [...fresh].sort((a, b) => compare(a.rate, b.rate));
  let best: Fresh[][] = [];
  for (let i = 0; i < sorted.length; i += 1) {
    for (let j = sorted.length; j > i; j -= 1) {
      const run = sorted.slice(i, j);
      const rates = run.map((f) => f.rate);
      if (spreadExceeds(rates, median(rates), limit)) continue;
      if (best.length === 0 || run.length > best[0]!.length) best = [run];
      else if (run.length === best[0]!.length) best.push(run);
      break;
    }
  }
  return best;
}

/**
 * The accepted rates still inside the jump window. While a jump is held, the last accepted rate
 * stays even when older: only a confirming read ends a hold, never the window passing (a rate that
 * flips between two jumped values on every read is never confirmed, and would otherwise be taken
 * as a first rate once the rate it jumped from left the window).
 */
function accepted(guard: Guard, now: number, config: PricingConfig): Sample[] {
  const since = now - config.jump_window_seconds * 1000;
  const inWindow = guard.accepted.filter((s) => s.at >= since);
  const last = guard.accepted[guard.accepted.length - 1];
  return inWindow.length === 0 && guard.pending && last ? [last] : inWindow;
}

/** An accepted rate that `rate` is further from than max_jump_percent, or undefined. */
function jumpedFrom(rate: Decimal, samples: readonly Sample[], config: PricingConfig): Decimal | undefined {
  const limit = parseDecimal(config.max_jump_percent)!;
  return samples.find((s) => movesMoreThan(rate, s.rate, limit))?.rate;
}

function accept(guard: Guard, rate: Decimal, now: number): void {
  const last = guard.accepted[guard.accepted.length - 1];
  if (last && compare(last.rate, rate) === 0) last.at = now;
  else guard.accepted.push({ rate, at: now });
}

function listRates(list: ReadonlyArray<{ name: string; rate: Decimal }>): string {
  return list.map((f) => `${f.name} ${formatDecimal(f.rate)}`).join(', ');
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
  /** After a 429: no request before this time (ms); null when not paused. */
  paused_until: number | null;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** The reason of a rate_unavailable refusal ("stale", "spread", "jump_unconfirmed"...). */
export function refusalReason(err: AppError): string {
  return err.details?.[0]?.reason ?? err.code;
}

function unavailable(message: string, reason: string): AppError {
  return new AppError('rate_unavailable', message, [{ path: 'currency', message, reason }]);
}
