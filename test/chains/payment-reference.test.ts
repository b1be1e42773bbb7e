/** The reference a Solana Pay link or a TON comment carries for one invoice option, stable and distinct. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NETWORKS } from '../../src/chains/networks.js';
import { optionReference } from '../../src/chains/payment-reference.js';
import { solanaAddressBytes } from '../../src/chains/solana/address.js';

test('a Solana option gets a stable 32-byte key per invoice and position; a TON option its invoice id; EVM and TRON none', () => {
  const sol = NETWORKS['solana-mainnet'];
  const a = optionReference(sol, 'inv_1', 0)!;
  assert.ok(solanaAddressBytes(a));
  assert.equal(optionReference(sol, 'inv_1', 0), a);
  assert.notEqual(optionReference(sol, 'inv_1', 1), a);
  assert.notEqual(optionReference(sol, 'inv_2', 0), a);
  assert.equal(optionReference(NETWORKS['ton-mainnet'], 'inv_1', 0), 'inv_1');
  assert.equal(optionReference(NETWORKS['ton-mainnet'], 'inv_1', 2), 'inv_1/2');
  assert.equal(optionReference(NETWORKS['bsc-mainnet'], 'inv_1', 0), undefined);
  assert.equal(optionReference(NETWORKS['tron-mainnet'], 'inv_1', 0), undefined);
});
