/** EIP-55 addresses: lower case accepted and returned checksummed, a wrong checksum refused, TRON refused. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressTopic, evmAddressCodec, parseEvmAddress, topicAddress } from '../../../src/chains/evm/address.js';
import { isValidTronAddress } from '../../../src/lib/tron.js';

// The test vectors of EIP-55 itself.
const EIP55 = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
];

test('checksummed addresses parse to themselves; all-lowercase and all-uppercase ones to their EIP-55 form', () => {
  for (const a of EIP55) {
    assert.deepEqual(parseEvmAddress(a), { ok: true, address: a });
    assert.deepEqual(parseEvmAddress(a.toLowerCase()), { ok: true, address: a });
    assert.deepEqual(parseEvmAddress(`0x${a.slice(2).toUpperCase()}`), { ok: true, address: a });
    assert.equal(evmAddressCodec.isCanonical(a), true);
    assert.equal(evmAddressCodec.isCanonical(a.toLowerCase()), false);
  }
  assert.deepEqual(parseEvmAddress('  0xdac17f958d2ee523a2206206994597c13d831ec7 '), { ok: true, address: '0xdAC17F958D2ee523a2206206994597C13D831ec7' });
});

test('mixed case with a wrong checksum is refused, naming the checksum', () => {
  // One letter's case flipped in the USDT contract.
  const r = parseEvmAddress('0xdAC17F958D2ee523a2206206994597C13D831eC7');
  assert.equal(r.ok, false);
  assert.match((r as { error: string }).error, /checksum/);
  assert.match((r as { error: string }).error, /0xdAC17F958D2ee523a2206206994597C13D831ec7/);
});

test('a TRON address is refused as EVM, and an EVM address is not a TRON address', () => {
  const tron = parseEvmAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  assert.equal(tron.ok, false);
  assert.match((tron as { error: string }).error, /TRON address/);
  assert.equal(isValidTronAddress('0xdAC17F958D2ee523a2206206994597C13D831ec7'), false);
  for (const bad of [
    '',
    '0x',
    'dAC17F958D2ee523a2206206994597C13D831ec7',
    '0xdAC17F958D2ee523a2206206994597C13D831ec',
    '0xgAC17F958D2ee523a2206206994597C13D831ec7',
  ]) {
    assert.equal(parseEvmAddress(bad).ok, false, bad);
  }
});

test('address topics: 12 zero bytes then the address; a topic with non-zero upper bytes holds no address', () => {
  const topic = addressTopic('0xdAC17F958D2ee523a2206206994597C13D831ec7');
  assert.equal(topic, '0x000000000000000000000000dac17f958d2ee523a2206206994597c13d831ec7');
  assert.equal(topicAddress(topic), '0xdAC17F958D2ee523a2206206994597C13D831ec7');
  assert.equal(topicAddress(topic.toUpperCase().replace('0X', '0x')), '0xdAC17F958D2ee523a2206206994597C13D831ec7');
  assert.equal(topicAddress(`0x01${topic.slice(4)}`), undefined);
});
