/**
 * The dedupe key of a transfer keeps a Solana signature's letter case (base58: `a` and `A` are
 * different digits) and folds a hex hash's (TRON, EVM): two Solana transactions whose signatures
 * differ only in case are two payments, through the providers' comparison as through the key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transferKey, type VerifiedTransfer } from '../../src/chains/family.js';
import { compareReads } from '../../src/chains/agreement.js';
import { micros } from '../../src/lib/amounts.js';

const SIG = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';

function transfer(network: VerifiedTransfer['network'], txHash: string): VerifiedTransfer {
  return {
    network,
    token: 'USDC',
    contract: 'mint',
    from: 'a',
    to: 'b',
    raw: 1_000_000n,
    amount: { exact: true, micros: micros(1_000_000n) },
    txHash,
    logIndex: 0,
    blockNumber: 1n,
    blockHash: 'h',
    blockTimeMs: 0,
    finality: 'final',
  };
}

test('a Solana signature keeps its case in the key; TRON and EVM hashes are folded to lower case', () => {
  const flipped = SIG.slice(0, -1) + SIG.slice(-1).toLowerCase();
  assert.notEqual(transferKey(transfer('solana-mainnet', SIG)), transferKey(transfer('solana-mainnet', flipped)));
  assert.equal(transferKey(transfer('solana-mainnet', SIG)), `solana-mainnet:${SIG}:0`);
  const hex = `0x${'ab'.repeat(32)}`;
  assert.equal(transferKey(transfer('bsc-mainnet', hex.toUpperCase().replace('0X', '0x'))), transferKey(transfer('bsc-mainnet', hex)));
  assert.equal(transferKey(transfer('tron-mainnet', 'AB'.repeat(32))), `tron-mainnet:${'ab'.repeat(32)}:0`);
});

test('two providers showing two Solana transactions that differ only in case agree on both, not one', () => {
  const flipped = SIG.slice(0, -1) + SIG.slice(-1).toLowerCase();
  const both = [transfer('solana-mainnet', SIG), transfer('solana-mainnet', flipped)];
  const { agreed, disagreements } = compareReads([
    { provider: 'a', transfers: both },
    { provider: 'b', transfers: [...both].reverse() },
  ]);
  assert.deepEqual(disagreements, []);
  assert.deepEqual(agreed.map((t) => t.txHash).sort(), [SIG, flipped].sort());
});
