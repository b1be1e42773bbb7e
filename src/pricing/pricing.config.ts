/**
 * The [pricing] section of the configuration (docs/configuration.md, Prices in fiat), kept beside
 * the feature; src/config.ts mounts it. Decimals (the spread limit, the rounding step) are kept as
 * exact decimal text.
 */
import { z } from 'zod';
import { parseAmount } from '../lib/amounts.js';
import { DEFAULT_CURRENCIES, FIAT_CODES } from './currencies.js';
import { compare, parseDecimal } from './decimal.js';
import { SOURCE_KINDS } from './sources.js';

/**
 * An exact decimal written as a TOML number (2, 0.5) or a string ("0.01"), kept as its decimal
 * text: a short TOML number prints back as the digits written, so no float reaches the arithmetic.
 */
const decimalText = (check: (text: string) => boolean, message: string) =>
  z
    .union([z.number(), z.string()])
    .transform((v) => (typeof v === 'number' ? String(v) : v.trim()))
    .refine((v) => parseDecimal(v) !== undefined && check(v), { message });

const roundToText = () =>
  decimalText((v) => {
    const micro = parseAmount(v);
    return micro !== undefined && micro >= 1n && micro <= 1_000_000n;
  }, 'expected a USDT step between 0.000001 and 1, e.g. 0.01');

const spreadText = () =>
  decimalText((v) => {
    const d = parseDecimal(v)!;
    return d.scale <= 4 && d.units <= 100n * 10n ** BigInt(d.scale);
  }, 'expected a percentage from 0 to 100 with at most 4 decimals, e.g. 2');

const jumpText = () =>
  decimalText((v) => {
    const d = parseDecimal(v)!;
    return d.scale <= 4 && d.units > 0n && d.units <= 100n * 10n ** BigInt(d.scale);
  }, 'expected a percentage above 0 and at most 100 with at most 4 decimals, e.g. 10');

const rateText = () =>
  decimalText((v) => {
    const d = parseDecimal(v)!;
    return d.units > 0n && d.scale <= 12;
  }, 'expected a rate above 0 (units of the currency per 1 USDT) with at most 12 decimals, e.g. "0.9"');

/** pricing.rate_bounds: per currency, the plausible range of its rate; replaces the built-in one. */
const rateBounds = () =>
  z
    .record(
      z.string().refine((c) => FIAT_CODES.includes(c), { message: 'expected an ISO 4217 code gatewayd knows (upper case), e.g. "EUR"' }),
      z
        .strictObject({ min: rateText(), max: rateText() })
        .refine((b) => compare(parseDecimal(b.min)!, parseDecimal(b.max)!) < 0, { message: 'expected min below max' }),
    )
    .default({});

/** A source's base URL: http(s), or '' for the source's public API. */
const sourceUrl = () =>
  z.string().refine(
    (v) => {
      if (v === '') return true;
      try {
        return ['http:', 'https:'].includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: 'expected an absolute http(s) URL, or "" for the public API' },
  );

/** Built with the rest of the configuration's schema (configSchema() in src/config.schema.ts). */
export const pricingConfigSchema = () =>
  z.strictObject({
    currencies: z
      .array(z.string().refine((c) => FIAT_CODES.includes(c), { message: 'expected an ISO 4217 code gatewayd knows (upper case), e.g. "EUR"' }))
      .max(FIAT_CODES.length)
      .default([...DEFAULT_CURRENCIES]),
    sources: z
      .array(
        z.strictObject({
          kind: z.enum(SOURCE_KINDS, { message: `expected one of ${SOURCE_KINDS.map((k) => `"${k}"`).join(', ')}` }),
          // '' = the source's public API (docs/configuration.md lists them).
          url: sourceUrl().default(''),
        }),
      )
      .max(16)
      .default([]),
    min_sources: z.number().int().min(1).max(16).default(1),
    max_age_seconds: z.number().int().min(10).max(86_400).default(300),
    max_spread_percent: spreadText().default('2'),
    round_to: roundToText().default('0.01'),
    refresh_seconds: z.number().int().min(10).max(3600).default(60),
    // The plausible range of each currency's rate; absent: the built-in one (currencies.ts, plausibleRange).
    rate_bounds: rateBounds(),
    // A consensus rate further than this from a rate accepted within jump_window_seconds is held
    // until a read at least jump_confirm_seconds later agrees with it.
    max_jump_percent: jumpText().default('10'),
    jump_window_seconds: z.number().int().min(60).max(3600).default(600),
    jump_confirm_seconds: z.number().int().min(10).max(3600).default(120),
    // A 429's Retry-After is honoured up to this; then one request probes the source.
    retry_after_max_seconds: z.number().int().min(10).max(3600).default(300),
  });
