/** TON jetton transfer links: the owner non-bounceable, USDT's master bounceable, the raw amount, the comment escaped. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NETWORKS } from '../../../src/chains/networks.js';
import { tonFamily } from '../../../src/chains/ton/family.js';
import { tonTransferLink } from '../../../src/chains/ton/payment-link.js';
import { micros } from '../../../src/lib/amounts.js';

const OWNER_RAW = '0:9cd72602375abc26cf963ea03693c902045afd9c36cea35f23d2fb07d9d8714d';

test('a USDT link names the owner as wallets expect it, the jetton master, the exact raw amount and the comment', () => {
  const ton = NETWORKS['ton-mainnet'];
  const usdt = ton.tokens[0]!;
  // Any form of the owner gives the same link.
  for (const owner of [OWNER_RAW, OWNER_RAW.toUpperCase().replace('0X', '0x'), 'EQCc1yYCN1q8Js-WPqA2k8kCBFr9nDbOo18j0vsH2dhxTUKp']) {
    assert.equal(
      tonTransferLink(ton, usdt, owner, micros(12_340_001n), 'inv 42/ä'),
      'ton://transfer/UQCc1yYCN1q8Js-WPqA2k8kCBFr9nDbOo18j0vsH2dhxTR9s?jetton=EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs&amount=12340001&text=inv%2042%2F%C3%A4',
    );
  }
  assert.equal(
    tonFamily.links.paymentLink(ton, usdt, OWNER_RAW, micros(5n)),
    'ton://transfer/UQCc1yYCN1q8Js-WPqA2k8kCBFr9nDbOo18j0vsH2dhxTR9s?jetton=EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs&amount=5',
  );
});

test("another network's token, a non-TON network or recipient, a testnet address on mainnet are refused", () => {
  const ton = NETWORKS['ton-mainnet'];
  const devUsdt = NETWORKS['ton-devnet'].tokens[0]!;
  assert.throws(() => tonTransferLink(ton, devUsdt, OWNER_RAW, micros(1n)), /not a token of ton-mainnet/);
  const eth = NETWORKS['ethereum-mainnet'];
  assert.throws(() => tonTransferLink(eth, eth.tokens[0]!, OWNER_RAW, micros(1n)), /not a TON network/);
  assert.throws(() => tonTransferLink(ton, ton.tokens[0]!, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', micros(1n)), /TRON address/);
  assert.throws(() => tonTransferLink(ton, ton.tokens[0]!, '0QAjflEZ_6KgKMxPlcnKN1ZoUvHdTT6hVwTW95EGVQfeSvD5', micros(1n)), /testnet/);
});
