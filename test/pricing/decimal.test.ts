import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convertToMicro, formatDecimal, formatFixed, median, parseDecimal, spreadExceeds, type Decimal } from '../../src/pricing/decimal.js';

const d = (text: string): Decimal => {
  const v = parseDecimal(text);
  assert.ok(v, text);
  return v;
};

test('parseDecimal keeps every digit and refuses signs, exponents and junk', () => {
  assert.equal(formatDecimal(d('7.1150')), '7.115');
  assert.equal(formatDecimal(d('0.000000000000000001')), '0.000000000000000001');
  assert.equal(formatDecimal(d('155')), '155');
  for (const bad of ['-1', '1e3', '1.', '.5', '01', ' 1', 'NaN', '', '1,5']) assert.equal(parseDecimal(bad), undefined, bad);
  assert.equal(formatFixed(d('7.115'), 4), '7.1150');
  assert.equal(formatFixed(d('7.11505'), 4), '7.1151');
  assert.equal(formatFixed(d('1500'), 0), '1500');
});

test('median: the middle one, or the exact mean of the two middle ones (never a float)', () => {
  assert.equal(formatDecimal(median([d('7.2'), d('7.1'), d('7.15')])), '7.15');
  assert.equal(formatDecimal(median([d('7.1'), d('7.2')])), '7.15');
  assert.equal(formatDecimal(median([d('0.1'), d('0.2')])), '0.15');
  assert.equal(formatDecimal(median([d('1.0001'), d('1.0002'), d('1.0003'), d('100')])), '1.00025');
});

test('spread: max minus min against the median, compared exactly at the limit', () => {
  // 7.115 and 7.2573: (0.1423 / 7.18615) = 1.98 %; 7.2574 is 2.0 %+.
  assert.equal(spreadExceeds([d('7.0'), d('7.14')], d('7.0'), d('2')), false); // exactly 2 %
  assert.equal(spreadExceeds([d('7.0'), d('7.1400001')], d('7.0'), d('2')), true);
  assert.equal(spreadExceeds([d('7.0')], d('7.0'), d('0')), false);
});

test('conversion: amount / rate * (1 + markup), rounded UP to the step, exact at the edges', () => {
  const cent = 10_000n;
  // 100 / 7.115 = 14.05481…
  assert.equal(convertToMicro(d('100'), d('7.115'), d('0'), cent), 14_060_000n);
  // An exact result is not rounded further: 71.15 / 7.115 = 10
  assert.equal(convertToMicro(d('71.15'), d('7.115'), d('0'), cent), 10_000_000n);
  // One micro step above exact rounds up to the next cent.
  assert.equal(convertToMicro(d('71.16'), d('7.115'), d('0'), cent), 10_010_000n);
  // Markup 2.5 %: 100 / 0.9215 * 1.025 = 111.2316…
  assert.equal(convertToMicro(d('100'), d('0.9215'), d('2.5'), cent), 111_240_000n);
  // Finest step: 1 micro-USDT.
  assert.equal(convertToMicro(d('1'), d('3'), d('0'), 1n), 333_334n);
  // JPY without decimals, a large rate and a coarse step of 1 USDT.
  assert.equal(convertToMicro(d('1500'), d('155.4'), d('0'), 1_000_000n), 10_000_000n);
  // A float would say 0.1 + 0.2 != 0.3; here 0.3 / 1 is exactly 0.3.
  assert.equal(convertToMicro(d('0.3'), d('1'), d('0'), 1n), 300_000n);
});
