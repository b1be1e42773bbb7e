import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAmount, parseAmount, micros } from '../../src/lib/amounts.js';

test('amounts parse to exact micro-units and print with six decimals', () => {
  assert.equal(parseAmount('0.000001'), 1n);
  assert.equal(parseAmount('12.5'), 12_500_000n);
  assert.equal(parseAmount('1000000000'), 1_000_000_000_000_000n);
  assert.equal(parseAmount('9999999999.999999'), 9_999_999_999_999_999n);
  assert.equal(formatAmount(micros(12_500_000n)), '12.500000');
  assert.equal(formatAmount(micros(1n)), '0.000001');
  assert.equal(formatAmount(micros(0n)), '0.000000');
  for (const bad of ['', '01', '1.', '.5', '1.0000001', '-1', '1e3', ' 1', '1,5', '12345678901', '0x10']) {
    assert.equal(parseAmount(bad), undefined, bad);
  }
});

test('round trip of every printed amount is exact', () => {
  for (const micro of [1n, 999_999n, 1_000_000n, 123_456_789n, 1_000_000_000_099_999n]) {
    assert.equal(parseAmount(formatAmount(micros(micro))), micro);
  }
});
