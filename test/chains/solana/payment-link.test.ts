/** Solana Pay transfer requests: the owner as recipient, the amount in tokens, the mint, a reference key. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { micros } from '../../../src/lib/amounts.js';
import { decodeBase58 } from '../../../src/lib/base58.js';
import { NETWORKS } from '../../../src/chains/networks.js';
import { solanaFamily } from '../../../src/chains/solana/family.js';
import { solanaPayLink, solanaPayReference } from '../../../src/chains/solana/payment-link.js';

const OWNER = '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c';
const mainnet = NETWORKS['solana-mainnet'];
const [usdt, usdc] = mainnet.tokens as [(typeof mainnet.tokens)[number], (typeof mainnet.tokens)[number]];

test('a Solana Pay link names the owner, the amount in tokens with six decimals, the mint, the reference, label and message', () => {
  const reference = solanaPayReference('inv_123:0');
  assert.equal(decodeBase58(reference)?.length, 32);
  assert.equal(solanaPayReference('inv_123:0'), reference, 'the same option gets the same key');
  assert.notEqual(solanaPayReference('inv_123:1'), reference);
  assert.equal(
    solanaPayLink(mainnet, usdt, OWNER, micros(12_345_678n), { reference, label: 'Shop & Co', message: 'Order #7' }),
    `solana:${OWNER}?amount=12.345678&spl-token=${usdt.contract}&reference=${reference}&label=Shop%20%26%20Co&message=Order%20%237`,
  );
  assert.equal(solanaPayLink(mainnet, usdc, OWNER, micros(500_000n)), `solana:${OWNER}?amount=0.500000&spl-token=${usdc.contract}`);
  assert.equal(solanaFamily.links.paymentLink(mainnet, usdc, OWNER, micros(1n)), `solana:${OWNER}?amount=0.000001&spl-token=${usdc.contract}`);
});

test('a link to a token account, another network, a foreign token or a bad reference is refused', () => {
  assert.throws(() => solanaPayLink(mainnet, usdt, 'F77xG4vz2CJeMxxAmFW8pvPx2c5Uk75pksr6Wwx6HFhV', micros(1n)), /not a wallet/);
  assert.throws(() => solanaPayLink(NETWORKS['ethereum-mainnet'], usdt, OWNER, micros(1n)), /not a Solana network/);
  assert.throws(() => solanaPayLink(NETWORKS['solana-devnet'], usdt, OWNER, micros(1n)), /not a token of solana-devnet/);
  assert.throws(() => solanaPayLink(mainnet, usdt, OWNER, micros(1n), { reference: 'abc' }), /reference is 32 bytes/);
});
