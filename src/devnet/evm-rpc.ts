/**
 * The JSON-RPC methods of a simulated EVM devnet, answered as geth and the large providers answer
 * them (shapes checked against anvil, a real node, in test/devnet/evm-node.test.ts):
 *   eth_chainId, net_version, web3_clientVersion, eth_blockNumber,
 *   eth_getBlockByNumber [number | "latest" | "safe" | "finalized" | "earliest" | "pending", full],
 *   eth_getBlockByHash [hash, full],
 *   eth_getLogs [{fromBlock, toBlock, address, topics} | {blockHash, address, topics}].
 * eth_getLogs takes an address or a list, and per topic position null, a topic or an OR-list of
 * topics. A range wider than the node's cap is refused as Erigon refuses it (-32005 "block range
 * too large, max range: N"), and a result longer than the result cap as Infura refuses it (-32005
 * "query returned more than 10000 results", with a range that would fit).
 */
import type { EvmBlock, EvmBlockLog, EvmSimChain, EvmTx } from './evm-chain.js';
import { logsBloom, word } from './evm-chain.js';

export interface RpcLimits {
  /** The most blocks one eth_getLogs may span; 0 = no cap. */
  maxBlockRange: number;
  /** The most logs one eth_getLogs may return. */
  maxResults: number;
}

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export type RpcAnswer = { result: unknown } | { error: RpcErrorObject };

class Refusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const invalid = (arg: number, why: string) => new Refusal(-32602, `invalid argument ${arg}: ${why}`);
const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** keccak256(rlp([])): the ommers hash of a block without uncles. */
const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
/** The root of an empty trie (no transactions, no receipts, no withdrawals). */
const EMPTY_TRIE = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

/** sha256 of no execution-layer requests (EIP-7685), a block's requestsHash since Prague. */
const EMPTY_REQUESTS = '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const q = (n: number | bigint) => `0x${n.toString(16)}`;

