/**
 * Recorded real mainnet answers (test/fixtures/evm/, each with its source) replayed through the real
 * EVM reader from a loopback JSON-RPC server, with only block numbers and times shifted: every real
 * transfer comes out with its exact amount, its recorded hashes and log index, and final once the
 * finalized head has passed it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EvmReader } from '../../../src/chains/evm/reader.js';
import { EvmRpcClient } from '../../../src/chains/evm/rpc.js';
import { findNetwork } from '../../../src/chains/networks.js';
import { systemClock } from '../../../src/lib/clock.js';
import { startReplayRpc } from './replay-rpc.js';

const FIXTURES = resolve(import.meta.dirname, '../../../../test/fixtures/evm');
const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));

test('there are recorded answers, each citing its source', () => {
  assert.ok(files.length >= 1);
  for (const f of files) assert.match(JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')).source, /@ [0-9a-f]{40}|https?:\/\//, f);
});

for (const file of files) {
  test(`replay ${file}: each recorded transfer is read with its exact amount`, async () => {
    const fixture = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'));
    const network = findNetwork(fixture.network)!;
    const recordedBlocks = fixture.logs.map((l: { blockNumber: string }) => BigInt(l.blockNumber));
    const first = recordedBlocks.reduce((a: bigint, b: bigint) => (b < a ? b : a));
    // Replay the recorded blocks as blocks 1000 and on, 100 blocks below a finalized head.
    const shift = 1000n - first;
    const last = recordedBlocks.reduce((a: bigint, b: bigint) => (b > a ? b : a)) + shift;
    const node = await startReplayRpc(fixture, { shift, latest: last + 200n, finalized: last + 100n, nowSeconds: Math.floor(systemClock.now() / 1000) });
    try {
      const reader = new EvmReader({ network, rpc: new EvmRpcClient({ url: node.url, clock: systemClock }) });
      await reader.checkNetwork();
      const final = await reader.finalHead();
      const recipients = fixture.expected.map((e: { to: string }) => e.to.toLowerCase());
      const read = await reader.readTransfers({ from: 1000n, to: last, recipients, finalAtOrBelow: final.number });
      assert.equal(read.complete, true);
      assert.deepEqual(read.dropped, []);
      assert.deepEqual(
        read.transfers.map((t) => ({
          token: t.token,
          from: t.from,
          to: t.to,
          raw: String(t.raw),
          micros: t.amount.exact ? String(t.amount.micros) : 'inexact',
        })),
        fixture.expected,
      );
      read.transfers.forEach((t, i) => {
        const log = fixture.logs[i];
        assert.equal(t.txHash, log.transactionHash.toLowerCase());
        assert.equal(t.logIndex, Number(BigInt(log.logIndex)));
        assert.equal(t.blockHash, log.blockHash.toLowerCase());
        assert.equal(t.blockNumber, BigInt(log.blockNumber) + shift);
        assert.equal(t.contract, network.tokens.find((k) => k.symbol === t.token)!.contract);
        assert.equal(t.finality, 'final');
      });
      // A log rebuilt from a recorded transaction agrees with every byte the source recorded.
      if (fixture.recorded) {
        const r = fixture.recorded;
        fixture.logs.forEach((log: Record<string, any>, i: number) => {
          const transfer = r.tokenTransfers[i];
          assert.equal(log.address, transfer.contract);
          assert.equal(BigInt(log.data), BigInt(transfer.value));
          assert.equal(log.topics[1], `0x${transfer.from.slice(2).toLowerCase().padStart(64, '0')}`);
          assert.equal(log.topics[2], `0x${transfer.to.slice(2).toLowerCase().padStart(64, '0')}`);
          assert.equal(log.transactionHash, r.txid);
          assert.equal(log.blockHash, r.blockHash);
          assert.equal(BigInt(log.blockNumber), BigInt(r.blockHeight));
          // transfer(to, value): the calldata names the same recipient and value.
          assert.equal(r.inputData, `0xa9059cbb${log.topics[2].slice(2)}${log.data.slice(2)}`);
        });
      }
      // Another recipient watched instead: nothing.
      const other = await reader.readTransfers({
        from: 1000n,
        to: last,
        recipients: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
        finalAtOrBelow: final.number,
      });
      assert.deepEqual(other.transfers, []);
    } finally {
      await node.close();
    }
  });
}
