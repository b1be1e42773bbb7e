/**
 * How pages show a fiat price: the amount in the payer's language with the currency's symbol
 * (Intl formats the exact decimal string, never a float), the rate to four decimals and the time
 * of the rate in UTC: "¥100.00 = 14.06 USDT at 7.1150 CNY/USDT, rate of 10:42 UTC".
 */
import { convertToMicro, formatFixed, isZero, parseDecimal } from '../pricing/decimal.js';
import { formatAmount, micros } from '../lib/amounts.js';
import { minorUnits } from '../pricing/currencies.js';
import type { PageContext } from './i18n.js';
import { run, timeRun, translateHtml } from './runs.js';

export interface PriceView {
  amount: string;
  currency: string;
  rate: string;
  markup_percent: string;
  sources: string[];
  rate_at: string;
}

const formatters = new Map<string, Intl.NumberFormat>();

/** "¥100.00", "100,00 €", "1 500 ¥" (the locale's own layout, Western digits everywhere). */
export function formatFiat(locale: string, amount: string, currency: string): string {
  const key = `${locale} ${currency}`;
  let f = formatters.get(key);
  if (!f) {
    const digits = minorUnits(currency) ?? 2;
    f = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      currencyDisplay: 'narrowSymbol',
      numberingSystem: 'latn',
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(key, f);
  }
  // Intl formats a decimal string exactly (no conversion to a double).
  return f.format(amount as unknown as number);
}

/**
 * formatFiat for a page: on a right-to-left page the amount and its symbol stay one left-to-right
 * unit (an isolate, without the locale's own direction marks), else "302.38 CN¥ = 42.50 USDT" is
 * reordered into "CN¥ = 42.50 USDT 302.38".
 */
export function fiatText(ctx: Pick<PageContext, 'locale' | 'dir'>, amount: string, currency: string): string {
  const text = formatFiat(ctx.locale, amount, currency);
  return ctx.dir === 'rtl' ? `\u2066${text.replace(/[\u200e\u200f\u061c]/g, '')}\u2069` : text;
}

/** A rate with four decimals ("7.1150"). */
export function formatRate(rate: string): string {
  const d = parseDecimal(rate);
  return d ? formatFixed(d, 4) : rate;
}

/** A six-decimal USDT amount without trailing zeros beyond the cents ("14.060000" -> "14.06"). */
export function shortUsdt(amount: string): string {
  return amount.replace(/(\.\d\d\d*?)0+$/, '$1');
}

/** "10:42" from an ISO time (UTC). */
export function utcTime(iso: string): string {
  return iso.slice(11, 16);
}

/**
 * The fiat amount at the rate alone, in USDT rounded up to the cent ("12.37" for 88 CNY at 7.115):
 * the first step of the sum a marked-up price shows. Undefined when the stored texts do not parse.
 */
export function convertedUsdt(price: Pick<PriceView, 'amount' | 'rate'>): string | undefined {
  const amount = parseDecimal(price.amount);
  const rate = parseDecimal(price.rate);
  if (!amount || !rate || rate.units <= 0n) return undefined;
  return shortUsdt(formatAmount(micros(convertToMicro(amount, rate, { units: 0n, scale: 0 }, 10_000n))));
}

/**
 * The checkout's sentence for a fiat price, as escaped markup (each amount and the time an isolated
 * run). With a markup it shows the sum: "¥88.00 = 12.37 USDT at 7.1150 CNY/USDT (rate of 10:42 UTC)
 * + 2 % = 12.62 USDT", so the payer can check every step.
 */
export function priceLine(ctx: PageContext, price: PriceView, baseAmount: string): string {
  const values = {
    fiat: run(fiatText(ctx, price.amount, price.currency)),
    usdt: run(shortUsdt(baseAmount)),
    rate: run(formatRate(price.rate)),
    currency: price.currency,
    time: timeRun(price.rate_at, utcTime(price.rate_at)),
  };
  const markup = parseDecimal(price.markup_percent);
  const converted = convertedUsdt(price);
  if (!markup || isZero(markup) || converted === undefined) return translateHtml(ctx.t, 'page.checkout.fiat_price', values);
  return translateHtml(ctx.t, 'page.checkout.fiat_price_markup', { ...values, converted: run(converted), markup: run(price.markup_percent) });
}
