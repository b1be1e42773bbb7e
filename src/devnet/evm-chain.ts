/**
 * The chain of one simulated EVM devnet (`gatewayd dev`, evm-node.ts serves it as JSON-RPC). Like the
 * simulated TRON chain it is a function of time: block n has the time genesisTime + n × interval,
 * and the latest block is the newest whose time has come, so blocks appear every interval with
 * the real clock and as a test moves its manual clock. `safe` and `finalized` trail the latest by
 * half the finality lag and by the whole of it.
 *
 * Every block carries filler traffic derived from (seed, chain id, number, branch): the pinned
 * tokens moving between strangers (on an 18-decimal token often with digits below the micro-unit),
 * native transfers without logs, approvals, zero-value transfers from look-alike senders, tokens
 * that call themselves USDT or USDC at other addresses, two transfers in one transaction, reverted
 * calls; on a network whose header bloom leaves some logs out (Polygon PoS), a state-sync mint
 * every sprint that is left out of the bloom as Bor does. Transactions injected on demand
 * (`transfer`) go after the filler of a block that is not sealed yet, so what a block holds never
 * changes once it could have been read, and their log index is known when they are made.
 *
 * A reorg (`reorg`) replaces the last blocks with another branch: new hashes, new filler, and the
 * injected transactions either kept at their heights (re-included) or dropped. Block hashes are
 * derived from (seed, chain id, number, branch), so they stay fixed between reorgs and change at
 * every height a reorg replaced; each parentHash is the hash of the block before.
 */
import { hash as digest } from 'node:crypto';
import { keccakHex } from '../chains/evm/address.js';
import { bloomAdd } from '../chains/evm/bloom.js';
import { TRANSFER_TOPIC } from '../chains/evm/reader.js';
import type { Network, Token } from '../chains/networks.js';
import { seededRandom } from '../lib/seeded-random.js';

export const APPROVAL_TOPIC = `0x${keccakHex('Approval(address,address,uint256)')}`;

/** Contracts that call themselves USDT or USDC on every devnet but are not its tokens (lower case). */
export const FAKE_EVM_CONTRACTS: readonly string[] = ['USDT 1', 'USDC 1', 'USDT 2'].map(
  (label) => `0x${keccakHex(`gatewayd devnet look-alike ${label}`).slice(0, 40)}`,
);

/** The default payer of injected transfers: any 20 bytes will do, logs need no keys. */
export const DEFAULT_EVM_PAYER = '0x7e57000000000000000000000000000000c0ffee';

/** Polygon's state receiver, the `to` of its state-sync transactions. */
const STATE_RECEIVER = '0x0000000000000000000000000000000000001001';
const ZERO_ADDRESS = `0x${'0'.repeat(40)}`;
/** Bor makes a state-sync transaction at the end of every sprint of 16 blocks that has one. */
const SPRINT = 16;
/** Default genesis: 2025-01-01T00:00:00Z (a fixed anchor keeps block numbers rising across runs). */
const DEFAULT_GENESIS_TIME = 1_735_689_600_000;

export interface EvmLog {
  /** The emitting contract, lower case as nodes answer. */
  address: string;
  topics: string[];
  data: string;
  /** False for a log the header's bloom leaves out (Polygon's state-sync logs). */
  inBloom: boolean;
}

export interface EvmTx {
  hash: string;
  from: string;
  to: string;
  value: bigint;
  input: string;
  /** 1: executed; 0: reverted (its logs are not kept). */
  status: 0 | 1;
  logs: EvmLog[];
  gasUsed: number;
  nonce: number;
}

/** A log as a block holds it: with the transaction and the block-wide index. */
export interface EvmBlockLog extends EvmLog {
  txHash: string;
  txIndex: number;
  logIndex: number;
}

export interface EvmBlock {
  number: number;
  hash: string;
  parentHash: string;
  /** Block time in ms (the header's `timestamp` is in seconds). */
  timeMs: number;
  txs: EvmTx[];
  logs: EvmBlockLog[];
  miner: string;
}

export interface EvmSimTransfer {
  /** Recipient (any case). */
  to: string;
  /** The on-chain integer, in the token's own decimals. */
  raw: bigint;
  /** The emitting contract (default: the network's first token); a look-alike emits the same log. */
  contract?: string;
  from?: string;
  /** A reverted call: in a block with status 0, no log. */
  failed?: boolean;
  /** In the first block at or after this time (ms); never in a block that is already sealed. */
  at?: number;
  /** Or in this block number (likewise at least the next block). */
  block?: number;
}

export interface EvmSimTransferResult {
  txHash: string;
  blockNumber: number;
  blockHash: string;
  blockTimeMs: number;
  /** The log's index in its block, or -1 for a reverted call. */
  logIndex: number;
  contract: string;
}

