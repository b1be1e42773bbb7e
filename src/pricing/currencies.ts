/**
 * The fiat currencies a price may be given in: ISO 4217 codes and their minor units (how many
 * decimals an amount may carry: JPY 0, USD 2, KWD 3). `pricing.currencies` must name codes from
 * this table; USDT is the invoice's own currency and is never converted.
 */
import { AppError } from '../lib/errors.js';
import { parseDecimal, shift, type Decimal } from './decimal.js';

export const MINOR_UNITS: Readonly<Record<string, number>> = {
  AED: 2,
  ARS: 2,
  AUD: 2,
  BDT: 2,
  BHD: 3,
  BRL: 2,
  CAD: 2,
  CHF: 2,
  CLP: 0,
  CNY: 2,
  COP: 2,
  CZK: 2,
  DKK: 2,
  EGP: 2,
  EUR: 2,
  GBP: 2,
  GEL: 2,
  HKD: 2,
  HUF: 2,
  IDR: 2,
  ILS: 2,
  INR: 2,
  JOD: 3,
  JPY: 0,
  KES: 2,
  KRW: 0,
  KWD: 3,
  KZT: 2,
  MXN: 2,
  MYR: 2,
  NGN: 2,
  NOK: 2,
  NZD: 2,
  OMR: 3,
  PEN: 2,
  PHP: 2,
  PKR: 2,
  PLN: 2,
  QAR: 2,
  RON: 2,
  RUB: 2,
  SAR: 2,
  SEK: 2,
  SGD: 2,
  THB: 2,
  TRY: 2,
  TWD: 2,
  UAH: 2,
  USD: 2,
  UZS: 2,
  VND: 0,
  ZAR: 2,
};

/**
 * Rough units of each currency per 1 USDT (late 2025), for one purpose only: the plausible range a
 * source's rate must fall in before it counts (plausibleRange). Never used as a price.
 */
export const REFERENCE_RATES: Readonly<Record<string, string>> = {
  AED: '3.673',
  ARS: '1400',
  AUD: '1.53',
  BDT: '122',
  BHD: '0.376',
  BRL: '5.4',
  CAD: '1.39',
  CHF: '0.8',
  CLP: '950',
  CNY: '7.1',
  COP: '3900',
  CZK: '21',
  DKK: '6.4',
  EGP: '48',
  EUR: '0.86',
  GBP: '0.75',
  GEL: '2.7',
  HKD: '7.8',
  HUF: '335',
  IDR: '16500',
  ILS: '3.3',
  INR: '88',
  JOD: '0.709',
  JPY: '150',
  KES: '129',
  KRW: '1400',
  KWD: '0.306',
  KZT: '520',
  MXN: '18.5',
  MYR: '4.2',
  NGN: '1500',
  NOK: '10',
  NZD: '1.7',
  OMR: '0.385',
  PEN: '3.5',
  PHP: '58',
  PKR: '282',
  PLN: '3.65',
  QAR: '3.64',
  RON: '4.4',
  RUB: '80',
  SAR: '3.75',
  SEK: '9.5',
  SGD: '1.3',
  THB: '32',
  TRY: '42',
  TWD: '30',
  UAH: '41.5',
  USD: '1',
  UZS: '12000',
  VND: '26300',
  ZAR: '17.5',
};

export const FIAT_CODES = Object.keys(MINOR_UNITS);

/** The default of `pricing.currencies`. */
export const DEFAULT_CURRENCIES = ['USD', 'EUR', 'CNY', 'GBP', 'RUB', 'JPY', 'TRY', 'BRL', 'INR'] as const;

/** The invoice's own currency: an amount in it is not converted. */
export const USDT = 'USDT';

/**
 * The built-in plausible range of a currency's rate (units per 1 USDT): a tenth to ten times its
 * reference rate, and 0.8 to 1.25 for USD, which USDT is pegged to. `pricing.rate_bounds` replaces
 * it per currency. A rate outside it is set aside (docs/payments.md, Prices in fiat), so sources that
 * agree on an absurd rate price nothing, even on the first read after a start.
 */
export function plausibleRange(code: string): { min: Decimal; max: Decimal } | undefined {
  if (code === 'USD') return { min: parseDecimal('0.8')!, max: parseDecimal('1.25')! };
  if (!Object.hasOwn(REFERENCE_RATES, code)) return undefined;
  const ref = parseDecimal(REFERENCE_RATES[code]!)!;
  return { min: shift(ref, -1), max: shift(ref, 1) };
}

/** What an instance takes a price in: USDT, then its pricing.currencies. */
export function priceCurrencies(configured: readonly string[]): string[] {
  return [USDT, ...configured];
}

/**
 * 400 validation_error naming the currencies this instance takes, for a currency outside them (the
 * served document lists the same ones): not the retryable 503 a missing rate is.
 */
export function requireCurrency(currency: string, accepted: readonly string[]): void {
  if (accepted.includes(currency)) return;
  throw new AppError('validation_error', `Currency ${currency} is not available on this instance; use one of ${accepted.join(', ')}`, [
    { path: 'currency', message: `expected one of ${accepted.join(', ')}` },
  ]);
}

export function minorUnits(code: string): number | undefined {
  return Object.hasOwn(MINOR_UNITS, code) ? MINOR_UNITS[code] : undefined;
}
