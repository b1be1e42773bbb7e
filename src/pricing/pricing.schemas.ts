/** The rate sources' state as /health shows it (and the console's settings read). */
import { z } from '@hono/zod-openapi';
import { iso, isoOrNull } from '../lib/clock.js';
import type { RateBook } from './rate-book.js';
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
  })
  .openapi('RateSourceStatus');

export const PricingHealthSchema = z
  .object({
    currencies: z.array(z.string()).openapi({ description: 'pricing.currencies', example: ['USD', 'EUR', 'CNY'] }),
    min_sources: z.number().int(),
    max_age_seconds: z.number().int(),
    max_spread_percent: z.string(),
    sources: z.array(RateSourceStatusSchema),
  })
  .openapi('PricingHealth');

export function toPricingHealthResponse(book: RateBook, now: number): z.infer<typeof PricingHealthSchema> {
  const { config } = book;
  return {
    currencies: [...config.currencies],
    min_sources: config.min_sources,
    max_age_seconds: config.max_age_seconds,
    max_spread_percent: config.max_spread_percent,
    sources: book.status(now).map((s) => ({
      name: s.name,
      kind: s.kind,
      rates: s.rates,
      fetched_at: s.fetched_at === null ? null : iso(s.fetched_at),
      age_seconds: s.age_seconds,
      fresh: s.fresh,
      last_error: s.last_error,
      last_error_at: isoOrNull(s.last_error_at),
    })),
  };
}

/** The rate a new invoice would get now in each configured currency, or null (refused), for the console. */
export function liveQuotes(book: RateBook, now: number): Array<{ currency: string; rate: string | null; sources: string[] }> {
  if (!book.enabled) return [];
  return book.config.currencies.map((currency) => {
    try {
      const quote = book.quote(currency, now);
      return { currency, rate: formatDecimal(quote.rate), sources: quote.sources };
    } catch {
      return { currency, rate: null, sources: [] };
    }
  });
}