export interface EvmChainOptions {
  network: Readonly<Network>;
  /** A block every this many ms (default 1000). */
  blockIntervalMs?: number;
  /** Blocks between the latest and the finalized block (default 8); `safe` trails by half of it. */
  finalityLag?: number;
  /** Filler transactions per block: a number or an inclusive [min, max] range (default [4, 8]). */
  fillerPerBlock?: number | [number, number];
  now?: () => number;
  /** The time of block 0 (ms). */
  genesisTime?: number;
  seed?: number;
  /** Addresses that zero-value and look-alike spam also targets (as poisoners target payees). */
  poisonTargets?: string[];
}

/** `bytes` pseudo-random bytes as hex, four from each draw (blocks are made by the thousand in a catch-up read). */
function hexBytes(bytes: number, next: () => number): string {
  const buf = Buffer.allocUnsafe(bytes + 3);
  for (let i = 0; i < bytes; i += 4) buf.writeUInt32BE(Math.floor(next() * 4294967296), i);
  return buf.toString('hex', 0, bytes);
}

/** A 32-byte word of a value, without 0x. */
export function word(value: bigint): string {
  return value.toString(16).padStart(64, '0');
}

/** The topic that holds an address (lower case). */
function topicOf(address: string): string {
  return `0x${'0'.repeat(24)}${address.slice(2).toLowerCase()}`;
}

function transferLog(contract: string, from: string, to: string, raw: bigint, inBloom = true): EvmLog {
  return { address: contract, topics: [TRANSFER_TOPIC, topicOf(from), topicOf(to)], data: `0x${word(raw)}`, inBloom };
}

/**
 * The header's logsBloom of a block's logs (0x + 512 hex digits): computed when a header is served,
 * not for every block an eth_getLogs range passes.
 */
export function logsBloom(logs: readonly EvmBlockLog[]): string {
  const bloom = new Uint8Array(256);
  for (const log of logs) {
    if (!log.inBloom) continue;
    bloomAdd(bloom, log.address);
    for (const t of log.topics) bloomAdd(bloom, t);
  }
  return `0x${Buffer.from(bloom).toString('hex')}`;
}

function sha(text: string): string {
  return `0x${digest('sha256', text)}`;
}

export class EvmSimChain {
  readonly network: Readonly<Network>;
  readonly interval: number;
  readonly lag: number;
  private readonly filler: [number, number];
  private readonly now: () => number;
  private readonly genesisTime: number;
  private readonly seed: number;
  private readonly poison: string[];
  private readonly injected = new Map<number, EvmTx[]>();
  /** The first block each reorg replaced, in order: a block's branch is how many are at or below it. */
  private readonly forks: number[] = [];
  private readonly cache = new Map<string, EvmBlock>();
  private readonly hashIndex = new Map<string, number>();
  private counter = 0;

  constructor(options: EvmChainOptions) {
    if (options.network.family !== 'evm' || options.network.chainId === undefined) throw new Error(`${options.network.id} is not an EVM network`);
    this.network = options.network;
    this.interval = options.blockIntervalMs ?? 1000;
    this.lag = options.finalityLag ?? 8;
    const f = options.fillerPerBlock ?? [4, 8];
    this.filler = typeof f === 'number' ? [f, f] : f;
    this.now = options.now ?? (() => Date.now());
    this.genesisTime = options.genesisTime ?? DEFAULT_GENESIS_TIME;
    this.seed = options.seed ?? 1;
    this.poison = (options.poisonTargets ?? []).map((a) => a.toLowerCase());
  }

  get chainId(): number {
    return this.network.chainId!;
  }

  blockTime(n: number): number {
    return this.genesisTime + n * this.interval;
  }

  latest(): number {
    return Math.max(0, Math.floor((this.now() - this.genesisTime) / this.interval));
  }

  safe(): number {
    return Math.max(0, this.latest() - Math.ceil(this.lag / 2));
  }

  finalized(): number {
    return Math.max(0, this.latest() - this.lag);
  }

  /** The first block at or after `ms`. */
  blockAt(ms: number): number {
    return Math.max(0, Math.ceil((ms - this.genesisTime) / this.interval));
  }

  private branch(n: number): number {
    let b = 0;
    for (const f of this.forks) if (f <= n) b++;
    return b;
  }

  /** The hash of the block at height n on the current branch. */
  hashOf(n: number): string {
    return sha(`evm-block:${this.chainId}:${this.seed}:${n}:${this.branch(n)}`);
  }

