/**
 * The EVM reader: the pinned tokens' Transfer logs to the watched addresses, through one provider,
 * each checked before it counts. One `eth_getLogs` per range asks for every pinned contract of the
 * network, topic0 Transfer and the recipients as an OR-list of topic2 values (split when long); a
 * range the provider refuses as too large is halved and the cap it accepted is remembered for that
 * provider. A log counts only if its address is a pinned contract, topic0 is Transfer, it has exactly
 * 3 topics and 32 bytes of data, `removed` is not true, it lies in the range asked, its `blockHash` is
 * the hash of the provider's block at that number, that block's logsBloom (when it has one, on a
 * network whose bloom covers every log) holds its address and topics, and its recipient is watched; (network, tx hash, log index) is its key. Heads are evidence, checked before they are believed (`finalHead`).
 */
import { fromRaw } from '../scale.js';
import type { ChainHead, DroppedLog, FinalityRule, ReadResult, TransferReader, VerifiedTransfer } from '../family.js';
import { transferKey } from '../family.js';
import { tokenByContract, type Network } from '../networks.js';
import { addressTopic, parseEvmAddress, toChecksumAddress, topicAddress } from './address.js';
import { bloomHas, parseBloom } from './bloom.js';
import { RpcError, type EvmRpcClient } from './rpc.js';

/** keccak256("Transfer(address,address,uint256)"). */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const HEADER_BATCH = 20;
/** Recipient topics in one eth_getLogs unless the reader is told otherwise. */
export const DEFAULT_RECIPIENTS_PER_QUERY = 100;
/** The upper bound of a range read to the latest block (no block number reaches it). */
const ABOVE_ANY_BLOCK = 2n ** 64n;

/** Why a reader would not believe a provider's answer about the chain itself. */
export class ReadRefused extends Error {
  constructor(
    readonly reason: 'wrong_chain' | 'implausible_head' | 'malformed' | 'missing_block' | 'range_unreadable' | 'logs_refused',
    message: string,
  ) {
    super(message);
    this.name = 'ReadRefused';
  }
}

/** The largest block span each provider answered, learned from its refusals (shared by readers). */
export class RangeCaps {
  private readonly caps = new Map<string, bigint>();
  get(provider: string): bigint | undefined {
    return this.caps.get(provider);
  }
  learn(provider: string, span: bigint): void {
    const known = this.caps.get(provider);
    if (known === undefined || span < known) this.caps.set(provider, span < 1n ? 1n : span);
  }
  /** Forgets a provider's cap (it refused even one block: it has no range cap, it serves no logs). */
  forget(provider: string): void {
    this.caps.delete(provider);
  }
}

/**
 * A refusal of a one-block eth_getLogs that says the provider serves no logs at all, not a range
 * or result cap: public BSC nodes answer even one block with -32005 "limit exceeded". Result caps
 * ("more than 10000 results") are not this: those are read with fewer recipients per query.
 */
function refusesLogs(err: RpcError): boolean {
  const said = err.message.startsWith(`${err.provider}: `) ? err.message.slice(err.provider.length + 2) : err.message;
  return /limit exceeded/i.test(said) && !/results|logs|range/i.test(said);
}

export interface EvmReaderOptions {
  network: Readonly<Network>;
  rpc: EvmRpcClient;
  caps?: RangeCaps;
  /** The span asked before a provider has refused anything (default 2 000 blocks). */
  maxSpan?: bigint;
  /** Recipient topics in one query (default 100); more are split over several queries. */
  maxRecipientsPerQuery?: number;
  /** The operator's rule for "final" on this network (default: the registry's, `finalized`). */
  finality?: FinalityRule;
}

interface RawLog {
  address?: unknown;
  topics?: unknown;
  data?: unknown;
  blockNumber?: unknown;
  blockHash?: unknown;
  transactionHash?: unknown;
  logIndex?: unknown;
  removed?: unknown;
}

function quantity(value: unknown): bigint | undefined {
  return typeof value === 'string' && QUANTITY.test(value) ? BigInt(value) : undefined;
}

function hex(n: bigint): string {
  return `0x${n.toString(16)}`;
}

/** A block header as the reader needs it: a head, and its logsBloom when it has one. */
interface Header extends ChainHead {
  bloom: Uint8Array | undefined;
}

/** A block header as the reader needs it, or a refusal when the answer is not one. */
function parseHeader(raw: unknown, asked: string): Header {
  if (raw === null || raw === undefined) throw new ReadRefused('missing_block', `the provider has no block ${asked}`);
  const b = raw as { number?: unknown; hash?: unknown; timestamp?: unknown; logsBloom?: unknown };
  const number = quantity(b.number);
  const time = quantity(b.timestamp);
  if (number === undefined || time === undefined || typeof b.hash !== 'string' || !HASH32.test(b.hash)) {
    throw new ReadRefused('malformed', `block ${asked} is not a block header`);
  }
  return { number, hash: b.hash.toLowerCase(), timeMs: Number(time) * 1000, bloom: parseBloom(b.logsBloom) };
}

