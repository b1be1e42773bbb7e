/** The rate sources' state as /health shows it (and the console's settings read). */
import { z } from '@hono/zod-openapi';
import { iso, isoOrNull } from '../lib/clock.js';
import { refusalReason, type RateBook } from './rate-book.js';
import { formatDecimal } from './decimal.js';
import { MARKUP_PATTERN, parseMarkup } from './pricing.service.js';

/** MARKUP_PATTERN with its bounds, for the document: 0 to 20 with at most 2 decimals (the server checks shape and bounds apart, to say which failed). */
export const BOUNDED_MARKUP_PATTERN = '^(20(\\.0{1,2})?|(1[0-9]|[0-9])(\\.[0-9]{1,2})?)$';

/** A markup in percent as the API takes it: "0" to "20", at most 2 decimals (PATCH /me and POST /invoices). */
export const markupPercentSchema = (description: string) =>
  z
    .string()
    .regex(new RegExp(MARKUP_PATTERN), 'expected a percentage from "0" to "20" with at most 2 decimals')
    .refine((v) => parseMarkup(v) !== undefined, 'the markup must be between 0 and 20')
    .openapi({ pattern: BOUNDED_MARKUP_PATTERN, description, example: '1.5' });

export const RateSourceStatusSchema = z
  .object({
    name: z.string().openapi({ description: 'The source: its kind, or kind-2… when several share a kind', example: 'coingecko' }),
    kind: z.enum(['coingecko', 'kraken', 'coinbase']),
    rates: z
      .record(z.string(), z.string())
      .openapi({ description: 'Its last rate per currency: units of the currency per 1 USDT, exact', example: { CNY: '7.115', EUR: '0.9215' } }),
    fetched_at: z
      .string()
      .nullable()
      .openapi({ description: 'When those rates were read; null before the first success', example: '2026-01-01T10:42:05.000Z' }),
    age_seconds: z.number().int().nullable().openapi({ example: 12 }),
    fresh: z.boolean().openapi({ description: 'Younger than pricing.max_age_seconds: it counts for new prices' }),
    last_error: z
      .string()
      .nullable()
      .openapi({ description: 'Why the last failed attempt failed (it may be older than the last success)', example: 'HTTP 429 (rate limited by the source)' }),
    last_error_at: z.string().nullable(),
    paused_until: z
      .string()
      .nullable()
      .openapi({ description: 'After a 429: when it is asked again (its Retry-After, at most pricing.retry_after_max_seconds); null when not paused' }),
  })
  .openapi('RateSourceStatus');

export const CurrencyRateSchema = z
  .object({
    currency: z.string().openapi({ example: 'USD' }),
    rate: z.string().nullable().openapi({ description: 'The rate a new invoice would get now (units per 1 USDT), or null: refused', example: '1.0002' }),
    sources: z.array(z.string()).openapi({ description: 'The sources whose agreeing rates made it', example: ['coinbase', 'coingecko'] }),
    refused: z.string().nullable().openapi({ description: "Why a new invoice is refused now (the 503's details[0].reason), or null", example: null }),
    set_aside: z
      .array(
        z.object({
          source: z.string().openapi({ example: 'kraken' }),
          rate: z.string().openapi({ example: '1.2' }),
          reason: z.enum(['outlier', 'out_of_bounds']).openapi({
            description:
              'outlier: outside the largest group of rates that agree within pricing.max_spread_percent; out_of_bounds: outside the plausible range (pricing.rate_bounds)',
          }),
        }),
      )
      .openapi({ description: 'Fresh rates that did not count' }),
    pending_jump: z
      .object({
        rate: z.string().openapi({ example: '0.5' }),
        since: z.string().openapi({ description: 'The read that first saw it' }),
        confirmable_at: z.string().openapi({ description: 'From when a read that agrees with it confirms it' }),
      })
      .nullable()
      .openapi({ description: 'A rate that moved more than pricing.max_jump_percent, held until a later read confirms it; null when none' }),
  })
  .openapi('CurrencyRate');

export const PricingHealthSchema = z
  .object({
    currencies: z.array(z.string()).openapi({ description: 'pricing.currencies', example: ['USD', 'EUR', 'CNY'] }),
    min_sources: z.number().int(),
    max_age_seconds: z.number().int(),
    max_spread_percent: z.string(),
    max_jump_percent: z.string(),
    jump_window_seconds: z.number().int(),
    jump_confirm_seconds: z.number().int(),
    sources: z.array(RateSourceStatusSchema),
    rates: z.array(CurrencyRateSchema).openapi({ description: 'Per configured currency: the rate now or why it is refused, and what was set aside' }),
  })
  .openapi('PricingHealth');

export function toPricingHealthResponse(book: RateBook, now: number): z.infer<typeof PricingHealthSchema> {
  const { config } = book;
  return {
    currencies: [...config.currencies],
    min_sources: config.min_sources,
    max_age_seconds: config.max_age_seconds,
    max_spread_percent: config.max_spread_percent,
    max_jump_percent: config.max_jump_percent,
    jump_window_seconds: config.jump_window_seconds,
    jump_confirm_seconds: config.jump_confirm_seconds,
    sources: book.status(now).map((s) => ({
      name: s.name,
      kind: s.kind,
      rates: s.rates,
      fetched_at: s.fetched_at === null ? null : iso(s.fetched_at),
      age_seconds: s.age_seconds,
      fresh: s.fresh,
      last_error: s.last_error,
      last_error_at: isoOrNull(s.last_error_at),
      paused_until: isoOrNull(s.paused_until),
    })),
    rates: book.enabled
      ? book.assessAll(now).map((a) => ({
          currency: a.currency,
          rate: a.quote ? formatDecimal(a.quote.rate) : null,
          sources: a.quote?.sources ?? [],
          refused: a.refusal ? refusalReason(a.refusal) : null,
          set_aside: a.setAside.map((x) => ({ source: x.name, rate: formatDecimal(x.rate), reason: x.reason })),
          pending_jump: a.pending
            ? { rate: formatDecimal(a.pending.rate), since: iso(a.pending.since), confirmable_at: iso(a.pending.since + config.jump_confirm_seconds * 1000) }
            : null,
        }))
      : [],
  };
}

/** The rate a new invoice would get now in each configured currency, or null (refused), for the console. */
export function liveQuotes(book: RateBook, now: number): Array<{ currency: string; rate: string | null; sources: string[] }> {
  if (!book.enabled) return [];
  return book
    .assessAll(now)
    .map((a) =>
      a.quote ? { currency: a.currency, rate: formatDecimal(a.quote.rate), sources: a.quote.sources } : { currency: a.currency, rate: null, sources: [] },
    );
}
