/**
 * Rate sources, each read in its real public shape (docs/configuration.md, Prices in fiat). A source
 * answers "how many units of a fiat currency buy one USDT" for the currencies it quotes; numbers
 * are kept as the exact decimal text the source sent (CoinGecko's JSON numbers included), never as
 * floats.
 *
 * - coingecko: GET /api/v3/simple/price?ids=tether&vs_currencies=usd,eur,...
 *   -> {"tether":{"usd":1.0002,"eur":0.9215}}
 * - kraken:    GET /0/public/Ticker?pair=USDTUSD,USDTEUR,...
 *   -> {"error":[],"result":{"USDTZUSD":{"c":["1.00010","120.5"],...},"USDTEUR":{...}}}
 *   (last trade price; only the pairs Kraken lists, an unknown pair fails the whole request)
 * - coinbase:  GET /v2/exchange-rates?currency=USDT -> {"data":{"currency":"USDT","rates":{"CNY":"7.115",...}}}
 */
import { parseDecimal, type Decimal } from './decimal.js';

export const SOURCE_KINDS = ['coingecko', 'kraken', 'coinbase'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

export const DEFAULT_SOURCE_URLS: Record<SourceKind, string> = {
  coingecko: 'https://api.coingecko.com',
  kraken: 'https://api.kraken.com',
  coinbase: 'https://api.coinbase.com',
};

/** Kraken's USDT pairs against fiat (its AssetPairs list); USDT/USD answers under its legacy key USDTZUSD. */
export const KRAKEN_PAIRS: Readonly<Record<string, readonly string[]>> = {
  USD: ['USDTUSD', 'USDTZUSD'],
  EUR: ['USDTEUR', 'USDTZEUR'],
  GBP: ['USDTGBP', 'USDTZGBP'],
  CAD: ['USDTCAD', 'USDTZCAD'],
  AUD: ['USDTAUD', 'USDTZAUD'],
  JPY: ['USDTJPY', 'USDTZJPY'],
  CHF: ['USDTCHF', 'USDTZCHF'],
};

export interface SourceRequest {
  url: string;
}

export interface RateSourceDef {
  kind: SourceKind;
  /** The currencies of `wanted` this source can be asked for (Kraken: only the pairs it lists). */
  quotable(wanted: readonly string[]): string[];
  request(baseUrl: string, currencies: readonly string[]): SourceRequest;
  /** The rates found in the body, by upper-case code; throws when the body is not the source's shape. */
  parse(body: string, currencies: readonly string[]): Map<string, Decimal>;
}

/** JSON.parse keeping every number as its source text (so 7.1150 stays "7.1150", not a float). */
export function parseJsonExact(body: string): unknown {
  return JSON.parse(body, function (this: unknown, _key: string, value: unknown, context?: { source?: string }) {
    if (typeof value === 'number') return context?.source ?? String(value);
    return value;
  } as (key: string, value: unknown) => unknown);
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`unexpected response: ${what} is not an object`);
  return value as Record<string, unknown>;
}

/** A positive decimal rate, or undefined (a zero or malformed quote counts as no quote). */
function rateOf(value: unknown): Decimal | undefined {
  if (typeof value !== 'string') return undefined;
  const d = parseDecimal(value);
  return d && d.units > 0n ? d : undefined;
}

const coingecko: RateSourceDef = {
  kind: 'coingecko',
  quotable: (wanted) => [...wanted],
  request: (baseUrl, currencies) => ({
    url: `${trimSlash(baseUrl)}/api/v3/simple/price?ids=tether&vs_currencies=${currencies.map((c) => c.toLowerCase()).join(',')}`,
  }),
  parse(body, currencies) {
    const tether = asObject(asObject(parseJsonExact(body), 'the body').tether, '"tether"');
    const rates = new Map<string, Decimal>();
    for (const code of currencies) {
      const rate = rateOf(tether[code.toLowerCase()]);
      if (rate) rates.set(code, rate);
    }
    return rates;
  },
};

const kraken: RateSourceDef = {
  kind: 'kraken',
  quotable: (wanted) => wanted.filter((c) => Object.hasOwn(KRAKEN_PAIRS, c)),
  request: (baseUrl, currencies) => ({
    url: `${trimSlash(baseUrl)}/0/public/Ticker?pair=${currencies.map((c) => KRAKEN_PAIRS[c]![0]).join(',')}`,
  }),
  parse(body, currencies) {
    const doc = asObject(parseJsonExact(body), 'the body');
    const errors = Array.isArray(doc.error) ? doc.error.map(String) : [];
    if (errors.length > 0) throw new Error(`Kraken answered ${errors.join('; ').slice(0, 200)}`);
    const result = asObject(doc.result, '"result"');
    const rates = new Map<string, Decimal>();
    for (const code of currencies) {
      const key = KRAKEN_PAIRS[code]!.find((k) => Object.hasOwn(result, k));
      if (key === undefined) continue;
      const close = asObject(result[key], key).c;
      const rate = Array.isArray(close) ? rateOf(close[0]) : undefined;
      if (rate) rates.set(code, rate);
    }
    return rates;
  },
};

const coinbase: RateSourceDef = {
  kind: 'coinbase',
  quotable: (wanted) => [...wanted],
  request: (baseUrl) => ({ url: `${trimSlash(baseUrl)}/v2/exchange-rates?currency=USDT` }),
  parse(body, currencies) {
    const data = asObject(asObject(parseJsonExact(body), 'the body').data, '"data"');
    if (data.currency !== 'USDT') throw new Error('unexpected response: rates are not for USDT');
    const table = asObject(data.rates, '"data.rates"');
    const rates = new Map<string, Decimal>();
    for (const code of currencies) {
      const rate = rateOf(table[code]);
      if (rate) rates.set(code, rate);
    }
    return rates;
  },
};

export const SOURCES: Readonly<Record<SourceKind, RateSourceDef>> = { coingecko, kraken, coinbase };

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
