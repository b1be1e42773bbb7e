/**
 * Hostile providers in front of a real node (anvil): each test switches on one lie of a loopback
 * proxy and shows the guard that holds against it (the log checks, the block hash check, the head
 * checks, range halving, Retry-After, and two providers compared for an omission). Each of these
 * tests fails with its guard taken out of src/chains/evm/.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareReads } from '../../../src/chains/agreement.js';
import { addressTopic } from '../../../src/chains/evm/address.js';
import { bloomHas, parseBloom } from '../../../src/chains/evm/bloom.js';
import { ReadRefused, RangeCaps, TRANSFER_TOPIC, type EvmReader } from '../../../src/chains/evm/reader.js';
import { classifyRpcError, EvmRpcClient, RpcError } from '../../../src/chains/evm/rpc.js';
import type { ReadResult } from '../../../src/chains/family.js';
import { findToken } from '../../../src/chains/networks.js';
import { systemClock } from '../../../src/lib/clock.js';
import { anvilSkip } from './anvil.js';
import { ALICE, BOB, CAROL, LOOKALIKE, startDevChain, type DevChain } from './devchain.js';
import { startHostileRpc, type HostileRpc } from './hostile-rpc.js';

const skip = anvilSkip();
let chain: DevChain;
let liar: HostileRpc;
let usdt: string;
/** The range of the payments made in `before`. */
let from: bigint;
let to: bigint;

before(async () => {
  if (skip) return;
  chain = await startDevChain('ethereum-devnet');
  liar = await startHostileRpc(chain.anvil.url);
  usdt = findToken(chain.network, 'USDT')!.contract;
  from = (await chain.latest()) + 1n;
  await chain.pay(usdt, [ALICE, 10_000_000n]);
  await chain.pay(usdt, [BOB, 20_000_000n]);
  await chain.pay(usdt, [CAROL, 30_000_000n]);
  await chain.pay(LOOKALIKE, [ALICE, 10_000_000n]);
  await chain.pay(usdt, [ALICE, 40_000_000n], [BOB, 50_000_000n]);
  to = await chain.latest();
  await chain.mine(6);
});
after(async () => {
  await liar?.close();
  await chain?.close();
});
beforeEach(() => liar?.set({}));

function read(reader: EvmReader, recipients = [ALICE, BOB]): Promise<ReadResult> {
  return reader.readTransfers({ from, to, recipients, finalAtOrBelow: to });
}

function amounts(r: ReadResult): bigint[] {
  return r.transfers.map((t) => t.raw);
}

const HONEST = [10_000_000n, 20_000_000n, 40_000_000n, 50_000_000n];

/** Rewrites the logs of every eth_getLogs answer. */
function logs(rewrite: (logs: any[]) => any[]) {
  return { result: (call: { method: string }, result: any) => (call.method === 'eth_getLogs' ? rewrite(result) : result) };
}

test('through the proxy, unchanged, the reader sees the honest transfers', { skip }, async () => {
  const r = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(r), HONEST);
  assert.equal(r.complete, true);
});

test('a log marked removed is not a transfer', { skip }, async () => {
  liar.set(logs((ls) => ls.map((l, i) => (i === 0 ? { ...l, removed: true } : l))));
  const r = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(r), HONEST.slice(1));
  assert.deepEqual(
    r.dropped.map((d) => d.reason),
    ['removed'],
  );
});

test('a look-alike token with the same symbol (another contract) is not the token, even when the provider ignores the address filter', { skip }, async () => {
  const symbol = async (address: string) => {
    const hex: string = await chain.anvil.rpc('eth_call', [{ to: address, data: '0x95d89b41' }, 'latest']);
    return Buffer.from(hex.slice(2 + 128, 2 + 128 + 8), 'hex').toString();
  };
  assert.equal(await symbol(LOOKALIKE), 'USDT');
  assert.equal(await symbol(usdt), 'USDT');
  liar.set({
    request: (call) => (call.method === 'eth_getLogs' ? { ...call, params: [{ ...call.params[0], address: undefined }] } : call),
  });
  const r = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(r), HONEST);
  assert.deepEqual(
    r.dropped.map((d) => d.reason),
    ['other_contract'],
  );
});

