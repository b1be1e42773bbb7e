import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDecimal } from '../../src/pricing/decimal.js';
import { SOURCES } from '../../src/pricing/sources.js';

const text = (m: Map<string, { units: bigint; scale: number }>) => Object.fromEntries([...m].map(([k, v]) => [k, formatDecimal(v)]));

test('CoinGecko simple/price: JSON numbers are read as their decimal text, lower-case keys, missing currencies skipped', () => {
  const def = SOURCES.coingecko;
  assert.equal(def.request('https://api.coingecko.com/', ['USD', 'CNY']).url, 'https://api.coingecko.com/api/v3/simple/price?ids=tether&vs_currencies=usd,cny');
  // 7.123456789012345678 has more digits than a double holds.
  const rates = def.parse('{"tether":{"usd":1.0002,"cny":7.123456789012345678,"eur":0}}', ['USD', 'CNY', 'EUR', 'JPY']);
  assert.deepEqual(text(rates), { USD: '1.0002', CNY: '7.123456789012345678' });
  assert.throws(() => def.parse('{"error_code":429}', ['USD']), /not an object/);
});

test('Kraken Ticker: only listed pairs are asked; the last trade price; USDT/USD answers under USDTZUSD; errors are reported', () => {
  const def = SOURCES.kraken;
  assert.deepEqual(def.quotable(['USD', 'EUR', 'CNY', 'JPY', 'RUB']), ['USD', 'EUR', 'JPY']);
  assert.equal(def.request('https://api.kraken.com', ['USD', 'EUR', 'JPY']).url, 'https://api.kraken.com/0/public/Ticker?pair=USDTUSD,USDTEUR,USDTJPY');
  const body = JSON.stringify({
    error: [],
    result: {
      USDTZUSD: {
        a: ['1.00020000', '1000', '1000.000'],
        b: ['1.00010000', '500', '500.000'],
        c: ['1.00015000', '120.5'],
        v: ['1', '2'],
        p: ['1', '1'],
        t: [1, 2],
        l: ['1', '1'],
        h: ['1', '1'],
        o: '1.0001',
      },
      USDTEUR: {
        a: ['0.92160', '1', '1.000'],
        b: ['0.92140', '1', '1.000'],
        c: ['0.92150', '7.1'],
        v: ['1', '2'],
        p: ['1', '1'],
        t: [1, 2],
        l: ['1', '1'],
        h: ['1', '1'],
        o: '0.9215',
      },
    },
  });
  assert.deepEqual(text(def.parse(body, ['USD', 'EUR', 'JPY'])), { USD: '1.00015', EUR: '0.9215' });
  assert.throws(() => def.parse('{"error":["EQuery:Unknown asset pair"]}', ['USD']), /EQuery:Unknown asset pair/);
});

test('Coinbase exchange-rates: string rates for every fiat, base must be USDT', () => {
  const def = SOURCES.coinbase;
  assert.equal(def.request('https://api.coinbase.com', ['CNY']).url, 'https://api.coinbase.com/v2/exchange-rates?currency=USDT');
  const rates = def.parse('{"data":{"currency":"USDT","rates":{"CNY":"7.1150","RUB":"81.50","BTC":"0.0000109"}}}', ['CNY', 'RUB', 'INR']);
  assert.deepEqual(text(rates), { CNY: '7.115', RUB: '81.5' });
  assert.throws(() => def.parse('{"data":{"currency":"USD","rates":{"CNY":"7.1"}}}', ['CNY']), /not for USDT/);
});
