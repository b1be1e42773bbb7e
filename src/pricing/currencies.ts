/**
 * The fiat currencies a price may be given in: ISO 4217 codes and their minor units (how many
 * decimals an amount may carry: JPY 0, USD 2, KWD 3). `pricing.currencies` must name codes from
 * this table; USDT is the invoice's own currency and is never converted.
 */
import { AppError } from '../lib/errors.js';

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

export const FIAT_CODES = Object.keys(MINOR_UNITS);

/** The default of `pricing.currencies`. */
export const DEFAULT_CURRENCIES = ['USD', 'EUR', 'CNY', 'GBP', 'RUB', 'JPY', 'TRY', 'BRL', 'INR'] as const;

/** The invoice's own currency: an amount in it is not converted. */
export const USDT = 'USDT';

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