  /** The number of the canonical block with this hash, if it is one (searched back over recent blocks). */
  numberOf(hash: string): number | undefined {
    const h = hash.toLowerCase();
    const latest = this.latest();
    const known = this.hashIndex.get(h);
    if (known !== undefined && known <= latest && this.hashOf(known) === h) return known;
    for (let n = latest; n >= 0 && n > latest - 4096; n--) if (this.hashOf(n) === h) return n;
    return undefined;
  }

  /** Block n, or undefined when it is not sealed yet. */
  block(n: number): EvmBlock | undefined {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.latest()) return undefined;
    return this.assemble(n);
  }

  private assemble(n: number): EvmBlock {
    const key = `${n}:${this.branch(n)}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const next = seededRandom((this.seed * 2_654_435_761) ^ (this.chainId * 40_503) ^ n ^ (this.branch(n) << 24));
    const txs = [...this.fillerTxs(n, next), ...(this.injected.get(n) ?? []), ...this.stateSync(n, next)];
    const logs: EvmBlockLog[] = [];
    txs.forEach((tx, txIndex) => {
      if (tx.status === 1) for (const log of tx.logs) logs.push({ ...log, txHash: tx.hash, txIndex, logIndex: logs.length });
    });
    const block: EvmBlock = {
      number: n,
      hash: this.hashOf(n),
      parentHash: n === 0 ? `0x${'0'.repeat(64)}` : this.hashOf(n - 1),
      timeMs: this.blockTime(n),
      txs,
      logs,
      miner: `0x${hexBytes(20, seededRandom(this.chainId ^ (n % 21)))}`,
    };
    if (this.cache.size >= 256) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, block);
    if (this.hashIndex.size >= 8192) this.hashIndex.delete(this.hashIndex.keys().next().value!);
    this.hashIndex.set(block.hash, n);
    return block;
  }

  /** Where a spam transfer goes: half the time one of the poisoning targets (when any), else `to`. */
  private spamTarget(to: string, next: () => number): string {
    return this.poison.length > 0 && next() < 0.5 ? this.poison[Math.floor(next() * this.poison.length)]! : to;
  }

  /** A random amount of a token in its own decimals: up to 5 000, with sub-micro digits half the time on 18 decimals. */
  private rawAmount(token: Readonly<Token>, next: () => number): bigint {
    const scale = 10n ** BigInt(token.decimals - 6);
    const micro = BigInt(Math.floor(next() * 5_000_000_000));
    return micro * scale + (scale > 1n && next() < 0.5 ? BigInt(Math.floor(next() * 1e12)) % scale : 0n);
  }

  private fillerTxs(n: number, next: () => number): EvmTx[] {
    const [lo, hi] = this.filler;
    const count = lo + Math.floor(next() * (hi - lo + 1));
    const tokens = this.network.tokens;
    const out: EvmTx[] = [];
    for (let i = 0; i < count; i++) {
      const hash = sha(`evm-tx:${this.chainId}:${this.seed}:${n}:${this.branch(n)}:${i}`);
      const from = `0x${hexBytes(20, next)}`;
      const to = `0x${hexBytes(20, next)}`;
      const token = tokens[Math.floor(next() * tokens.length)]!;
      const contract = token.contract.toLowerCase();
      const base = { hash, from, value: 0n, status: 1 as const, nonce: Math.floor(next() * 5000) };
      const r = next();
      if (r < 0.55) {
        const raw = this.rawAmount(token, next);
        out.push({
          ...base,
          to: contract,
          input: `0xa9059cbb${topicOf(to).slice(2)}${word(raw)}`,
          logs: [transferLog(contract, from, to, raw)],
          gasUsed: 46_109,
        });
      } else if (r < 0.7) {
        out.push({ ...base, to, value: BigInt(Math.floor(next() * 1e9)) * 10n ** 10n, input: '0x', logs: [], gasUsed: 21_000 });
      } else if (r < 0.78) {
        const raw = this.rawAmount(token, next);
        const log: EvmLog = { address: contract, topics: [APPROVAL_TOPIC, topicOf(from), topicOf(to)], data: `0x${word(raw)}`, inBloom: true };
        out.push({ ...base, to: contract, input: `0x095ea7b3${topicOf(to).slice(2)}${word(raw)}`, logs: [log], gasUsed: 46_364 });
      } else if (r < 0.85) {
        // Address poisoning: a zero-value transferFrom "from" a look-alike of a real sender (same first and last bytes).
        const lookalike = `${from.slice(0, 6)}${hexBytes(16, next)}${from.slice(-4)}`;
        const target = this.spamTarget(to, next);
        out.push({ ...base, to: contract, input: '0x23b872dd', logs: [transferLog(contract, lookalike, target, 0n)], gasUsed: 38_120 });
      } else if (r < 0.92) {
        const fake = FAKE_EVM_CONTRACTS[Math.floor(next() * FAKE_EVM_CONTRACTS.length)]!;
        const raw = this.rawAmount(token, next);
        out.push({ ...base, to: fake, input: '0xa9059cbb', logs: [transferLog(fake, from, this.spamTarget(to, next), raw)], gasUsed: 51_873 });
      } else if (r < 0.96) {
        // Two transfers of the token in one transaction (a payout batch, a swap route).
        const second = `0x${hexBytes(20, next)}`;
        const logs = [transferLog(contract, from, to, this.rawAmount(token, next)), transferLog(contract, to, second, this.rawAmount(token, next))];
        out.push({ ...base, to: `0x${hexBytes(20, next)}`, input: '0x5ae401dc', logs, gasUsed: 131_442 });
      } else {
        out.push({ ...base, to: contract, input: '0xa9059cbb', status: 0, logs: [], gasUsed: 29_655 });
      }
    }
    return out;
  }

  /** Polygon PoS: a bridge deposit minted at the end of a sprint, its log kept out of the header's bloom. */
  private stateSync(n: number, next: () => number): EvmTx[] {
    if (this.network.bloomHasEveryLog || n % SPRINT !== 0 || n === 0) return [];
    const token = this.network.tokens[0]!;
    const log = transferLog(token.contract.toLowerCase(), ZERO_ADDRESS, `0x${hexBytes(20, next)}`, this.rawAmount(token, next), false);
    const hash = sha(`evm-state-sync:${this.chainId}:${this.seed}:${n}:${this.branch(n)}`);
    return [{ hash, from: ZERO_ADDRESS, to: STATE_RECEIVER, value: 0n, input: '0x', status: 1, logs: [log], gasUsed: 0, nonce: 0 }];
  }

  /** Puts a token transfer (or a reverted call) into the next block, or the first one at or after `at`. */
  transfer(t: EvmSimTransfer): EvmSimTransferResult {
    const sealed = this.latest();
    const asked = t.block ?? (t.at !== undefined ? this.blockAt(t.at) : sealed + 1);
    const n = Math.max(asked, sealed + 1);
    const contract = (t.contract ?? this.network.tokens[0]!.contract).toLowerCase();
    const from = (t.from ?? DEFAULT_EVM_PAYER).toLowerCase();
    const to = t.to.toLowerCase();
    const hash = sha(`evm-inject:${this.chainId}:${this.seed}:${n}:${++this.counter}:${this.now()}`);
    const input = `0xa9059cbb${topicOf(to).slice(2)}${word(t.raw)}`;
    const tx: EvmTx = t.failed
      ? { hash, from, to: contract, value: 0n, input, status: 0, logs: [], gasUsed: 29_655, nonce: this.counter }
      : { hash, from, to: contract, value: 0n, input, status: 1, logs: [transferLog(contract, from, to, t.raw)], gasUsed: 46_109, nonce: this.counter };
    const list = this.injected.get(n) ?? [];
    list.push(tx);
    this.injected.set(n, list);
    this.cache.delete(`${n}:${this.branch(n)}`);
    const block = this.assemble(n);
    return {
      txHash: hash,
      blockNumber: n,
      blockHash: block.hash,
      blockTimeMs: block.timeMs,
      logIndex: block.logs.find((l) => l.txHash === hash)?.logIndex ?? -1,
      contract,
    };
  }

  /**
   * Replaces the last `depth` blocks with another branch. The injected transactions in them stay at
   * their heights (re-included in the new blocks) unless `drop`, which removes them as a reorg that
   * loses a transaction would. A finalized block is never replaced unless `pastFinality` says to
   * simulate a chain that breaks its own finality.
   */
  reorg(depth: number, options: { drop?: boolean; pastFinality?: boolean } = {}): { from: number; to: number; dropped: string[] } {
    const latest = this.latest();
    if (!Number.isSafeInteger(depth) || depth < 1 || depth > latest) throw new Error(`reorg depth must be a whole number from 1 to ${latest}`);
    if (depth > this.lag && options.pastFinality !== true) {
      throw new Error(
        `a reorg of ${depth} blocks would replace finalized blocks (finalized trails the latest by ${this.lag}); pass pastFinality to simulate a chain breaking its finality`,
      );
    }
    const from = latest - depth + 1;
    this.forks.push(from);
    const dropped: string[] = [];
    if (options.drop) {
      for (const [n, txs] of this.injected) {
        if (n < from || n > latest) continue;
        dropped.push(...txs.map((t) => t.hash));
        this.injected.delete(n);
      }
    }
    return { from, to: latest, dropped };
  }
}
