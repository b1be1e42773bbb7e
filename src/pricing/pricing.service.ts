/**
 * A price in a fiat currency turned into the invoice's USDT base amount (docs/payments.md, Prices in
 * fiat): the amount at the current median rate, plus the markup, rounded up to `pricing.round_to`.
 * The result records everything it used (amount, currency, rate, markup, sources, rate time), so
 * the invoice keeps its price for good: a later rate never changes it.
 */
import { micros, parseAmount, type Micros } from '../lib/amounts.js';
import { AppError } from '../lib/errors.js';
import { convertToMicro, formatDecimal, formatFixed, parseDecimal, type Decimal } from './decimal.js';
import { minorUnits } from './currencies.js';
import type { RateBook } from './rate-book.js';

/** The price an invoice was created from; null on invoices priced in USDT. */
export interface InvoicePrice {
  /** The fiat amount, with the currency's own decimals ("100.00", JPY "1500"). */
  amount: string;
  currency: string;
  /** Units of the currency per 1 USDT, exact ("7.115"). */
  rate: string;
  /** The markup applied, in percent ("0", "2.5"). */
  markupPercent: string;
  /** The sources whose rates made the median. */
  sources: string[];
  /** When the oldest rate used was read (ms). */
  rateAt: number;
}

export const MAX_MARKUP_PERCENT = 20n;
export const MARKUP_PATTERN = '^(0|[1-9][0-9]?)(\\.[0-9]{1,2})?$';
const MARKUP_RE = new RegExp(MARKUP_PATTERN);

/** A markup percentage "0" to "20" with at most 2 decimals; undefined otherwise. */
export function parseMarkup(text: string): Decimal | undefined {
  if (!MARKUP_RE.test(text)) return undefined;
  const d = parseDecimal(text)!;
  return d.units <= MAX_MARKUP_PERCENT * 10n ** BigInt(d.scale) ? d : undefined;
}

/** The markup as stored and shown: its shortest exact text ("2.5", "0"). */
export function normalizeMarkup(text: string): string {
  return formatDecimal(parseMarkup(text)!);
}

export interface FiatPriceRequest {
  /** Decimal text in the currency, at most its minor-unit decimals. */
  amount: string;
  /** ISO 4217 code (upper case). */
  currency: string;
  /** "0" to "20"; the caller resolves the merchant's default. */
  markupPercent: string;
}

export interface FiatPriceResult {
  baseAmount: Micros;
  price: InvoicePrice;
}

/**
 * Prices `req` at the rate book's current quote. Throws 400 `validation_error` for an amount or
 * markup the currency cannot take, 503 `rate_unavailable` when there is no honest rate.
 */
export function priceInFiat(book: RateBook, req: FiatPriceRequest, now: number, maxBase: bigint): FiatPriceResult {
  const digits = minorUnits(req.currency);
  const amount = parseDecimal(req.amount);
  if (digits !== undefined && (amount === undefined || amount.scale > digits || amount.units === 0n)) {
    throw new AppError('validation_error', 'Request validation failed', [
      {
        path: 'amount',
        message:
          digits === 0
            ? `a ${req.currency} amount is a whole number greater than 0 (no decimals)`
            : `a ${req.currency} amount is greater than 0 with at most ${digits} decimals`,
      },
    ]);
  }
  const markup = parseMarkup(req.markupPercent);
  if (markup === undefined) {
    throw new AppError('validation_error', 'Request validation failed', [
      { path: 'markup_percent', message: 'expected a percentage from "0" to "20" with at most 2 decimals' },
    ]);
  }
  // Unconfigured currencies (digits undefined included) are refused here with 503 rate_unavailable.
  const quote = book.quote(req.currency, now);
  const roundMicro = parseAmount(book.config.round_to)!;
  const baseAmount = micros(convertToMicro(amount!, quote.rate, markup, roundMicro));
  if (baseAmount > maxBase) {
    throw new AppError('validation_error', 'Request validation failed', [
      { path: 'amount', message: `${req.amount} ${req.currency} is more than the largest invoice (1000000000 USDT) at the current rate` },
    ]);
  }
  return {
    baseAmount,
    price: {
      amount: formatFixed(amount!, digits!),
      currency: req.currency,
      rate: formatDecimal(quote.rate),
      markupPercent: formatDecimal(markup),
      sources: quote.sources,
      rateAt: quote.rateAt,
    },
  };
}