test('a log forged from another contract is dropped', { skip }, async () => {
  liar.set(logs((ls) => [...ls, { ...ls[0], address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', logIndex: '0x63' }]));
  const r = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(r), HONEST);
  assert.deepEqual(
    r.dropped.map((d) => d.reason),
    ['other_contract'],
  );
});

test('a wrong topic count, data that is not 32 bytes and another event are dropped', { skip }, async () => {
  liar.set(
    logs((ls) => [
      { ...ls[0], topics: [...ls[0].topics, `0x${'00'.repeat(31)}01`] }, // ERC-721 style: 4 topics
      { ...ls[1], data: `${ls[1].data}${'00'.repeat(32)}` },
      { ...ls[2], topics: ['0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925', ...ls[2].topics.slice(1)] }, // Approval
      ls[3],
    ]),
  );
  const r = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(r), [50_000_000n]);
  assert.deepEqual(
    r.dropped.map((d) => d.reason),
    ['topic_count', 'data_length', 'not_transfer'],
  );
});

test('addresses and hashes in another letter case are the same bytes: nothing is lost, the output is canonical', { skip }, async () => {
  const upper = (h: string) => `0x${h.slice(2).toUpperCase()}`;
  liar.set(
    logs((ls) =>
      ls.map((l) => ({
        ...l,
        address: upper(l.address),
        topics: l.topics.map(upper),
        blockHash: upper(l.blockHash),
        transactionHash: upper(l.transactionHash),
      })),
    ),
  );
  const r = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(r), HONEST);
  assert.equal(r.transfers[0]!.contract, usdt);
  assert.equal(r.transfers[0]!.to, ALICE);
  assert.match(r.transfers[0]!.txHash, /^0x[0-9a-f]{64}$/);
});

test('a log whose blockHash is not the block at its number is not taken, and the range is not complete', { skip }, async () => {
  liar.set(logs((ls) => ls.map((l, i) => (i === 1 ? { ...l, blockHash: `0x${'ab'.repeat(32)}` } : l))));
  const r = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(r), [10_000_000n, 40_000_000n, 50_000_000n]);
  assert.deepEqual(
    r.dropped.map((d) => d.reason),
    ['not_canonical'],
  );
  assert.equal(r.complete, false);
});

test('a recipient not watched, a block outside the range asked and a log repeated are dropped', { skip }, async () => {
  liar.set({
    request: (call) => (call.method === 'eth_getLogs' ? { ...call, params: [{ ...call.params[0], topics: [TRANSFER_TOPIC], fromBlock: '0x0' }] } : call),
    result: (call, result) => (call.method === 'eth_getLogs' ? [...result, result[result.length - 1]] : result),
  });
  const r = await chain.reader(liar.url).readTransfers({ from: from + 1n, to, recipients: [ALICE, BOB], finalAtOrBelow: to });
  assert.deepEqual(amounts(r), HONEST.slice(1));
  assert.deepEqual(r.dropped.map((d) => d.reason).sort(), ['duplicate', 'not_watched', 'outside_range']);
});

test('an omitted log: one provider reads alone as complete, two compared name the missing transfer', { skip }, async () => {
  liar.set(logs((ls) => ls.filter((_, i) => i !== 2)));
  const lying = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(lying), [10_000_000n, 20_000_000n, 50_000_000n]);
  const honest = await read(chain.reader());
  const { agreed, disagreements } = compareReads([
    { provider: 'liar', transfers: lying.transfers },
    { provider: 'anvil', transfers: honest.transfers },
  ]);
  assert.equal(agreed.length, 3);
  assert.equal(disagreements.length, 1);
  assert.deepEqual(
    disagreements[0]!.versions.map((v) => [v.provider, v.transfer?.raw]),
    [
      ['liar', undefined],
      ['anvil', 40_000_000n],
    ],
  );
});

