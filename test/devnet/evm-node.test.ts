/**
 * The simulated EVM devnets read by the real EvmReader and EvmRpcClient over loopback HTTP: a
 * payment injected on bsc-devnet (18 decimals) is verified with its pinned contract, exact raw
 * value, canonical block hash and a bloom that holds it; `finalized` and `safe` trail the latest;
 * the eth_getLogs range cap is learned from the simulator's -32005; filters, batches and the
 * transport's errors answer as geth does; reorgs replace blocks; and the shapes are anvil's (a real
 * node), bloom bits included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bloomAdd, bloomHas, parseBloom } from '../../src/chains/evm/bloom.js';
import { EvmReader, RangeCaps, TRANSFER_TOPIC } from '../../src/chains/evm/reader.js';
import { EvmRpcClient, RpcError } from '../../src/chains/evm/rpc.js';
import { NETWORKS, type EvmNetworkId } from '../../src/chains/networks.js';
import { ManualClock } from '../../src/lib/clock.js';
import { FAKE_EVM_CONTRACTS, startSimulatedEvm, type SimulatedEvm } from '../../src/devnet/evm-node.js';
import { APPROVAL_TOPIC } from '../../src/devnet/evm-chain.js';
import { ALICE, BOB, startDevChain } from '../chains/evm/devchain.js';
import { anvilSkip } from '../chains/evm/anvil.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const DEVNETS: EvmNetworkId[] = ['ethereum-devnet', 'bsc-devnet', 'polygon-devnet', 'arbitrum-devnet', 'base-devnet'];

async function sim(t: { after(fn: () => unknown): void }, extra: Partial<Parameters<typeof startSimulatedEvm>[0]> = {}) {
  const clock = new ManualClock(T0);
  const node = await startSimulatedEvm({ networks: DEVNETS.map((id) => NETWORKS[id]), now: () => clock.now(), finalityLag: 8, seed: 41, ...extra });
  t.after(() => node.close());
  const reader = (id: EvmNetworkId, caps = new RangeCaps()) =>
    new EvmReader({ network: NETWORKS[id], rpc: new EvmRpcClient({ url: node.urlOf(id), clock, name: id }), caps });
  return { clock, node, reader };
}

async function rpc(
  node: SimulatedEvm,
  id: EvmNetworkId,
  body: unknown,
  contentType = 'application/json',
): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(node.urlOf(id), {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

const call = async (node: SimulatedEvm, id: EvmNetworkId, method: string, params: unknown[]) =>
  (await rpc(node, id, { jsonrpc: '2.0', id: 1, method, params })).json;

test('EvmReader verifies a payment on bsc-devnet: pinned contract, exact raw value, canonical hash, bloom; seen, then final when finalized passes it', async (t) => {
  const { clock, node, reader } = await sim(t);
  const chain = node.chain('bsc-devnet')!;
  const usdt = NETWORKS['bsc-devnet'].tokens[0]!;
  assert.equal(usdt.decimals, 18);
  const raw = 12_345_678n * 10n ** 12n;
  const paid = chain.transfer({ to: ALICE.toLowerCase(), raw });
  assert.equal(paid.blockNumber, chain.latest() + 1, 'in the next block, never a sealed one');
  assert.ok(paid.logIndex > 0, 'after the block filler');

  const r = reader('bsc-devnet');
  await r.checkNetwork();
  clock.advance(3000);
  const latest = await r.latestHead();
  assert.equal(latest.number, BigInt(paid.blockNumber + 2));
  const seen = await r.readTransfers({ from: BigInt(paid.blockNumber), to: latest.number, recipients: [ALICE], finalAtOrBelow: BigInt(chain.finalized()) });
  assert.equal(seen.complete, true);
  assert.equal(seen.transfers.length, 1, JSON.stringify(seen.dropped));
  const [tr] = seen.transfers;
  assert.deepEqual(
    [tr!.contract, tr!.raw, tr!.amount, tr!.txHash, tr!.logIndex, tr!.blockHash, tr!.finality],
    [usdt.contract, raw, { exact: true, micros: 12_345_678n }, paid.txHash, paid.logIndex, paid.blockHash, 'seen'],
  );
  const header = await call(node, 'bsc-devnet', 'eth_getBlockByNumber', [`0x${paid.blockNumber.toString(16)}`, false]);
  assert.equal(header.result.hash, paid.blockHash, 'the canonical hash at that height');
  assert.equal(header.result.parentHash, (await r.block(BigInt(paid.blockNumber - 1))).hash);
  const bloom = parseBloom(header.result.logsBloom)!;
  for (const item of [usdt.contract.toLowerCase(), TRANSFER_TOPIC, `0x${'0'.repeat(24)}${ALICE.slice(2).toLowerCase()}`])
    assert.ok(bloomHas(bloom, item), item);
  assert.ok(!bloomHas(bloom, `0x${'0'.repeat(24)}${'9'.repeat(40)}`), 'a recipient nobody paid is (almost surely) absent');
  assert.ok(header.result.transactions.includes(paid.txHash));

  // `finalized` trails the latest by the lag, `safe` by half; a block is final once finalized reaches it.
  const final = await r.finalHead();
  assert.equal(final.number, latest.number - 8n);
  assert.equal((await call(node, 'bsc-devnet', 'eth_getBlockByNumber', ['safe', false])).result.number, `0x${(latest.number - 4n).toString(16)}`);
  clock.advance(8000);
  const later = await r.finalHead();
  assert.ok(later.number >= BigInt(paid.blockNumber));
  const confirmed = await r.readTransfers({ from: BigInt(paid.blockNumber), to: later.number, recipients: [ALICE], finalAtOrBelow: later.number });
  assert.deepEqual(
    confirmed.transfers.map((x) => [x.txHash, x.finality]),
    [[paid.txHash, 'final']],
  );

  // A look-alike token's Transfer and a reverted call to the same recipient are not transfers of the token.
  const fake = chain.transfer({ to: ALICE, raw, contract: FAKE_EVM_CONTRACTS[0] });
  const failed = chain.transfer({ to: ALICE, raw, failed: true });
  assert.equal(failed.logIndex, -1);
  clock.advance(12_000);
  const head = await r.finalHead();
  const after = await r.readTransfers({ from: BigInt(fake.blockNumber), to: head.number, recipients: [ALICE], finalAtOrBelow: head.number });
  assert.deepEqual(after.transfers, []);
  const aliceTopic = `0x${'0'.repeat(24)}${ALICE.slice(2).toLowerCase()}`;
  const logs = await call(node, 'bsc-devnet', 'eth_getLogs', [
    { blockHash: fake.blockHash, address: FAKE_EVM_CONTRACTS[0], topics: [TRANSFER_TOPIC, null, aliceTopic] },
  ]);
  assert.equal(logs.result.length, 1, 'the look-alike emitted its own Transfer log');
});

test('the eth_getLogs range cap: -32005 beyond it, learned by the reader by halving; a result cap answers as Infura does', async (t) => {
  const { clock, node, reader } = await sim(t, { maxBlockRange: 500, maxResults: 50 });
  const chain = node.chain('ethereum-devnet')!;
  const paid = chain.transfer({ to: BOB, raw: 5_000_000n });
  clock.advance(20_000);
  const wide = await call(node, 'ethereum-devnet', 'eth_getLogs', [
    { fromBlock: `0x${(paid.blockNumber - 600).toString(16)}`, toBlock: `0x${paid.blockNumber.toString(16)}` },
  ]);
  assert.deepEqual(wide.error, { code: -32005, message: 'block range too large, max range: 500' });
  const r = reader('ethereum-devnet');
  const read = await r.readTransfers({
    from: BigInt(paid.blockNumber - 1999),
    to: BigInt(paid.blockNumber),
    recipients: [BOB],
    finalAtOrBelow: BigInt(chain.finalized()),
  });
  assert.deepEqual(
    read.transfers.map((x) => x.txHash),
    [paid.txHash],
  );
  assert.ok(r.span() <= 500n, `learned span ${r.span()}`);
  assert.ok(node.count('ethereum-devnet', 'eth_getLogs') >= 5, 'read in several spans after the refusals');

  // Every Transfer of the token over 40 blocks is more than 50 logs: refused with a range that fits.
  const from = paid.blockNumber - 40;
  const many = await call(node, 'ethereum-devnet', 'eth_getLogs', [
    { fromBlock: `0x${from.toString(16)}`, toBlock: `0x${paid.blockNumber.toString(16)}`, topics: [TRANSFER_TOPIC] },
  ]);
  assert.equal(many.error.code, -32005);
  assert.match(many.error.message, /^query returned more than 50 results\. Try with this block range \[0x[0-9a-f]+, 0x[0-9a-f]+\]\.$/);
  const fits = await call(node, 'ethereum-devnet', 'eth_getLogs', [{ fromBlock: many.error.data.from, toBlock: many.error.data.to, topics: [TRANSFER_TOPIC] }]);
  assert.ok(Array.isArray(fits.result) && fits.result.length <= 50 && fits.result.length > 0);
  const client = new EvmRpcClient({ url: node.urlOf('ethereum-devnet'), clock });
  await assert.rejects(
    client.call('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]),
    (err: unknown) => err instanceof RpcError && err.kind === 'range',
  );
});

test('filters, tags, batches and transport errors answer as geth does', async (t) => {
  const { clock, node } = await sim(t, { fillerPerBlock: [12, 16] });
  const chain = node.chain('arbitrum-devnet')!;
  const [usdt, usdc] = NETWORKS['arbitrum-devnet'].tokens;
  const a = chain.transfer({ to: ALICE, raw: 1_000_000n });
  const b = chain.transfer({ to: BOB, raw: 2_000_000n, contract: usdc!.contract });
  assert.equal(b.blockNumber, a.blockNumber);
  assert.equal(b.logIndex, a.logIndex + 1);
  clock.advance(2000);
  const range = { fromBlock: `0x${a.blockNumber.toString(16)}`, toBlock: `0x${a.blockNumber.toString(16)}` };
  const topic = (addr: string) => `0x${'0'.repeat(24)}${addr.slice(2).toLowerCase()}`;
  const get = async (filter: Record<string, unknown>) => (await call(node, 'arbitrum-devnet', 'eth_getLogs', [filter])).result as any[];
  // An OR-list of recipients, null for any sender, both contracts: exactly the two payments.
  const both = await get({ ...range, address: [usdt!.contract, usdc!.contract], topics: [TRANSFER_TOPIC, null, [topic(ALICE), topic(BOB)]] });
  assert.deepEqual(
    both.map((l) => l.transactionHash),
    [a.txHash, b.txHash],
  );
  assert.deepEqual(Object.keys(both[0]).sort(), [
    'address',
    'blockHash',
    'blockNumber',
    'blockTimestamp',
    'data',
    'logIndex',
    'removed',
    'topics',
    'transactionHash',
    'transactionIndex',
  ]);
  assert.equal(both[0].removed, false);
  assert.equal(both[0].topics.length, 3);
  assert.match(both[0].data, /^0x[0-9a-f]{64}$/);
  assert.equal(both[0].address, usdt!.contract.toLowerCase());
  assert.equal((await get({ ...range, address: usdc!.contract, topics: [TRANSFER_TOPIC, null, [topic(ALICE), topic(BOB)]] })).length, 1);
  assert.equal((await get({ ...range, topics: [[APPROVAL_TOPIC], null, topic(ALICE)] })).length, 0);
  const byHash = await get({ blockHash: a.blockHash, topics: [TRANSFER_TOPIC, null, topic(BOB)] });
  assert.deepEqual(
    byHash.map((l) => l.transactionHash),
    [b.txHash],
  );
  const all = await get(range);
  assert.ok(all.length > 2, 'the block carries filler logs too');
  assert.deepEqual(
    all.map((l) => Number(l.logIndex)),
    all.map((_, i) => i),
    'log indexes run through the block',
  );

  const err = async (params: unknown[], method = 'eth_getLogs') => (await call(node, 'arbitrum-devnet', method, params)).error;
  assert.equal((await err([{ blockHash: a.blockHash, fromBlock: '0x1' }])).code, -32602);
  assert.deepEqual(await err([{ fromBlock: '0x10', toBlock: '0x5' }]), { code: -32000, message: 'invalid block range params' });
  assert.deepEqual(await err([{ blockHash: `0x${'1'.repeat(64)}` }]), { code: -32000, message: 'unknown block' });
  assert.equal((await err([{ ...range, address: 'zz' }])).code, -32602);
  assert.equal((await err(['0x01', false], 'eth_getBlockByNumber')).message, 'invalid argument 0: hex number with leading zero digits');
  assert.equal((await err(['latest'], 'eth_getBlockByNumber')).code, -32602);
  assert.equal((await err([], 'eth_sendRawTransaction')).code, -32601);
  assert.equal((await call(node, 'arbitrum-devnet', 'eth_getBlockByNumber', [`0x${(chain.latest() + 1).toString(16)}`, false])).result, null);
  const byHashBlock = (await call(node, 'arbitrum-devnet', 'eth_getBlockByHash', [a.blockHash, true])).result;
  assert.equal(byHashBlock.number, `0x${a.blockNumber.toString(16)}`);
  assert.equal(byHashBlock.transactions.find((x: any) => x.hash === a.txHash).to, usdt!.contract.toLowerCase());

  // A batch answers in order, by id; a notification gets no answer; the transport refuses as geth does.
  const batch = await rpc(node, 'arbitrum-devnet', [
    { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] },
    { jsonrpc: '2.0', method: 'eth_blockNumber', params: [] },
    { jsonrpc: '2.0', id: 'x', method: 'eth_getBlockByNumber', params: ['finalized', false] },
  ]);
  assert.deepEqual(
    batch.json.map((x: any) => x.id),
    [7, 'x'],
  );
  assert.equal(batch.json[0].result, `0x${(42161 + 900000).toString(16)}`);
  assert.equal(batch.json[1].result.number, `0x${chain.finalized().toString(16)}`);
  assert.deepEqual((await rpc(node, 'arbitrum-devnet', [])).json.error, { code: -32600, message: 'empty batch' });
  assert.deepEqual((await rpc(node, 'arbitrum-devnet', '{not json')).json.error, { code: -32700, message: 'parse error' });
  assert.equal((await rpc(node, 'arbitrum-devnet', { jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, 'text/plain')).status, 415);
  const nowhere = await fetch(`${node.url}/tron-devnet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(nowhere.status, 404);
  for (const id of DEVNETS) assert.equal((await call(node, id, 'eth_chainId', [])).result, `0x${NETWORKS[id].chainId!.toString(16)}`, id);
});

test('filler is real traffic; on polygon-devnet state-sync logs are left out of the bloom; faults come as asked', async (t) => {
  const { clock, node } = await sim(t);
  clock.advance(64_000);
  const bsc = node.chain('bsc-devnet')!;
  let subMicro = 0;
  let logs = 0;
  for (let n = bsc.latest() - 40; n <= bsc.latest(); n++) {
    for (const log of bsc.block(n)!.logs) {
      logs++;
      if (log.topics[0] === TRANSFER_TOPIC && BigInt(log.data) % 10n ** 12n !== 0n) subMicro++;
    }
  }
  assert.ok(logs > 100 && subMicro > 5, `${logs} logs, ${subMicro} with digits below the micro-unit`);

  const polygon = node.chain('polygon-devnet')!;
  const sprint = Math.floor(polygon.latest() / 16) * 16;
  const block = (await call(node, 'polygon-devnet', 'eth_getBlockByNumber', [`0x${sprint.toString(16)}`, false])).result;
  const mint = polygon.block(sprint)!.logs.find((l) => !l.inBloom)!;
  assert.equal(mint.topics[1], `0x${'0'.repeat(64)}`, 'a mint from the zero address');
  const bloom = parseBloom(block.logsBloom)!;
  assert.ok(!bloomHas(bloom, mint.topics[2]!), 'the state-sync log (its recipient) is not in the header bloom');
  const served = (await call(node, 'polygon-devnet', 'eth_getLogs', [{ blockHash: block.hash, topics: [TRANSFER_TOPIC, `0x${'0'.repeat(64)}`] }])).result;
  assert.equal(served.length, 1, 'yet eth_getLogs returns it');

  node.fail('base-devnet', 'eth_getLogs', { status: 429, body: 'Too Many Requests', headers: { 'retry-after': '7' } });
  const limited = await fetch(node.urlOf('base-devnet'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{}] }),
  });
  assert.deepEqual([limited.status, limited.headers.get('retry-after')], [429, '7']);
  node.fail('*', 'eth_blockNumber', { error: { code: -32603, message: 'internal error' } });
  assert.deepEqual((await call(node, 'ethereum-devnet', 'eth_blockNumber', [])).error, { code: -32603, message: 'internal error' });
  assert.match((await call(node, 'ethereum-devnet', 'eth_blockNumber', [])).result, /^0x[0-9a-f]+$/);
  const state = (await (await fetch(`${node.url}/_sim/state`)).json()) as any;
  assert.equal(state.networks['bsc-devnet'].finalized, bsc.finalized());
  assert.equal(state.networks['bsc-devnet'].url, node.urlOf('bsc-devnet'));
});

test('reorgs: the last blocks get new hashes, a kept transfer stays at its height, a dropped one is gone; finalized blocks stay unless asked', async (t) => {
  const { clock, node, reader } = await sim(t);
  const chain = node.chain('base-devnet')!;
  const kept = chain.transfer({ to: ALICE, raw: 7_000_000n });
  clock.advance(3000);
  const r = reader('base-devnet');
  const before = await r.readTransfers({ from: BigInt(kept.blockNumber), to: BigInt(chain.latest()), recipients: [ALICE], finalAtOrBelow: 0n });
  assert.equal(before.transfers.length, 1);
  const finalBefore = chain.finalized();
  const finalHash = chain.hashOf(finalBefore);

  assert.throws(() => chain.reorg(9), /would replace finalized blocks/);
  const reorg = chain.reorg(4);
  assert.deepEqual([reorg.from, reorg.to, reorg.dropped], [chain.latest() - 3, chain.latest(), []]);
  assert.equal(chain.hashOf(finalBefore), finalHash, 'the finalized block is untouched');
  const recheck = await r.recheck(before.transfers);
  assert.deepEqual(
    recheck.reorged.map((x) => x.txHash),
    [kept.txHash],
    'its block is gone',
  );
  const again = await r.readTransfers({ from: BigInt(kept.blockNumber), to: BigInt(chain.latest()), recipients: [ALICE], finalAtOrBelow: 0n });
  assert.deepEqual(
    again.transfers.map((x) => [x.txHash, x.blockNumber]),
    [[kept.txHash, BigInt(kept.blockNumber)]],
    're-included at its height',
  );
  assert.notEqual(again.transfers[0]!.blockHash, kept.blockHash);
  const child = (await call(node, 'base-devnet', 'eth_getBlockByNumber', [`0x${(kept.blockNumber + 1).toString(16)}`, false])).result;
  assert.equal(child.parentHash, again.transfers[0]!.blockHash, 'the new branch links up');

  const lost = chain.transfer({ to: ALICE, raw: 8_000_000n });
  clock.advance(2000);
  const dropped = (await (
    await fetch(`${node.url}/_sim/reorg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'base-devnet', depth: 3, drop: true }),
    })
  ).json()) as any;
  assert.ok(dropped.dropped.includes(lost.txHash));
  const gone = await r.readTransfers({ from: BigInt(lost.blockNumber), to: BigInt(chain.latest()), recipients: [ALICE], finalAtOrBelow: 0n });
  assert.deepEqual(gone.transfers, []);
  assert.equal(chain.reorg(10, { pastFinality: true }).from, chain.latest() - 9, 'a broken chain on request');
});

test('the shapes are a real node’s: anvil’s block and log fields, and its logsBloom bit for bit', { skip: anvilSkip() }, async (t) => {
  const dev = await startDevChain('ethereum-devnet');
  t.after(() => dev.close());
  const usdt = dev.network.tokens[0]!.contract;
  const paid = await dev.pay(usdt, [ALICE, 1_500_000n], [BOB, 2_000_000n]);
  const anvilCall = (method: string, params: unknown[]) => dev.anvil.rpc(method, params);
  const anvilBlock = await anvilCall('eth_getBlockByNumber', [`0x${paid.blockNumber.toString(16)}`, false]);
  const anvilLogs = await anvilCall('eth_getLogs', [{ blockHash: paid.blockHash }]);
  // Our bloom of anvil's logs is anvil's header bloom.
  const bloom = new Uint8Array(256);
  for (const log of anvilLogs) for (const item of [log.address, ...log.topics]) bloomAdd(bloom, item);
  assert.equal(`0x${Buffer.from(bloom).toString('hex')}`, anvilBlock.logsBloom);

  const { clock, node } = await sim(t);
  node.chain('ethereum-devnet')!.transfer({ to: ALICE, raw: 1n });
  clock.advance(1000);
  const ours = (await call(node, 'ethereum-devnet', 'eth_getBlockByNumber', ['latest', false])).result;
  // totalDifficulty is gone from geth since the merge; anvil still sends it.
  const theirs = Object.keys(anvilBlock).filter((k) => k !== 'totalDifficulty');
  assert.deepEqual(Object.keys(ours).sort(), theirs.sort());
  const ourLogs = (await call(node, 'ethereum-devnet', 'eth_getLogs', [{ blockHash: ours.hash }])).result;
  assert.deepEqual(Object.keys(ourLogs[0]).sort(), Object.keys(anvilLogs[0]).sort());
  const fullOurs = (await call(node, 'ethereum-devnet', 'eth_getBlockByNumber', ['latest', true])).result.transactions[0];
  const fullTheirs = (await anvilCall('eth_getBlockByNumber', [`0x${paid.blockNumber.toString(16)}`, true])).transactions[0];
  assert.deepEqual(Object.keys(fullOurs).sort(), Object.keys(fullTheirs).sort());
  // The bloom of our own header holds our logs by the same rule.
  const ourBloom = new Uint8Array(256);
  for (const log of ourLogs) for (const item of [log.address, ...log.topics]) bloomAdd(ourBloom, item);
  assert.equal(`0x${Buffer.from(ourBloom).toString('hex')}`, ours.logsBloom);
});