/** A head without the reader's own fields. */
function head(h: Header): ChainHead {
  return { number: h.number, hash: h.hash, timeMs: h.timeMs };
}

export class EvmReader implements TransferReader {
  private readonly caps: RangeCaps;
  private readonly contracts: string[];
  private lastFinal: ChainHead | undefined;
  /** The latest head read with the last final head accepted (evidence of how far the chain is). */
  latestAtFinal: ChainHead | undefined;

  constructor(private readonly options: EvmReaderOptions) {
    if (options.network.family !== 'evm') throw new Error(`${options.network.id} is not an EVM network`);
    this.caps = options.caps ?? new RangeCaps();
    this.contracts = options.network.tokens.map((t) => t.contract.toLowerCase());
  }

  get network(): Readonly<Network> {
    return this.options.network;
  }

  /** How many recipients one eth_getLogs asks for (more are split over several queries). */
  recipientsPerQuery(): number {
    return this.options.maxRecipientsPerQuery ?? DEFAULT_RECIPIENTS_PER_QUERY;
  }

  /** The span this reader asks of its provider now: the learned cap, or the default. */
  span(): bigint {
    const initial = this.options.maxSpan ?? 2000n;
    const cap = this.caps.get(this.options.rpc.name);
    return cap !== undefined && cap < initial ? cap : initial;
  }

  async checkNetwork(): Promise<void> {
    const id = quantity(await this.options.rpc.call('eth_chainId', []));
    if (id === undefined || id !== BigInt(this.options.network.chainId ?? -1)) {
      throw new ReadRefused(
        'wrong_chain',
        `${this.options.rpc.name} serves chain id ${id ?? '?'}, not ${this.options.network.id} (${this.options.network.chainId})`,
      );
    }
  }

  async latestHead(): Promise<ChainHead> {
    return head(parseHeader(await this.options.rpc.call('eth_getBlockByNumber', ['latest', false]), 'latest'));
  }

  async block(number: bigint): Promise<ChainHead> {
    return head(parseHeader(await this.options.rpc.call('eth_getBlockByNumber', [hex(number), false]), number.toString()));
  }

  /**
   * The head the finality rule names. A tag's block is read with `latest` in one batch and believed
   * only if it is not above the latest, trails it by the network's least finality lag, and does not
   * go back (or change its hash) from the last one this reader accepted.
   */
  async finalHead(): Promise<ChainHead> {
    const rule = this.options.finality ?? this.options.network.finality;
    if (rule.kind === 'confirmations') {
      const latest = await this.latestHead();
      const number = latest.number - BigInt(rule.blocks);
      return this.accept(number < 0n ? await this.block(0n) : await this.block(number), latest);
    }
    const [tagged, latestRaw] = await this.options.rpc.batch([
      { method: 'eth_getBlockByNumber', params: [rule.tag, false] },
      { method: 'eth_getBlockByNumber', params: ['latest', false] },
    ]);
    const tag = head(parseHeader(tagged, rule.tag));
    const latest = head(parseHeader(latestRaw, 'latest'));
    const minLag = BigInt(this.options.network.minFinalityLagBlocks);
    if (tag.number > latest.number) {
      throw new ReadRefused('implausible_head', `${rule.tag} block ${tag.number} is above the latest block ${latest.number}`);
    }
    if (rule.tag === 'finalized' && latest.number - tag.number < minLag && !(latest.number < minLag && tag.number === 0n)) {
      throw new ReadRefused(
        'implausible_head',
        `finalized block ${tag.number} is ${latest.number - tag.number} blocks behind the latest (${latest.number}); ${this.options.network.id} finalizes at least ${minLag} behind`,
      );
    }
    return this.accept(tag, latest);
  }

  private accept(head: ChainHead, latest: ChainHead): ChainHead {
    const last = this.lastFinal;
    if (last && (head.number < last.number || (head.number === last.number && head.hash !== last.hash))) {
      throw new ReadRefused(
        'implausible_head',
        `final block went back from ${last.number} (${last.hash}) to ${head.number} (${head.hash}); latest ${latest.number}`,
      );
    }
    this.lastFinal = head;
    this.latestAtFinal = latest;
    return head;
  }

