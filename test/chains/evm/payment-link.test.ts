/** EIP-681 token transfer links: the token, the chain id, the EIP-55 recipient and the exact raw amount. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eip681TransferLink } from '../../../src/chains/evm/payment-link.js';
import { evmFamily } from '../../../src/chains/evm/family.js';
import { findToken, NETWORKS } from '../../../src/chains/networks.js';
import { micros } from '../../../src/lib/amounts.js';

const TO = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';

test('a 6-decimal token link carries the micro-units as uint256, an 18-decimal one x 10^12', () => {
  const eth = NETWORKS['ethereum-mainnet'];
  assert.equal(
    eip681TransferLink(eth, findToken(eth, 'USDT')!, TO, micros(12_340_001n)),
    'ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&uint256=12340001',
  );
  const bsc = NETWORKS['bsc-mainnet'];
  assert.equal(
    evmFamily.links.paymentLink(bsc, findToken(bsc, 'USDC')!, TO, micros(12_340_001n)),
    'ethereum:0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d@56/transfer?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&uint256=12340001000000000000',
  );
});

test('a token of another network, a TRON network or a bad recipient is refused', () => {
  const eth = NETWORKS['ethereum-mainnet'];
  const bscUsdt = findToken(NETWORKS['bsc-mainnet'], 'USDT')!;
  assert.throws(() => eip681TransferLink(eth, bscUsdt, TO, micros(1n)), /not a token of ethereum-mainnet/);
  const tron = NETWORKS['tron-mainnet'];
  assert.throws(() => eip681TransferLink(tron, tron.tokens[0]!, TO, micros(1n)), /no EVM chain id/);
  assert.throws(() => eip681TransferLink(eth, findToken(eth, 'USDT')!, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', micros(1n)), /TRON address/);
});
