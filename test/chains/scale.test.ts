/** Micro-units to raw on-chain values and back, for 6 and 18 decimals; never a rounded amount. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromRaw, toRaw } from '../../src/chains/scale.js';
import { micros } from '../../src/lib/amounts.js';

test('6 decimals: the raw value is the micro-units', () => {
  assert.equal(toRaw(micros(12_345_678n), 6), 12_345_678n);
  assert.deepEqual(fromRaw(200_000_000n, 6), { exact: true, micros: 200_000_000n });
  assert.deepEqual(fromRaw(0n, 6), { exact: true, micros: 0n });
});

test('18 decimals: micro-units x 10^12 exactly, and a value with digits below the sixth decimal is inexact, not rounded', () => {
  assert.equal(toRaw(micros(10_000_001n), 18), 10_000_001_000_000_000_000n);
  assert.deepEqual(fromRaw(10_000_001_000_000_000_000n, 18), { exact: true, micros: 10_000_001n });
  // 10.000001000000000001 and 10.0000009999...: neither is 10.000001 (nor 10.000000).
  assert.deepEqual(fromRaw(10_000_001_000_000_000_001n, 18), { exact: false, reason: 'below_micro_unit' });
  assert.deepEqual(fromRaw(10_000_000_999_999_999_999n, 18), { exact: false, reason: 'below_micro_unit' });
  assert.deepEqual(fromRaw(1n, 18), { exact: false, reason: 'below_micro_unit' });
  // Far above 2^64 still exact in bigint.
  assert.deepEqual(fromRaw(123_456_789_012_345_678n * 10n ** 12n, 18), { exact: true, micros: 123_456_789_012_345_678n });
});

test('negative amounts and unsupported decimals are refused', () => {
  assert.throws(() => toRaw(micros(-1n), 6), /never negative/);
  assert.throws(() => fromRaw(-1n, 18), /never negative/);
  assert.throws(() => fromRaw(1n, 2), /unsupported token decimals 2/);
});
