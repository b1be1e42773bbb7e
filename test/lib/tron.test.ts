import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hexToTronAddress, isValidTronAddress, tronAddressToHex } from '../../src/lib/tron.js';
import { USDT_CONTRACT } from '../helpers/tron-samples.js';

// Vectors: real mainnet addresses and their hex forms.
const valid: Array<[string, string]> = [
  ['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', '41a614f803b6fd780986a42c78ec9c7f77e6ded13c'],
  ['TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', '416e3b44b96104b26f84057974a1f0c9880f7c9b13'],
  ['TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx', '41ec20315a879c48f5e3a6a1c9826d5225f8b658b8'],
  ['TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi', '41d1c4bb7b2f39aba5707711719b2236b5b605af2e'],
  ['TJmmqjb1DK9TTZbQXzRQ2AuA94z4gKAPFh', '41608f8da72479edc7dd921e4c30bb7e7cddbe722e'],
  ['T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb', '410000000000000000000000000000000000000000'],
  ['TBXSw8fM4jpQkGc6zZjsVABFpVN7UvXPdV', `41${'11'.repeat(20)}`],
  ['TD5gsCwxykWsLN9aPrq2TAfNjByuZKYp4E', `41${'22'.repeat(20)}`],
];

const invalid = [
  'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u',
  'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHrf',
  'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSj',
  'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj7t',
  'tR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj0t',
  'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLjlt',
  'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6',
  'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6tt',
  '41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
  '',
];

test('valid base58check addresses decode to their hex and back', () => {
  for (const [b58, hex] of valid) {
    assert.equal(tronAddressToHex(b58), hex, b58);
    assert.equal(hexToTronAddress(hex), b58, hex);
    assert.equal(isValidTronAddress(b58), true);
  }
  assert.equal(USDT_CONTRACT, valid[0]![0]);
});

test('bad checksums, wrong alphabet, wrong length and hex forms are refused', () => {
  for (const a of invalid) assert.equal(isValidTronAddress(a), false, a);
});

test('a look-alike address is valid but different', () => {
  const lookalike = 'TL24LCps5FKwp3PoTysfgSPY9t9QpJtHre';
  assert.equal(isValidTronAddress(lookalike), true);
  assert.notEqual(tronAddressToHex(lookalike), tronAddressToHex('TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre'));
});