test('a range the provider refuses as too large is halved, and the cap it accepts is remembered for that provider', { skip }, async () => {
  const refused: string[] = [];
  liar.set({
    refuse: (call) => {
      if (call.method !== 'eth_getLogs') return undefined;
      const span = BigInt(call.params[0].toBlock) - BigInt(call.params[0].fromBlock) + 1n;
      if (span <= 1n) return undefined;
      refused.push(`${span}`);
      return refused.length % 2 ? { code: -32005, message: 'block range too large' } : { code: -32000, message: 'limit exceeded' };
    },
  });
  const caps = new RangeCaps();
  const first = await read(chain.reader(liar.url, { caps, maxSpan: 64n }));
  assert.deepEqual(amounts(first), HONEST);
  assert.deepEqual(refused, ['5', '2']);
  assert.equal(caps.get(liar.url), 1n);
  const asked = liar.calls.filter((c) => c.method === 'eth_getLogs').length;
  const second = await read(chain.reader(liar.url, { caps, maxSpan: 64n }));
  assert.deepEqual(amounts(second), HONEST);
  assert.deepEqual(refused, ['5', '2'], 'the learned cap is used: nothing refused the second time');
  assert.equal(liar.calls.filter((c) => c.method === 'eth_getLogs').length - asked, Number(to - from + 1n));
});

