/**
 * A simulated exchange-rate source on loopback, for `gatewayd dev` and the tests: one HTTP server
 * answering the three public shapes gatewayd reads (src/pricing/sources.ts), each with its own
 * table of rates (units of a currency per 1 USDT), so sources can agree, drift apart or fail:
 *
 *   GET /api/v3/simple/price?ids=tether&vs_currencies=usd,cny   CoinGecko (JSON numbers)
 *   GET /0/public/Ticker?pair=USDTUSD,USDTEUR                    Kraken (USDT/USD under USDTZUSD)
 *   GET /v2/exchange-rates?currency=USDT                         Coinbase (strings)
 *
 * Never started by `gatewayd serve`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KRAKEN_PAIRS, type SourceKind } from '../pricing/sources.js';

/** Plausible rates for development; not market data and never used by `serve`. */
export const DEV_RATES: Readonly<Record<string, string>> = {
  USD: '1.0002',
  EUR: '0.9215',
  CNY: '7.115',
  GBP: '0.787',
  RUB: '81.5',
  JPY: '155.4',
  TRY: '41.2',
  BRL: '5.43',
  INR: '88.6',
  CAD: '1.398',
  AUD: '1.534',
  CHF: '0.805',
  HKD: '7.78',
  SGD: '1.3',
  KRW: '1462',
  UAH: '41.6',
  KZT: '520.3',
  VND: '26290',
  IDR: '16640',
  THB: '32.4',
  MXN: '18.45',
  PLN: '3.68',
  AED: '3.673',
};

export interface SimulatedFault {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface SimulatedRates {
  /** Base URL of the server (the `url` of each `[[pricing.sources]]` entry). */
  readonly url: string;
  /** Sets (or with undefined removes) one kind's rate for a currency. */
  set(kind: SourceKind, currency: string, rate: string | undefined): void;
  /** Sets a currency's rate in every kind. */
  setAll(currency: string, rate: string): void;
  /** Makes a kind answer with this status and body until cleared (undefined). */
  fail(kind: SourceKind, fault: SimulatedFault | undefined): void;
  /** Requests a kind has received. */
  count(kind: SourceKind): number;
  close(): Promise<void>;
}

export async function startSimulatedRates(options: { host?: string; port?: number; rates?: Record<string, string> } = {}): Promise<SimulatedRates> {
  const initial = options.rates ?? DEV_RATES;
  const tables: Record<SourceKind, Map<string, string>> = {
    coingecko: new Map(Object.entries(initial)),
    kraken: new Map(Object.entries(initial)),
    coinbase: new Map(Object.entries(initial)),
  };
  const faults = new Map<SourceKind, SimulatedFault>();
  const counts: Record<SourceKind, number> = { coingecko: 0, kraken: 0, coinbase: 0 };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const kind: SourceKind | undefined =
      url.pathname === '/api/v3/simple/price'
        ? 'coingecko'
        : url.pathname === '/0/public/Ticker'
          ? 'kraken'
          : url.pathname === '/v2/exchange-rates'
            ? 'coinbase'
            : undefined;
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    };
    if (req.method !== 'GET' || kind === undefined) return send(404, '{"error":"not found"}');
    counts[kind] += 1;
    const fault = faults.get(kind);
    if (fault) return send(fault.status, fault.body ?? '{}', fault.headers);
    send(200, answer(kind, tables[kind], url));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    set(kind, currency, rate) {
      if (rate === undefined) tables[kind].delete(currency);
      else tables[kind].set(currency, rate);
    },
    setAll(currency, rate) {
      for (const table of Object.values(tables)) table.set(currency, rate);
    },
    fail(kind, fault) {
      if (fault) faults.set(kind, fault);
      else faults.delete(kind);
    },
    count: (kind) => counts[kind],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The body in the source's real shape; numbers are written as the decimal text they are. */
function answer(kind: SourceKind, table: Map<string, string>, url: URL): string {
  if (kind === 'coingecko') {
    if (url.searchParams.get('ids') !== 'tether') return '{}';
    const wanted = (url.searchParams.get('vs_currencies') ?? '').split(',').filter(Boolean);
    const entries = wanted.filter((c) => table.has(c.toUpperCase())).map((c) => `${JSON.stringify(c)}:${table.get(c.toUpperCase())}`);
    return `{"tether":{${entries.join(',')}}}`;
  }
  if (kind === 'kraken') {
    const pairs = (url.searchParams.get('pair') ?? '').split(',').filter(Boolean);
    const result: Record<string, unknown> = {};
    for (const pair of pairs) {
      const currency = Object.keys(KRAKEN_PAIRS).find((c) => KRAKEN_PAIRS[c]![0] === pair);
      if (currency === undefined) return JSON.stringify({ error: ['EQuery:Unknown asset pair'] });
      const rate = table.get(currency);
      if (rate === undefined) continue;
      const key = KRAKEN_PAIRS[currency]![currency === 'USD' ? 1 : 0]!;
      result[key] = {
        a: [rate, '1000', '1000.000'],
        b: [rate, '500', '500.000'],
        c: [rate, '120.50000000'],
        v: ['1', '2'],
        p: [rate, rate],
        t: [10, 20],
        l: [rate, rate],
        h: [rate, rate],
        o: rate,
      };
    }
    return JSON.stringify({ error: [], result });
  }
  if (url.searchParams.get('currency') !== 'USDT') return JSON.stringify({ errors: [{ id: 'invalid_request', message: 'Invalid currency' }] });
  return JSON.stringify({ data: { currency: 'USDT', rates: Object.fromEntries(table) } });
}
