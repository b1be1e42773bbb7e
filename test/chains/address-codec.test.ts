/** Receiving addresses parsed by the family of the network they are to receive on. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressFamily, parseAddress, parseTronAddress, tronAddressCodec } from '../../src/chains/address-codec.js';
import { NETWORKS } from '../../src/chains/networks.js';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const EVM = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

function refusal(r: ReturnType<typeof parseAddress>): string {
  assert.equal(r.ok, false, JSON.stringify(r));
  return (r as { error: string }).error;
}

test('an EVM address on every EVM network: lower and upper case stored in EIP-55 form, a wrong checksum refused saying so', () => {
  for (const network of Object.values(NETWORKS).filter((n) => n.family === 'evm')) {
    assert.deepEqual(parseAddress(network, EVM), { ok: true, address: EVM }, network.id);
    assert.deepEqual(parseAddress(network, EVM.toLowerCase()), { ok: true, address: EVM }, network.id);
    assert.deepEqual(parseAddress(network, `0x${EVM.slice(2).toUpperCase()}`), { ok: true, address: EVM }, network.id);
    // One letter's case flipped: the checksum no longer holds.
    const error = refusal(parseAddress(network, '0xdAC17F958D2ee523a2206206994597C13D831eC7'));
    assert.match(error, /checksum/);
    assert.match(error, /EIP-55/);
  }
});

test('a TRON address on TRON networks: base58check, a wrong checksum refused saying so', () => {
  for (const id of ['tron-mainnet', 'tron-nile', 'tron-devnet'] as const) {
    assert.deepEqual(parseAddress(NETWORKS[id], TRON), { ok: true, address: TRON });
    assert.match(refusal(parseAddress(NETWORKS[id], 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u')), /checksum/);
    assert.match(refusal(parseAddress(NETWORKS[id], 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj0t')), /T followed by 33 base58 characters/);
  }
  assert.equal(tronAddressCodec.isCanonical(TRON), true);
  assert.equal(tronAddressCodec.isCanonical('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u'), false);
  assert.deepEqual(parseTronAddress(` ${TRON}\n`), { ok: true, address: TRON });
});

test("another family's address is refused by name, whatever its checksum", () => {
  assert.equal(refusal(parseAddress(NETWORKS['bsc-mainnet'], TRON)), 'a TRON address cannot receive on bsc-mainnet');
  assert.equal(refusal(parseAddress(NETWORKS['ethereum-sepolia'], TRON)), 'a TRON address cannot receive on ethereum-sepolia');
  assert.equal(refusal(parseAddress(NETWORKS['tron-mainnet'], EVM)), 'an EVM address cannot receive on tron-mainnet');
  // Lower case, and a wrong checksum: still the family that answers first.
  assert.equal(refusal(parseAddress(NETWORKS['tron-nile'], EVM.toLowerCase())), 'an EVM address cannot receive on tron-nile');
  assert.equal(refusal(parseAddress(NETWORKS['tron-mainnet'], '0xdAC17F958D2ee523a2206206994597C13D831eC7')), 'an EVM address cannot receive on tron-mainnet');
});

test('shapes: which family an address looks like; nonsense belongs to none and is refused on every network', () => {
  assert.equal(addressFamily(TRON), 'tron');
  assert.equal(addressFamily(EVM.toLowerCase()), 'evm');
  for (const bad of ['', '0x', 'hello', EVM.slice(2), `${EVM}00`, `${TRON}x`, '41a614f803b6fd780986a42c78ec9c7f77e6ded13c']) {
    assert.equal(addressFamily(bad), undefined, bad);
    for (const network of Object.values(NETWORKS)) assert.equal(parseAddress(network, bad).ok, false, `${bad} on ${network.id}`);
  }
});