/** A block parameter: a tag or a quantity without leading zeros (geth refuses "0x01" and "12"). */
function blockParam(chain: EvmSimChain, value: unknown, arg: number): number {
  switch (value) {
    case 'latest':
    case 'pending':
      return chain.latest();
    case 'safe':
      return chain.safe();
    case 'finalized':
      return chain.finalized();
    case 'earliest':
      return 0;
  }
  if (typeof value !== 'string') throw invalid(arg, 'expected a block number (hex) or a tag');
  if (!value.startsWith('0x')) throw invalid(arg, 'hex string without 0x prefix');
  if (!/^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/.test(value)) throw invalid(arg, value === '0x' ? 'empty hex string' : 'hex number with leading zero digits');
  const n = BigInt(value);
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

function fullFlag(params: unknown[]): boolean {
  if (params.length < 2) throw invalid(1, 'missing value for required argument 1');
  if (typeof params[1] !== 'boolean') throw invalid(1, 'expected a boolean');
  return params[1];
}

function txJson(chain: EvmSimChain, block: EvmBlock, tx: EvmTx, index: number): Record<string, unknown> {
  const sig = tx.hash.slice(2);
  return {
    type: '0x2',
    chainId: q(chain.chainId),
    nonce: q(tx.nonce),
    gas: q(Math.ceil(tx.gasUsed * 1.3)),
    maxFeePerGas: '0x5015d855',
    maxPriorityFeePerGas: '0x3b9aca00',
    to: tx.to,
    value: q(tx.value),
    accessList: [],
    input: tx.input,
    r: `0x${sig.slice(0, 64)}`,
    s: `0x${[...sig].reverse().join('')}`,
    yParity: '0x1',
    v: '0x1',
    hash: tx.hash,
    blockHash: block.hash,
    blockNumber: q(block.number),
    transactionIndex: q(index),
    from: tx.from,
    gasPrice: '0x4a817c800',
    blockTimestamp: q(Math.floor(block.timeMs / 1000)),
  };
}

/** A header as eth_getBlockByNumber answers it (post-Cancun field set, as anvil and geth answer). */
export function blockJson(chain: EvmSimChain, block: EvmBlock, full: boolean): Record<string, unknown> {
  const root = (label: string) => (block.txs.length === 0 ? EMPTY_TRIE : `0x${block.hash.slice(2, 50)}${label}`.padEnd(66, '0'));
  const gasUsed = block.txs.reduce((sum, t) => sum + t.gasUsed, 0);
  return {
    hash: block.hash,
    parentHash: block.parentHash,
    sha3Uncles: EMPTY_UNCLES,
    miner: block.miner,
    stateRoot: `0x${word(BigInt(block.hash) ^ BigInt(chain.chainId))}`,
    transactionsRoot: root('7478'),
    receiptsRoot: root('7263'),
    logsBloom: logsBloom(block.logs),
    difficulty: '0x0',
    number: q(block.number),
    gasLimit: '0x1c9c380',
    gasUsed: q(gasUsed),
    timestamp: q(Math.floor(block.timeMs / 1000)),
    extraData: '0x',
    mixHash: block.parentHash === `0x${'0'.repeat(64)}` ? EMPTY_TRIE : `0x${word(BigInt(block.parentHash) >> 1n)}`,
    nonce: '0x0000000000000000',
    baseFeePerGas: q(1_000_000_000 + (block.number % 97) * 3_000_000),
    withdrawalsRoot: EMPTY_TRIE,
    blobGasUsed: '0x0',
    excessBlobGas: '0x0',
    parentBeaconBlockRoot: `0x${'0'.repeat(64)}`,
    requestsHash: EMPTY_REQUESTS,
    size: q(600 + block.txs.reduce((sum, t) => sum + 110 + (t.input.length - 2) / 2, 0)),
    uncles: [],
    transactions: block.txs.map((t, i) => (full ? txJson(chain, block, t, i) : t.hash)),
    withdrawals: [],
  };
}

function logJson(block: EvmBlock, log: EvmBlockLog): Record<string, unknown> {
  return {
    address: log.address,
    topics: log.topics,
    data: log.data,
    blockHash: block.hash,
    blockNumber: q(block.number),
    blockTimestamp: q(Math.floor(block.timeMs / 1000)),
    transactionHash: log.txHash,
    transactionIndex: q(log.txIndex),
    logIndex: q(log.logIndex),
    removed: false,
  };
}

type TopicFilter = Array<Set<string> | null>;

function parseFilter(raw: unknown): { addresses: Set<string> | null; topics: TopicFilter } {
  const f = raw as { address?: unknown; topics?: unknown };
  let addresses: Set<string> | null = null;
  if (f.address !== undefined && f.address !== null) {
    const list = Array.isArray(f.address) ? f.address : [f.address];
    for (const a of list)
      if (typeof a !== 'string' || !ADDRESS.test(a)) throw invalid(0, `invalid address ${JSON.stringify(a)}: hex string of 20 bytes expected`);
    if (list.length > 0) addresses = new Set(list.map((a) => (a as string).toLowerCase()));
  }
  const topics: TopicFilter = [];
  if (f.topics !== undefined && f.topics !== null) {
    if (!Array.isArray(f.topics)) throw invalid(0, 'topics must be a list');
    if (f.topics.length > 4) throw invalid(0, 'exceed max topics');
    for (const position of f.topics) {
      const list = position === null ? null : Array.isArray(position) ? position : [position];
      // A null inside an OR-list matches anything at that position, as in geth.
      if (list === null || list.length === 0 || list.includes(null)) {
        topics.push(null);
        continue;
      }
      for (const t of list)
        if (typeof t !== 'string' || !HASH32.test(t)) throw invalid(0, `invalid topic ${JSON.stringify(t)}: hex string of 32 bytes expected`);
      topics.push(new Set(list.map((t) => (t as string).toLowerCase())));
    }
  }
  return { addresses, topics };
}

function matches(log: EvmBlockLog, addresses: Set<string> | null, topics: TopicFilter): boolean {
  if (addresses && !addresses.has(log.address)) return false;
  return topics.every((wanted, i) => wanted === null || (log.topics[i] !== undefined && wanted.has(log.topics[i]!)));
}

function getLogs(chain: EvmSimChain, params: unknown[], limits: RpcLimits): unknown[] {
  const raw = params[0];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(0, 'expected a filter object');
  const f = raw as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
  const { addresses, topics } = parseFilter(raw);
  const pick = (blocks: EvmBlock[]) => blocks.flatMap((b) => b.logs.filter((l) => matches(l, addresses, topics)).map((l) => logJson(b, l)));
  if (f.blockHash !== undefined && f.blockHash !== null) {
    if (f.fromBlock !== undefined || f.toBlock !== undefined) throw invalid(0, 'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    if (typeof f.blockHash !== 'string' || !HASH32.test(f.blockHash)) throw invalid(0, 'blockHash: hex string of 32 bytes expected');
    const n = chain.numberOf(f.blockHash);
    if (n === undefined) throw new Refusal(-32000, 'unknown block');
    return pick([chain.block(n)!]);
  }
  const from = blockParam(chain, f.fromBlock ?? 'latest', 0);
  const to = blockParam(chain, f.toBlock ?? 'latest', 0);
  if (from > to) throw new Refusal(-32000, 'invalid block range params');
  if (limits.maxBlockRange > 0 && to - from + 1 > limits.maxBlockRange) throw new Refusal(-32005, `block range too large, max range: ${limits.maxBlockRange}`);
  const out: unknown[] = [];
  const last = Math.min(to, chain.latest());
  for (let n = from; n <= last; n++) {
    const found = pick([chain.block(n)!]);
    if (out.length + found.length > limits.maxResults) {
      // Infura's answer: the result cap, and a range that would have fit.
      const fits = n - 1 >= from ? n - 1 : from;
      throw new Refusal(-32005, `query returned more than ${limits.maxResults} results. Try with this block range [${q(from)}, ${q(fits)}].`, {
        from: q(from),
        limit: limits.maxResults,
        to: q(fits),
      });
    }
    out.push(...found);
  }
  return out;
}

/** One call's answer: its result, or the error object a real node would send. */
export function answerCall(chain: EvmSimChain, method: string, params: unknown, limits: RpcLimits): RpcAnswer {
  const list = params === undefined || params === null ? [] : params;
  if (!Array.isArray(list)) return { error: { code: -32602, message: 'non-array args' } };
  try {
    switch (method) {
      case 'eth_chainId':
        return { result: q(chain.chainId) };
      case 'net_version':
        return { result: String(chain.chainId) };
      case 'web3_clientVersion':
        return { result: `gatewayd-devnet/${chain.network.id}` };
      case 'eth_blockNumber':
        return { result: q(chain.latest()) };
      case 'eth_getBlockByNumber': {
        if (list.length < 1) throw invalid(0, 'missing value for required argument 0');
        const block = chain.block(blockParam(chain, list[0], 0));
        return { result: block ? blockJson(chain, block, fullFlag(list)) : null };
      }
      case 'eth_getBlockByHash': {
        if (typeof list[0] !== 'string' || !HASH32.test(list[0])) throw invalid(0, 'hex string of 32 bytes expected');
        const full = fullFlag(list);
        const n = chain.numberOf(list[0]);
        return { result: n === undefined ? null : blockJson(chain, chain.block(n)!, full) };
      }
      case 'eth_getLogs':
        if (list.length < 1) throw invalid(0, 'missing value for required argument 0');
        return { result: getLogs(chain, list, limits) };
      default:
        return { error: { code: -32601, message: `the method ${method} does not exist/is not available` } };
    }
  } catch (err) {
    if (err instanceof Refusal) return { error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } };
    throw err;
  }
}
