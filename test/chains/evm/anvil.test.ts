/**
 * The EVM reader against a real node (anvil): Transfer logs of the pinned tokens to the watched
 * addresses with their exact amounts (6 and 18 decimals), a batch payout kept as two transfers by
 * log index, `finalized`/`safe`/confirmation heads, and reorgs: `anvil_reorg` and `anvil_rollback`
 * below finality are noticed by the block hash check, one above finality by the final head going back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadRefused } from '../../../src/chains/evm/reader.js';
import { findToken } from '../../../src/chains/networks.js';
import { anvilSkip } from './anvil.js';
import { ALICE, BOB, CAROL, LOOKALIKE, startDevChain, type DevChain } from './devchain.js';

const skip = anvilSkip();
let eth: DevChain;
let bsc: DevChain;

before(async () => {
  if (skip) return;
  [eth, bsc] = await Promise.all([startDevChain('ethereum-devnet'), startDevChain('bsc-devnet')]);
});
after(async () => {
  await Promise.all([eth?.close(), bsc?.close()]);
});

test('the provider chain id is checked: a reader of another network refuses the node', { skip }, async () => {
  await eth.reader().checkNetwork();
  const wrong = bsc.reader(eth.anvil.url);
  await assert.rejects(wrong.checkNetwork(), (err: unknown) => err instanceof ReadRefused && err.reason === 'wrong_chain');
});

test('transfers of both pinned tokens to watched addresses, exact amounts, a batch payout as two transfers, the rest left out', { skip }, async () => {
  const usdt = findToken(eth.network, 'USDT')!.contract;
  const usdc = findToken(eth.network, 'USDC')!.contract;
  const from = (await eth.latest()) + 1n;
  const a = await eth.pay(usdt, [ALICE, 12_500_000n]);
  const b = await eth.pay(usdc, [BOB, 1_000_000n]);
  const batch = await eth.pay(usdt, [ALICE, 7_000_001n], [BOB, 7_000_001n]);
  await eth.pay(usdt, [CAROL, 5_000_000n]); // not watched
  await eth.pay(LOOKALIKE, [ALICE, 12_500_000n]); // another contract that calls itself USDT
  const reader = eth.reader();
  const to = await eth.latest();
  const final = await reader.finalHead();
  assert.equal(final.number, to - 4n, 'anvil finalizes two epochs (of 2 slots) behind');
  const read = await reader.readTransfers({ from, to, recipients: [ALICE.toLowerCase(), BOB], finalAtOrBelow: final.number });
  assert.equal(read.complete, true);
  assert.deepEqual(
    read.transfers.map((t) => [t.txHash, t.token, t.to, t.raw, t.amount, t.finality]),
    [
      // Five blocks were mined: the first is 4 behind the latest, so final already.
      [a.txHash, 'USDT', ALICE, 12_500_000n, { exact: true, micros: 12_500_000n }, 'final'],
      [b.txHash, 'USDC', BOB, 1_000_000n, { exact: true, micros: 1_000_000n }, 'seen'],
      [batch.txHash, 'USDT', ALICE, 7_000_001n, { exact: true, micros: 7_000_001n }, 'seen'],
      [batch.txHash, 'USDT', BOB, 7_000_001n, { exact: true, micros: 7_000_001n }, 'seen'],
    ],
  );
  const [, , first, second] = read.transfers;
  assert.notEqual(first!.logIndex, second!.logIndex, 'one transaction, two log indexes');
  assert.equal(first!.blockHash, batch.blockHash);
  assert.equal(first!.contract, usdt);
  assert.equal(first!.network, 'ethereum-devnet');
  const header = await eth.anvil.rpc('eth_getBlockByNumber', [`0x${batch.blockNumber.toString(16)}`, false]);
  assert.equal(first!.blockTimeMs, Number(BigInt(header.timestamp)) * 1000);

  // Four more blocks later the same transfers are final.
  await eth.mine(8);
  const later = await reader.finalHead();
  const again = await reader.readTransfers({ from, to, recipients: [ALICE, BOB], finalAtOrBelow: later.number });
  assert.deepEqual(
    again.transfers.map((t) => t.finality),
    ['final', 'final', 'final', 'final'],
  );
});

test('an 18-decimal token: micro-units x 10^12 is exact, a value with digits below the sixth decimal is inexact', { skip }, async () => {
  const usdt = findToken(bsc.network, 'USDT')!.contract;
  const from = (await bsc.latest()) + 1n;
  await bsc.pay(usdt, [ALICE, 10_000_001n * 10n ** 12n]);
  await bsc.pay(usdt, [ALICE, 10_000_001n * 10n ** 12n + 1n]);
  const reader = bsc.reader();
  const read = await reader.readTransfers({ from, to: await bsc.latest(), recipients: [ALICE], finalAtOrBelow: (await reader.finalHead()).number });
  assert.deepEqual(
    read.transfers.map((t) => [t.raw, t.amount]),
    [
      [10_000_001_000_000_000_000n, { exact: true, micros: 10_000_001n }],
      [10_000_001_000_000_000_001n, { exact: false, reason: 'below_micro_unit' }],
    ],
  );
});

test('finality rules: the finalized tag, the safe tag and a confirmation count name their heads', { skip }, async () => {
  await eth.mine(3);
  const latest = await eth.latest();
  assert.equal((await eth.reader().finalHead()).number, latest - 4n);
  assert.equal((await eth.reader(undefined, { finality: { kind: 'tag', tag: 'safe' } }).finalHead()).number, latest - 2n);
  assert.equal((await eth.reader(undefined, { finality: { kind: 'confirmations', blocks: 3 } }).finalHead()).number, latest - 3n);
});

test('anvil_reorg below finality: the block hash at the transfer height changed, the transfer is reorged and gone', { skip }, async () => {
  const usdt = findToken(eth.network, 'USDT')!.contract;
  const paid = await eth.pay(usdt, [ALICE, 3_000_000n]);
  await eth.mine(1);
  const reader = eth.reader();
  const final = await reader.finalHead();
  const read = await reader.readTransfers({ from: paid.blockNumber, to: paid.blockNumber, recipients: [ALICE], finalAtOrBelow: final.number });
  assert.equal(read.transfers.length, 1);
  assert.equal(read.transfers[0]!.finality, 'seen');
  assert.deepEqual((await reader.recheck(read.transfers)).reorged, []);

  // Replace the last 2 blocks (the payment's and the one after) with empty ones.
  await eth.anvil.rpc('anvil_reorg', [2, []]);
  const header = await eth.anvil.rpc('eth_getBlockByNumber', [`0x${paid.blockNumber.toString(16)}`, false]);
  assert.notEqual(header.hash, paid.blockHash, 'anvil replaced the block');
  const checked = await reader.recheck(read.transfers);
  assert.deepEqual(
    checked.reorged.map((t) => t.txHash),
    [paid.txHash],
  );
  assert.deepEqual(checked.canonical, []);
  const reread = await reader.readTransfers({ from: paid.blockNumber, to: paid.blockNumber, recipients: [ALICE], finalAtOrBelow: final.number });
  assert.deepEqual(reread.transfers, []);
});

test('anvil_rollback below finality: a transfer whose block is gone is reorged', { skip }, async () => {
  const usdt = findToken(eth.network, 'USDT')!.contract;
  const paid = await eth.pay(usdt, [BOB, 4_000_000n]);
  const reader = eth.reader();
  const read = await reader.readTransfers({
    from: paid.blockNumber,
    to: paid.blockNumber,
    recipients: [BOB],
    finalAtOrBelow: (await reader.finalHead()).number,
  });
  assert.equal(read.transfers.length, 1);
  await eth.anvil.rpc('anvil_rollback', [1]);
  assert.equal(await eth.latest(), paid.blockNumber - 1n);
  assert.deepEqual(
    (await reader.recheck(read.transfers)).reorged.map((t) => t.txHash),
    [paid.txHash],
  );
});

test('a rollback deeper than finality: the final head going back is refused, not followed', { skip }, async () => {
  await eth.mine(10);
  const reader = eth.reader();
  const final = await reader.finalHead();
  await eth.anvil.rpc('anvil_rollback', [8]);
  await assert.rejects(reader.finalHead(), (err: unknown) => err instanceof ReadRefused && err.reason === 'implausible_head' && /went back/.test(err.message));
  assert.ok((await eth.latest()) - 4n < final.number);
});