  /**
   * `to: 'latest'` asks for the logs up to the provider's latest block in one query per recipient
   * group (what a watcher polls for transfers not final yet); a provider that refuses that range is
   * asked for its latest head and read in spans as usual.
   */
  async readTransfers(range: { from: bigint; to: bigint | 'latest'; recipients: readonly string[]; finalAtOrBelow: bigint }): Promise<ReadResult> {
    const watched = new Map<string, string>();
    for (const r of range.recipients) {
      const parsed = parseEvmAddress(r);
      if (!parsed.ok) throw new Error(`watched address ${r}: ${parsed.error}`);
      watched.set(parsed.address.toLowerCase(), parsed.address);
    }
    const dropped: DroppedLog[] = [];
    let to = range.to;
    if (watched.size === 0 || (to !== 'latest' && to < range.from)) return { transfers: [], dropped, complete: true };
    const topics = [...watched.keys()].map((a) => addressTopic(a));
    const perQuery = this.recipientsPerQuery();
    const logs: RawLog[] = [];
    for (let i = 0; i < topics.length; i += perQuery) {
      const part = topics.slice(i, i + perQuery);
      if (to === 'latest') {
        try {
          logs.push(...(await this.getLogs(range.from, 'latest', part)));
          continue;
        } catch (err) {
          if (!(err instanceof RpcError) || err.kind !== 'range') throw err;
          to = (await this.latestHead()).number;
        }
      }
      logs.push(...(await this.logsInRange(range.from, to, part)));
    }
    const bounds = { from: range.from, to: to === 'latest' ? ABOVE_ANY_BLOCK : to };
    const candidates: Array<Omit<VerifiedTransfer, 'blockTimeMs' | 'finality'> & { items: string[] }> = [];
    const keys = new Set<string>();
    for (const log of logs) {
      const checked = this.check(log, bounds, watched);
      if ('reason' in checked) {
        dropped.push(checked);
        continue;
      }
      const key = transferKey(checked);
      if (keys.has(key)) {
        dropped.push({ reason: 'duplicate', txHash: checked.txHash, logIndex: checked.logIndex, blockNumber: checked.blockNumber });
        continue;
      }
      keys.add(key);
      candidates.push({ ...checked, items: [String(log.address), ...(log.topics as string[])] });
    }
    const headers = await this.headers([...new Set(candidates.map((c) => c.blockNumber))]);
    let complete = true;
    const transfers: VerifiedTransfer[] = [];
    for (const { items, ...c } of candidates) {
      const header = headers.get(c.blockNumber);
      const where = { txHash: c.txHash, logIndex: c.logIndex, blockNumber: c.blockNumber };
      if (!header || header.hash !== c.blockHash) {
        // The provider's block at that height is another one: the log is from a block that is no
        // longer (or not yet) canonical there. The range must be read again before anything moves.
        dropped.push({ reason: 'not_canonical', ...where });
        complete = false;
        continue;
      }
      const bloom = this.options.network.bloomHasEveryLog ? header.bloom : undefined;
      if (bloom && !items.every((item) => bloomHas(bloom, item))) {
        // The block's own bloom says it holds no such log: a log made up in a real block.
        dropped.push({ reason: 'not_in_bloom', ...where });
        complete = false;
        continue;
      }
      transfers.push({ ...c, blockTimeMs: header.timeMs, finality: c.blockNumber <= range.finalAtOrBelow ? 'final' : 'seen' });
    }
    transfers.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
    return { transfers, dropped, complete };
  }

  async recheck(transfers: readonly VerifiedTransfer[]): Promise<{ canonical: VerifiedTransfer[]; reorged: VerifiedTransfer[] }> {
    const headers = await this.headers([...new Set(transfers.map((t) => t.blockNumber))]);
    const canonical: VerifiedTransfer[] = [];
    const reorged: VerifiedTransfer[] = [];
    // A block that is gone (the chain is shorter now) is as reorged as one with another hash.
    for (const t of transfers) (headers.get(t.blockNumber)?.hash === t.blockHash.toLowerCase() ? canonical : reorged).push(t);
    return { canonical, reorged };
  }

  /** Headers by number, read in batches; a number the provider has no block at is left out. */
  private async headers(numbers: bigint[]): Promise<Map<bigint, Header>> {
    const out = new Map<bigint, Header>();
    for (let i = 0; i < numbers.length; i += HEADER_BATCH) {
      const part = numbers.slice(i, i + HEADER_BATCH);
      const answers = await this.options.rpc.batch(part.map((n) => ({ method: 'eth_getBlockByNumber', params: [hex(n), false] })));
      part.forEach((n, j) => {
        if (answers[j] === null) return;
        const header = parseHeader(answers[j], n.toString());
        if (header.number !== n) throw new ReadRefused('malformed', `asked for block ${n}, got ${header.number}`);
        out.set(n, header);
      });
    }
    return out;
  }

