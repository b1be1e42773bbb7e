/**
 * The transaction parser on real getTransaction answers (test/fixtures/solana/README.md says where
 * each was recorded): a top-level transfer, an inner transfer in a version-0 transaction with a lookup
 * table, an inner transferChecked of USDT in and out of the same account, a failed swap whose listed
 * instructions move nothing, a transfer to itself, and a Token-2022 transfer into a new account.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EvmRpcClient } from '../../../src/chains/evm/rpc.js';
import { NETWORKS } from '../../../src/chains/networks.js';
import { SOLANA_GENESIS_HASHES, SolanaReader } from '../../../src/chains/solana/reader.js';
import { SolanaRpc } from '../../../src/chains/solana/rpc.js';
import { MalformedTransaction, readTransaction } from '../../../src/chains/solana/transaction.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { networkWith, recorded, watch } from './fixtures.js';
import { Ledger, recordedEntry } from './ledger.js';
import { startSolanaRpc } from './solana-rpc.js';

const mainnet = NETWORKS['solana-mainnet'];
const publicDevnet = networkWith([{ symbol: 'USDC', contract: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' }]);

function read(name: string, network: typeof mainnet, watched: ReturnType<typeof watch>, edit?: (tx: Record<string, any>) => void) {
  const tx = recorded(name);
  edit?.(tx);
  return readTransaction(tx, { network, signature: tx.transaction.signatures[0], slot: BigInt(tx.slot), watched });
}

test('a top-level Token transfer into the watched account (public devnet USDC) is one transfer, from the paying owner', () => {
  const r = read(
    'send-usdc-transfer',
    publicDevnet,
    watch(publicDevnet, '644PJ6UW8e4gQpjKdBVd4MCYasWjSECKjqd2qzdeAJY6', 'BXT1K8kzYXWMi6ihg7m9UqiHW4iJbJ69zumELHE9oBLe'),
  );
  assert.deepEqual(r.dropped, []);
  assert.equal(r.blockTime, 1736502537);
  assert.deepEqual(r.transfers, [
    {
      network: 'solana-devnet',
      token: 'USDC',
      contract: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
      from: 'BLw3RweJmfbTapJRgnPRvd962YDjFYAnVGd1p5hmZ5tP',
      to: 'BXT1K8kzYXWMi6ihg7m9UqiHW4iJbJ69zumELHE9oBLe',
      raw: 10_000n,
      amount: { exact: true, micros: 10_000n },
      txHash: '3Zj5XkvE1Uec1frjue6SK2ND2cqhKPvPkZ1ZFPwo2v9iL4NX4b4WWG1wPNEQdnJJU8sVx7MMHjSH1HxoR21vEjoV',
      logIndex: 0,
      blockNumber: 353107528n,
      tokenAccount: '644PJ6UW8e4gQpjKdBVd4MCYasWjSECKjqd2qzdeAJY6',
      sourceAccount: 'G23tQHsbQuh3yqUBoyXDn3TwqEbbbUHAHEeUSvJaVRtA',
      references: [],
    },
  ]);
});

test('an inner transfer (a swap on mainnet, keys from a lookup table) into a USDC account counts, at position 4003', () => {
  const r = read(
    'swap-sol-to-usdc',
    mainnet,
    watch(mainnet, 'F77xG4vz2CJeMxxAmFW8pvPx2c5Uk75pksr6Wwx6HFhV', '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c', 'USDC'),
  );
  assert.deepEqual(
    r.transfers.map((t) => [t.token, t.raw, t.logIndex, t.from, t.sourceAccount]),
    [['USDC', 167_225n, 4003, 'Fn68NZzCCgZKtYmnAYbkL6w5NNx3TgjW91dGkLA3hsDK', '8ofECjHnVGLU4ywyPdK6mFddEqAuXsnrrov8m2zeFhvj']],
  );
});

test('an inner transferChecked of USDT into an account that sends it on in the same transaction counts once, the balances agreeing', () => {
  const r = read(
    'swap-a16z-usdt-sol',
    mainnet,
    watch(mainnet, '3zWrWv3hu6fJfqpZech7sPLrF4Lm7qx1mmfMaHdJZyTP', 'FQT9SSwEZ6UUQxsmTzgt5JzjrS4M5zm13M1QiYF8TEo6', 'USDT'),
  );
  assert.equal(r.transfers.length, 1);
  const [t] = r.transfers;
  assert.equal(t!.token, 'USDT');
  assert.equal(t!.contract, 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB');
  assert.equal(t!.logIndex, 3);
  assert.ok(t!.raw > 0n);
  assert.deepEqual(r.dropped, []);
});

test('a failed transaction pays nothing, though its inner instructions list a transferChecked into the watched account', () => {
  const network = networkWith([{ symbol: 'USDT', contract: '9m3nh7YDoF1WSYpNxCjKVU8D1MrXsWRic4HqRaTdcTYB' }], mainnet);
  const watched = watch(network, 'GqXYpBYyYa7eeRxSe59HaWtL8LadHxAj5rjUKiskjUht', '8j2dXaFbkzoUaxVtuAadqpNEzQoPJcpuGQquWWaZFp6J');
  const r = read('swap-failed-transaction', network, watched);
  assert.deepEqual(r.transfers, []);
  assert.deepEqual(
    r.dropped.map((d) => d.reason),
    ['failed'],
  );
  // A provider that hides the error still shows balances that did not move: the instructions do not add up.
  const hidden = read('swap-failed-transaction', network, watched, (tx) => {
    tx.meta.err = null;
    tx.meta.status = { Ok: null };
  });
  assert.deepEqual(hidden.transfers, []);
  assert.deepEqual(
    hidden.dropped.map((d) => [d.reason, d.logIndex]),
    [['balance_mismatch', 2006]],
  );
  const missing = read('swap-failed-transaction', network, watched, (tx) => {
    delete tx.meta.err;
    delete tx.meta.status;
  });
  assert.deepEqual(
    missing.dropped.map((d) => d.reason),
    ['failed'],
    'an answer without err is not taken as success',
  );
});

test('a transfer of an account to itself, and a Token-2022 transfer, are not payments', () => {
  const jup = networkWith([{ symbol: 'USDT', contract: 'JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN' }]);
  const self = read(
    'send-jup-transfer-checked-to-self',
    jup,
    watch(jup, 'BWqMUT5533X8M4DM3AQvFeAQd451urcVQu3zi6uVxWtT', 'DtMUkCoeyzs35B6EpQQxPyyog6TRwXxV1W1Acp8nWBNa'),
  );
  assert.deepEqual(self.transfers, []);
  assert.deepEqual(
    self.dropped.map((d) => d.reason),
    ['self_transfer'],
  );
  const t22 = networkWith([{ symbol: 'USDT', contract: 'HeLp6NuQkmYB4pYWo2zYs22mESHXPQYzXbB8n4V98jwC' }], mainnet);
  const other = read(
    'send-spl-token-and-create-token-account',
    t22,
    watch(t22, '5k4KRS1HVR5DaQhPzY3P9mRBw1k3TK7fug23utRcqgk1', 'BYh4CfuGDvFMKaZp3RPmkw9y6qg3sWukA2TiGJDeLKZi'),
  );
  assert.deepEqual(other.transfers, []);
  assert.deepEqual(
    other.dropped.map((d) => [d.reason, d.logIndex]),
    [['other_program', 2000]],
  );
});

test('an account nobody watches gets nothing, and an answer for another signature or slot is refused', () => {
  const r = read(
    'send-usdc-transfer',
    publicDevnet,
    watch(publicDevnet, 'F77xG4vz2CJeMxxAmFW8pvPx2c5Uk75pksr6Wwx6HFhV', '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c'),
  );
  assert.deepEqual(r, { transfers: [], dropped: [], blockTime: 1736502537 });
  const tx = recorded('send-usdc-transfer');
  const watched = watch(publicDevnet, '644PJ6UW8e4gQpjKdBVd4MCYasWjSECKjqd2qzdeAJY6', 'BXT1K8kzYXWMi6ihg7m9UqiHW4iJbJ69zumELHE9oBLe');
  assert.throws(() => readTransaction(tx, { network: publicDevnet, signature: tx.transaction.signatures[0], slot: 1n, watched }), MalformedTransaction);
  assert.throws(() => readTransaction(tx, { network: publicDevnet, signature: '1'.repeat(64), slot: BigInt(tx.slot), watched }), MalformedTransaction);
  assert.throws(() => readTransaction(null, { network: publicDevnet, signature: 'x', slot: 1n, watched }), MalformedTransaction);
});

test('the reader finds the recorded mainnet payments through a loopback provider replaying them, and nothing of the failed swap', async () => {
  const ledger = new Ledger(SOLANA_GENESIS_HASHES['solana-mainnet']);
  const names = ['swap-sol-to-usdc', 'swap-a16z-usdt-sol', 'swap-failed-transaction'];
  const entries = names.map((n) => recordedEntry(recorded(n))).sort((a, b) => (a.slot < b.slot ? -1 : 1));
  for (const e of entries) ledger.add(e);
  const last = entries.at(-1)!.slot;
  ledger.advance(last + 100n);
  const server = await startSolanaRpc(ledger);
  try {
    const rpc = new SolanaRpc(new EvmRpcClient({ url: server.url, clock: new ManualClock() }));
    const reader = new SolanaReader({ network: mainnet, rpc });
    await reader.checkNetwork();
    const head = await reader.finalHead();
    const r = await reader.readTransfers({
      from: entries[0]!.slot,
      to: head.number,
      recipients: [
        '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c',
        'FQT9SSwEZ6UUQxsmTzgt5JzjrS4M5zm13M1QiYF8TEo6',
        '8j2dXaFbkzoUaxVtuAadqpNEzQoPJcpuGQquWWaZFp6J',
      ],
      finalAtOrBelow: head.number,
    });
    assert.equal(r.complete, true);
    assert.deepEqual(
      r.transfers.map((t) => [t.token, t.to, t.blockNumber, t.blockTimeMs, t.finality]),
      [
        ['USDT', 'FQT9SSwEZ6UUQxsmTzgt5JzjrS4M5zm13M1QiYF8TEo6', 335404896n, 1745425114000, 'final'],
        ['USDC', '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c', 343286989n, 1748539118000, 'final'],
      ],
    );
    await assert.rejects(new SolanaReader({ network: NETWORKS['solana-devnet'], rpc }).checkNetwork(), /not solana-devnet/);
  } finally {
    await server.close();
  }
});