test('provider refusals are classified by message first: range, result caps and rate limits', () => {
  assert.equal(classifyRpcError(-32005, 'block range too large'), 'range');
  assert.equal(classifyRpcError(-32000, 'limit exceeded'), 'range');
  assert.equal(classifyRpcError(-32005, 'query returned more than 10000 results'), 'range');
  assert.equal(classifyRpcError(-32602, 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range'), 'range');
  assert.equal(classifyRpcError(-32005, 'daily request count exceeded, request rate limited'), 'rate_limited');
  assert.equal(classifyRpcError(429, 'Too Many Requests'), 'rate_limited');
  assert.equal(classifyRpcError(-32601, 'the method eth_foo does not exist'), 'rpc');
});

test('a lagging finalized: later transfers are only seen; a finalized that then goes back is refused', { skip }, async () => {
  let finalizedAt: string | undefined = '0x1';
  liar.set({
    request: (call) =>
      call.method === 'eth_getBlockByNumber' && call.params[0] === 'finalized' && finalizedAt ? { ...call, params: [finalizedAt, false] } : call,
  });
  const reader = chain.reader(liar.url);
  const lagging = await reader.finalHead();
  assert.equal(lagging.number, 1n);
  const r = await reader.readTransfers({ from, to, recipients: [ALICE, BOB], finalAtOrBelow: lagging.number });
  assert.deepEqual(
    r.transfers.map((t) => t.finality),
    ['seen', 'seen', 'seen', 'seen'],
  );
  finalizedAt = undefined;
  const real = await reader.finalHead();
  assert.equal(real.number, (await chain.latest()) - 4n);
  finalizedAt = '0x2';
  await assert.rejects(reader.finalHead(), (err: unknown) => err instanceof ReadRefused && /went back/.test(err.message));
});

test('a lying finalized: the latest block called final, or a block above the latest, is refused', { skip }, async () => {
  let lie: 'latest' | 'ahead' = 'latest';
  liar.set({
    request: (call) =>
      call.method === 'eth_getBlockByNumber' && call.params[0] === 'finalized' && lie === 'latest' ? { ...call, params: ['latest', false] } : call,
    result: (call, result) =>
      call.method === 'eth_getBlockByNumber' && call.params[0] === 'finalized' && lie === 'ahead'
        ? { ...result, number: `0x${(BigInt(result.number) + 100n).toString(16)}`, hash: `0x${'cd'.repeat(32)}` }
        : result,
  });
  const reader = chain.reader(liar.url);
  await assert.rejects(
    reader.finalHead(),
    (err: unknown) => err instanceof ReadRefused && err.reason === 'implausible_head' && /0 blocks behind/.test(err.message),
  );
  lie = 'ahead';
  await assert.rejects(reader.finalHead(), (err: unknown) => err instanceof ReadRefused && /above the latest/.test(err.message));
});

test('a 429 storm: each Retry-After is waited out before the next request, and a storm that lasts fails after a few', { skip }, async () => {
  liar.set({ rateLimit: { times: 2, retryAfter: '1' } });
  const rpc = new EvmRpcClient({ url: liar.url, clock: systemClock });
  const start = liar.requestTimes.length;
  const id = await rpc.call<string>('eth_chainId', []);
  assert.equal(BigInt(id), BigInt(chain.network.chainId!));
  const times = liar.requestTimes.slice(start);
  assert.equal(times.length, 3);
  assert.ok(times[1]! - times[0]! >= 950 && times[2]! - times[1]! >= 950, `gaps ${times[1]! - times[0]!} ms, ${times[2]! - times[1]!} ms`);
  assert.equal(rpc.stats.rateLimited, 2);

  liar.set({ rateLimit: { times: 100, retryAfter: '1' } });
  const storm = liar.requestTimes.length;
  const short = new EvmRpcClient({ url: liar.url, clock: systemClock, rateLimitRetries: 2 });
  await assert.rejects(short.call('eth_chainId', []), (err: unknown) => err instanceof RpcError && err.kind === 'rate_limited' && err.retryAfterMs === 1000);
  assert.equal(liar.requestTimes.length - storm, 3, 'one request and two retries, no more');
  // A Retry-After longer than the client accepts fails at once instead of hanging the reader.
  liar.set({ rateLimit: { times: 1, retryAfter: '3600' } });
  const before = liar.requestTimes.length;
  await assert.rejects(rpc.call('eth_chainId', []), (err: unknown) => err instanceof RpcError && err.retryAfterMs === 3_600_000);
  assert.equal(liar.requestTimes.length - before, 1);
  // ...and the provider is left alone for that hour: the next call fails without a request.
  await assert.rejects(rpc.call('eth_chainId', []), (err: unknown) => err instanceof RpcError && err.kind === 'rate_limited' && err.retryAfterMs! > 3_500_000);
  assert.equal(liar.requestTimes.length - before, 1);
});

test('recipients are split over several queries past the per-query limit, and halved when one block is still too much', { skip }, async () => {
  const split = await chain.reader(liar.url, { maxRecipientsPerQuery: 1 }).readTransfers({ from, to, recipients: [ALICE, BOB], finalAtOrBelow: to });
  assert.deepEqual(amounts(split), HONEST);
  const queries = (n: number) => liar.calls.slice(n).filter((c) => c.method === 'eth_getLogs');
  const mark = liar.calls.length;
  liar.set({
    refuse: (call) =>
      call.method === 'eth_getLogs' && call.params[0].topics[2].length > 1 ? { code: -32005, message: 'query returned more than 10000 results' } : undefined,
  });
  const halved = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(halved), HONEST);
  // Every query with both recipients is refused, so what was read came in one-recipient queries.
  assert.ok(queries(mark).some((c) => c.params[0].topics[2].length === 1));
  // "limit exceeded" even for one block (public BSC nodes): the provider serves no logs, said at once.
  liar.set({ refuse: (call) => (call.method === 'eth_getLogs' ? { code: -32005, message: 'limit exceeded' } : undefined) });
  await assert.rejects(read(chain.reader(liar.url)), (err: unknown) => err instanceof ReadRefused && err.reason === 'logs_refused');
  // A result cap on one block for one recipient cannot be read either.
  liar.set({ refuse: (call) => (call.method === 'eth_getLogs' ? { code: -32005, message: 'query returned more than 10000 results' } : undefined) });
  await assert.rejects(read(chain.reader(liar.url)), (err: unknown) => err instanceof ReadRefused && err.reason === 'range_unreadable');
});

test('a log made up in a real block (right blockHash, a watched recipient) is refused by that block own logsBloom', { skip }, async () => {
  liar.set(
    logs((ls) =>
      ls.map((l) =>
        l.topics[2] === addressTopic(BOB) && l.data === `0x${20_000_000n.toString(16).padStart(64, '0')}`
          ? { ...l, topics: [l.topics[0], l.topics[1], addressTopic(ALICE)] }
          : l,
      ),
    ),
  );
  const r = await read(chain.reader(liar.url));
  assert.deepEqual(amounts(r), [10_000_000n, 40_000_000n, 50_000_000n]);
  assert.deepEqual(
    r.dropped.map((d) => d.reason),
    ['not_in_bloom'],
  );
  assert.equal(r.complete, false);
  // The honest logs' items are all in their blocks' blooms (computed by anvil, read here).
  const honest = await chain.anvil.rpc('eth_getLogs', [{ fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, address: usdt }]);
  for (const l of honest) {
    const bloom = parseBloom((await chain.anvil.rpc('eth_getBlockByNumber', [l.blockNumber, false])).logsBloom)!;
    for (const item of [l.address, ...l.topics]) assert.ok(bloomHas(bloom, item));
    assert.equal(bloomHas(bloom, addressTopic(LOOKALIKE)), false);
  }
});