  /**
   * The logs of [from, to] for some recipient topics, in spans the provider accepts. A refusal as too
   * large halves the span (and the provider's remembered cap); at one block, the recipients are
   * halved instead; one block and one recipient still refused cannot be read. One block refused
   * with "limit exceeded" (public BSC nodes) is no cap: the provider serves no eth_getLogs
   * (ReadRefused `logs_refused`), said at once instead of asking again with fewer recipients.
   */
  private async logsInRange(from: bigint, to: bigint, topics: string[]): Promise<RawLog[]> {
    const out: RawLog[] = [];
    let start = from;
    while (start <= to) {
      const span = this.span();
      const end = start + span - 1n < to ? start + span - 1n : to;
      try {
        out.push(...(await this.getLogs(start, end, topics)));
        start = end + 1n;
      } catch (err) {
        if (!(err instanceof RpcError) || err.kind !== 'range') throw err;
        const width = end - start + 1n;
        if (width > 1n) {
          this.caps.learn(this.options.rpc.name, width / 2n);
          continue;
        }
        if (refusesLogs(err)) {
          this.caps.forget(this.options.rpc.name);
          throw new ReadRefused('logs_refused', `${this.options.rpc.name} does not serve eth_getLogs (it refuses even block ${start} alone: ${err.message})`);
        }
        if (topics.length === 1)
          throw new ReadRefused('range_unreadable', `${this.options.rpc.name} refuses the logs of block ${start} for one address: ${err.message}`);
        const half = Math.ceil(topics.length / 2);
        out.push(...(await this.logsInRange(start, end, topics.slice(0, half))), ...(await this.logsInRange(start, end, topics.slice(half))));
        start = end + 1n;
      }
    }
    return out;
  }

  private async getLogs(from: bigint, to: bigint | 'latest', topics: string[]): Promise<RawLog[]> {
    const filter = { fromBlock: hex(from), toBlock: to === 'latest' ? to : hex(to), address: this.contracts, topics: [TRANSFER_TOPIC, null, topics] };
    const result = await this.options.rpc.call('eth_getLogs', [filter]);
    if (!Array.isArray(result)) throw new ReadRefused('malformed', `eth_getLogs answered ${typeof result}, not a list`);
    return result as RawLog[];
  }

  /** One log's checks, in order; the first that fails names the reason. */
  private check(
    log: RawLog,
    range: { from: bigint; to: bigint },
    watched: Map<string, string>,
  ): Omit<VerifiedTransfer, 'blockTimeMs' | 'finality'> | DroppedLog {
    const network = this.options.network;
    const txHash = typeof log.transactionHash === 'string' && HASH32.test(log.transactionHash) ? log.transactionHash.toLowerCase() : undefined;
    const logIndex = quantity(log.logIndex);
    const blockNumber = quantity(log.blockNumber);
    const where = { txHash, logIndex: logIndex === undefined ? undefined : Number(logIndex), blockNumber };
    if (typeof log.address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(log.address)) return { reason: 'malformed', ...where };
    const token = tokenByContract(network, log.address);
    if (!token) return { reason: 'other_contract', ...where };
    const topics = log.topics;
    if (!Array.isArray(topics) || !topics.every((t) => typeof t === 'string' && HASH32.test(t))) return { reason: 'malformed', ...where };
    if (topics.length === 0 || topics[0].toLowerCase() !== TRANSFER_TOPIC) return { reason: 'not_transfer', ...where };
    if (topics.length !== 3) return { reason: 'topic_count', ...where };
    if (typeof log.data !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(log.data)) return { reason: 'data_length', ...where };
    if (log.removed === true) return { reason: 'removed', ...where };
    if (txHash === undefined || logIndex === undefined || blockNumber === undefined || typeof log.blockHash !== 'string' || !HASH32.test(log.blockHash)) {
      return { reason: 'malformed', ...where };
    }
    if (blockNumber < range.from || blockNumber > range.to) return { reason: 'outside_range', ...where };
    const from = topicAddress(topics[1] as string);
    const to = topicAddress(topics[2] as string);
    if (from === undefined || to === undefined) return { reason: 'malformed', ...where };
    if (!watched.has(to.toLowerCase())) return { reason: 'not_watched', ...where };
    const raw = BigInt(log.data);
    return {
      network: network.id,
      token: token.symbol,
      contract: toChecksumAddress(token.contract),
      from,
      to,
      raw,
      amount: fromRaw(raw, token.decimals),
      txHash,
      logIndex: Number(logIndex),
      blockNumber,
      blockHash: log.blockHash.toLowerCase(),
    };
  }
}
