/**
 * A simulated TRON node: a real HTTP server on loopback that answers the java-tron HTTP API the
 * chain watcher reads, with java-tron's shapes, a chain that grows with the clock, solidification
 * lagging the head, realistic filler traffic in every block, payments injected on demand and
 * faults injected on demand. It is product code so that `gatewayd dev` and the test suite share
 * one stand-in; nothing in the gateway's serving path imports it.
 *
 * Served (GET with query parameters or POST with a JSON body, as java-tron accepts both):
 *   /wallet/getnowblock, /walletsolidity/getnowblock            the head / the solidified head block
 *   /wallet[solidity]/gettransactioninfobyblocknum {"num": n}   every TransactionInfo of block n
 *   /wallet[solidity]/getblockbynum {"num": n}                  block n with its transactions
 *   /wallet[solidity]/gettransactioninfobyid {"value": txid}    one TransactionInfo
 * A solidity endpoint answers `[]` / `{}` for a block above the solidified head, as java-tron does.
 *
 * The chain is a function of time: block n has the timestamp
 *   genesisTime + (n - genesisBlock) * blockIntervalMs
 * and the head is the newest block whose timestamp is not in the future of `now()`. With the real
 * clock a block appears every `blockIntervalMs`; with a test's manual clock blocks appear as the
 * test moves time. Filler transactions are derived from (seed, block number), so a block reads
 * the same every time (unless a fault says otherwise) and memory stays flat over any range.
 *
 * Control, in process: the object `startSimulatedTron` returns. Control from another process:
 *   POST /_sim/transfer  {"to": "T...", "amount": "41.677389" | 41677389, "from"?, "contract"?,
 *                         "result"?: "SUCCESS"|"FAILED"|"REVERT", "at"?: ms | ISO, "block"?: n}
 *                        -> {"tx_id", "block_number", "block_timestamp", "log_index"}
 *   POST /_sim/fault     {"endpoint": "blockinfo"|..., "fault": {...}, "times"?: n}
 *   POST /_sim/clear-faults
 *   GET  /_sim/state     -> {"head", "solid_head", "requests": {...}, "bytes": {...}}
 */
import { seededRandom } from '../lib/seeded-random.js';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { parseAmount } from '../lib/amounts.js';
import { NETWORKS, tronAddressToHex } from '../lib/tron.js';

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const APPROVAL_TOPIC = '8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';
/** Tokens deployed with the USDT symbol and name (fake USDT). */
export const FAKE_USDT_CONTRACTS = ['TJCDneQevgfGFkU1rpCxVofksbeiGLhMCi', 'TVvHYiz294Q1ZeTjRTWTczJJjVz9yS8FEP', 'TJXMm2zHg2FpTEAWSmn7JAzfjji6XuMWPy'];
const WITNESS = '41e7860196ad5b5718c1d6326babab039b70b8c1cd';

/** The endpoints, as named by fault injection and request counts. */
export type SimEndpoint = 'nowblock' | 'wallet_nowblock' | 'blockinfo' | 'wallet_blockinfo' | 'block' | 'wallet_block' | 'txinfo' | 'wallet_txinfo';
const ENDPOINTS: Record<string, SimEndpoint> = {
  '/walletsolidity/getnowblock': 'nowblock',
  '/wallet/getnowblock': 'wallet_nowblock',
  '/walletsolidity/gettransactioninfobyblocknum': 'blockinfo',
  '/wallet/gettransactioninfobyblocknum': 'wallet_blockinfo',
  '/walletsolidity/getblockbynum': 'block',
  '/wallet/getblockbynum': 'wallet_block',
  '/walletsolidity/gettransactioninfobyid': 'txinfo',
  '/wallet/gettransactioninfobyid': 'wallet_txinfo',
};

/**
 * A queued fault for the next request(s) to an endpoint:
 * - status: any HTTP answer (429 with TronGrid's body, 5xx, 401...);
 * - raw: a 200 whose body is not the JSON asked for (an HTML error page, truncated JSON);
 * - hang: no answer at all (the connection stays open until the node closes);
 * - inconsistent: the block's transaction infos come back altered (one watched transfer's log
 *   dropped, or the whole answer mutated), as a lagging or lying provider might.
 */
export type SimFault =
  { status: number; body?: string | Record<string, unknown>; headers?: Record<string, string> } | { raw: string } | { hang: true } | { inconsistent: true };

export interface SimTransfer {
  /** Recipient (base58). */
  to: string;
  /** Micro-units as a bigint or an integer number, or USDT as a decimal string such as "41.677389". */
  amount: bigint | number | string;
  from?: string;
  /** Emitting token contract (base58); default USDT. A fake token's log has the same topic. */
  contract?: string;
  /** SUCCESS (default) or a failed execution: FAILED = out of energy, REVERT = reverted call. No log either way. */
  result?: 'SUCCESS' | 'FAILED' | 'REVERT';
  /** The transfer lands in the first block at or after this time (ms); default: the next block. */
  at?: number;
  /** Or in this block number. */
  block?: number;
  txId?: string;
}

export interface SimTransferResult {
  txId: string;
  blockNumber: number;
  blockTimestamp: number;
  /** Index of its log in the transaction's `log` array (0), or -1 when it has none. */
  logIndex: number;
}

export interface SimulatedTronOptions {
  /** The chain's USDT contract (base58): the token of filler and injected transfers. Default mainnet's; `gatewayd dev` uses the devnet's, a Nile stand-in Nile's. */
  usdtContract?: string;
  /** Block interval (ms), default 3000 (mainnet). */
  blockIntervalMs?: number;
  /** Blocks between the head and the solidified head, default 19 (mainnet). */
  solidityLag?: number;
  /** Filler transactions per block: a number or an inclusive [min, max] range. Default [4, 8]; mainnet carries 200-400. */
  fillerPerBlock?: number | [number, number];
  /** Clock; default Date.now. */
  now?: () => number;
  /** A block number and its timestamp that anchor the chain; default mainnet's block 69 316 562 at 1738601505000. */
  genesisBlock?: number;
  genesisTime?: number;
  /** Seed of the filler (the same seed gives the same chain). */
  seed?: number;
  /** Addresses that filler poisoning (zero-value and lookalike transfers) also targets. */
  poisonTargets?: string[];
  /** Listen port on 127.0.0.1; default 0 (any free port). */
  port?: number;
  /** Serve the /_sim control endpoints (default true). */
  control?: boolean;
}

export interface SimRequest {
  endpoint: SimEndpoint | 'control' | 'unknown';
  path: string;
  body: string;
  headers: IncomingMessage['headers'];
  /** Bytes sent on the wire (after compression when the client asked for it). */
  bytes: number;
}

interface Tx {
  info: Record<string, unknown>;
  body: Record<string, unknown>;
}

export interface SimulatedTron {
  readonly url: string;
  readonly requests: SimRequest[];
  /** Injects a transfer (or a failed call) into a block; returns where it landed. */
  transfer(t: SimTransfer): SimTransferResult;
  /**
   * Injects a transaction with a hand-made TransactionInfo (any logs, receipt, result), for attack
   * cases the transfer() shapes do not cover; id, blockNumber and blockTimeStamp are filled in
   * unless given.
   */
  injectInfo(o: { info: Record<string, unknown>; at?: number; block?: number }): SimTransferResult;
  /** Queues `fault` for the next `times` requests to `endpoint` ('*' = any endpoint). */
  fail(endpoint: SimEndpoint | '*', fault: SimFault, times?: number): void;
  clearFaults(): void;
  /** The head and the solidified head block numbers and timestamps now. */
  head(): { number: number; timestamp: number };
  solidHead(): { number: number; timestamp: number };
  /** Number and timestamp of the first block at or after `ms`. */
  blockAt(ms: number): { number: number; timestamp: number };
  blockTime(n: number): number;
  /** The TransactionInfo list of block n as the node serves it (without faults). */
  blockInfos(n: number): Record<string, unknown>[];
  /** Requests seen, optionally for one endpoint. */
  count(endpoint?: SimEndpoint): number;
  bytes(endpoint?: SimEndpoint): number;
  resetCounts(): void;
  /** Stops or resumes answering on the loopback port (a provider going down and back). */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

function hex(bytes: number, next: () => number): string {
  let out = '';
  for (let i = 0; i < bytes; i++)
    out += Math.floor(next() * 256)
      .toString(16)
      .padStart(2, '0');
  return out;
}

function word(hex41: string): string {
  return `000000000000000000000000${hex41.slice(2)}`;
}

function toHex41(address: string): string {
  const h = /^41[0-9a-f]{40}$/i.test(address) ? address.toLowerCase() : tronAddressToHex(address);
  if (!h) throw new Error(`not a TRON address: ${address}`);
  return h;
}

function toMicro(amount: bigint | number | string): bigint {
  if (typeof amount === 'bigint') return amount;
  if (typeof amount === 'number') return BigInt(amount);
  const micro = parseAmount(amount);
  if (micro === undefined) throw new Error(`not an amount: ${amount}`);
  return micro;
}

/** A lookalike of `hex41`: the same first and last bytes (what a poisoner generates). */
function lookalike(hex41: string, next: () => number): string {
  return `${hex41.slice(0, 10)}${hex(14, next)}${hex41.slice(38)}`;
}

function txId(seed: number, block: number, i: number): string {
  return createHash('sha256').update(`${seed}:${block}:${i}`).digest('hex');
}

/** The TransactionInfo and transaction body of a TRC20 transfer call, successful or failed. */
function trc20Tx(o: {
  id: string;
  block: number;
  ts: number;
  fromHex: string;
  toHex: string;
  contractHex: string;
  amount: bigint;
  result: 'SUCCESS' | 'FAILED' | 'REVERT';
  topic?: string;
}): Tx {
  const amountWord = o.amount.toString(16).padStart(64, '0');
  const info: Record<string, unknown> = {
    id: o.id,
    fee: o.result === 'SUCCESS' ? 13_844_850 : 16_500_120,
    blockNumber: o.block,
    blockTimeStamp: o.ts,
    // USDT's transfer() returns false even on success: contractResult is all zeros.
    contractResult: [o.result === 'SUCCESS' ? '0'.repeat(64) : ''],
    contract_address: o.contractHex,
  };
  if (o.result === 'SUCCESS') {
    info.receipt = { energy_fee: 13_500_000, energy_usage_total: 64_285, net_usage: 345, result: 'SUCCESS', energy_penalty_total: 49_635 };
    info.log = [{ address: o.contractHex.slice(2), topics: [o.topic ?? TRANSFER_TOPIC, word(o.fromHex), word(o.toHex)], data: amountWord }];
  } else if (o.result === 'FAILED') {
    info.receipt = { energy_fee: 16_500_120, energy_usage_total: 78_572, net_usage: 345, result: 'OUT_OF_ENERGY', energy_penalty_total: 25_905 };
    info.result = 'FAILED';
    info.resMessage = Buffer.from("Not enough energy for 'SSTORE' operation executing").toString('hex');
  } else {
    info.receipt = { energy_fee: 3_100_000, energy_usage_total: 14_651, net_usage: 345, result: 'REVERT' };
    info.result = 'FAILED';
    info.resMessage = '08c379a0';
  }
  const body = {
    ret: [{ contractRet: o.result === 'SUCCESS' ? 'SUCCESS' : o.result === 'REVERT' ? 'REVERT' : 'OUT_OF_ENERGY' }],
    signature: ['0'.repeat(130)],
    txID: o.id,
    raw_data: {
      contract: [
        {
          parameter: {
            value: { data: `a9059cbb${word(o.toHex)}${amountWord}`, owner_address: o.fromHex, contract_address: o.contractHex },
            type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
          },
          type: 'TriggerSmartContract',
        },
      ],
      ref_block_bytes: (o.block & 0xffff).toString(16).padStart(4, '0'),
      ref_block_hash: o.id.slice(0, 16),
      expiration: o.ts + 60_000,
      fee_limit: 100_000_000,
      timestamp: o.ts - 2_000,
    },
  };
  return { info, body };
}

/** A TRX transfer: its TransactionInfo has no log and no receipt.result. */
function trxTx(o: { id: string; block: number; ts: number; fromHex: string; toHex: string; amount: number }): Tx {
  return {
    info: { id: o.id, blockNumber: o.block, blockTimeStamp: o.ts, contractResult: [''], receipt: { net_usage: 268 } },
    body: {
      ret: [{ contractRet: 'SUCCESS' }],
      signature: ['0'.repeat(130)],
      txID: o.id,
      raw_data: {
        contract: [
          {
            parameter: {
              value: { amount: o.amount, owner_address: o.fromHex, to_address: o.toHex },
              type_url: 'type.googleapis.com/protocol.TransferContract',
            },
            type: 'TransferContract',
          },
        ],
        ref_block_bytes: (o.block & 0xffff).toString(16).padStart(4, '0'),
        ref_block_hash: o.id.slice(0, 16),
        expiration: o.ts + 60_000,
        timestamp: o.ts - 2_000,
      },
    },
  };
}

class Node implements SimulatedTron {
  readonly requests: SimRequest[] = [];
  url = '';
  private readonly interval: number;
  private readonly lag: number;
  private readonly filler: [number, number];
  private readonly now: () => number;
  private readonly genesisBlock: number;
  private readonly genesisTime: number;
  private readonly seed: number;
  private readonly poisonHex: string[];
  private readonly usdtHex: string;
  private readonly injected = new Map<number, Tx[]>();
  private readonly cache = new Map<number, Tx[]>();
  private readonly faults = new Map<string, SimFault[]>();
  private readonly hung = new Set<ServerResponse>();
  private down = false;
  private counter = 0;
  server!: Server;

  constructor(private readonly options: SimulatedTronOptions) {
    this.interval = options.blockIntervalMs ?? 3000;
    this.lag = options.solidityLag ?? 19;
    const f = options.fillerPerBlock ?? [4, 8];
    this.filler = typeof f === 'number' ? [f, f] : f;
    this.now = options.now ?? (() => Date.now());
    this.genesisBlock = options.genesisBlock ?? 69_316_562;
    this.genesisTime = options.genesisTime ?? 1_738_601_505_000;
    this.seed = options.seed ?? 1;
    this.poisonHex = (options.poisonTargets ?? []).map(toHex41);
    this.usdtHex = toHex41(options.usdtContract ?? NETWORKS.mainnet.usdtContract);
  }

  blockTime(n: number): number {
    return this.genesisTime + (n - this.genesisBlock) * this.interval;
  }

  head() {
    const number = this.genesisBlock + Math.floor((this.now() - this.genesisTime) / this.interval);
    return { number, timestamp: this.blockTime(number) };
  }

  solidHead() {
    const number = this.head().number - this.lag;
    return { number, timestamp: this.blockTime(number) };
  }

  blockAt(ms: number) {
    const number = this.genesisBlock + Math.ceil((ms - this.genesisTime) / this.interval);
    return { number, timestamp: this.blockTime(number) };
  }

  transfer(t: SimTransfer): SimTransferResult {
    const block = t.block ?? (t.at !== undefined ? this.blockAt(t.at).number : this.head().number + 1);
    const ts = this.blockTime(block);
    const id = t.txId ?? createHash('sha256').update(`inject:${this.seed}:${block}:${++this.counter}:${this.now()}`).digest('hex');
    const result = t.result ?? 'SUCCESS';
    const tx = trc20Tx({
      id,
      block,
      ts,
      fromHex: toHex41(t.from ?? 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre'),
      toHex: toHex41(t.to),
      contractHex: t.contract === undefined ? this.usdtHex : toHex41(t.contract),
      amount: toMicro(t.amount),
      result,
    });
    const list = this.injected.get(block) ?? [];
    list.push(tx);
    this.injected.set(block, list);
    this.cache.delete(block);
    return { txId: id, blockNumber: block, blockTimestamp: ts, logIndex: result === 'SUCCESS' ? 0 : -1 };
  }

  injectInfo(o: { info: Record<string, unknown>; at?: number; block?: number }): SimTransferResult {
    const block = o.block ?? (o.at !== undefined ? this.blockAt(o.at).number : this.head().number + 1);
    const ts = this.blockTime(block);
    const id = (o.info.id as string | undefined) ?? createHash('sha256').update(`inject:${this.seed}:${block}:${++this.counter}:${this.now()}`).digest('hex');
    const info = { id, blockNumber: block, blockTimeStamp: ts, ...o.info };
    const list = this.injected.get(block) ?? [];
    list.push({ info, body: { ret: [{ contractRet: 'SUCCESS' }], txID: id, raw_data: { contract: [], timestamp: ts - 2000 } } });
    this.injected.set(block, list);
    this.cache.delete(block);
    return { txId: id, blockNumber: block, blockTimestamp: ts, logIndex: 0 };
  }

  /** Where a spam transfer goes: half the time one of the poisoning targets (when any), else `toHex`. */
  private spamTarget(toHex: string, next: () => number): string {
    return this.poisonHex.length > 0 && next() < 0.5 ? this.poisonHex[Math.floor(next() * this.poisonHex.length)]! : toHex;
  }

  /** The transactions of block n: deterministic filler with the injected transactions spread among them. */
  private txs(n: number): Tx[] {
    const cached = this.cache.get(n);
    if (cached) return cached;
    const next = seededRandom((this.seed * 2_654_435_761) ^ n);
    const ts = this.blockTime(n);
    const [lo, hi] = this.filler;
    const count = lo + Math.floor(next() * (hi - lo + 1));
    const out: Tx[] = [];
    for (let i = 0; i < count; i++) {
      const id = txId(this.seed, n, i);
      const r = next();
      const fromHex = `41${hex(20, next)}`;
      const toHex = `41${hex(20, next)}`;
      if (r < 0.6) {
        // USDT between strangers.
        out.push(
          trc20Tx({ id, block: n, ts, fromHex, toHex, contractHex: this.usdtHex, amount: BigInt(Math.floor(next() * 5_000_000_000)), result: 'SUCCESS' }),
        );
      } else if (r < 0.8) {
        out.push(trxTx({ id, block: n, ts, fromHex, toHex, amount: Math.floor(next() * 1e9) }));
      } else if (r < 0.86) {
        out.push(
          trc20Tx({
            id,
            block: n,
            ts,
            fromHex,
            toHex,
            contractHex: this.usdtHex,
            amount: BigInt(Math.floor(next() * 1e8)),
            result: next() < 0.5 ? 'REVERT' : 'FAILED',
          }),
        );
      } else if (r < 0.94) {
        // Poisoning: a zero-value USDT transfer from a lookalike of a real sender.
        const target = this.spamTarget(toHex, next);
        out.push(trc20Tx({ id, block: n, ts, fromHex: lookalike(fromHex, next), toHex: target, contractHex: this.usdtHex, amount: 0n, result: 'SUCCESS' }));
      } else {
        // A fake "USDT" token's Transfer log (same topic, another contract), sometimes an Approval.
        const fake = toHex41(FAKE_USDT_CONTRACTS[Math.floor(next() * FAKE_USDT_CONTRACTS.length)]!);
        const target = this.spamTarget(toHex, next);
        out.push(
          trc20Tx({
            id,
            block: n,
            ts,
            fromHex,
            toHex: target,
            contractHex: fake,
            amount: BigInt(Math.floor(next() * 1e8)),
            result: 'SUCCESS',
            topic: next() < 0.2 ? APPROVAL_TOPIC : undefined,
          }),
        );
      }
    }
    const injected = this.injected.get(n) ?? [];
    injected.forEach((tx, k) => out.splice(Math.min(out.length, Math.floor(((k + 1) * out.length) / (injected.length + 1))), 0, tx));
    if (this.cache.size >= 64) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(n, out);
    return out;
  }

  blockInfos(n: number): Record<string, unknown>[] {
    return this.txs(n).map((t) => t.info);
  }

  private block(n: number): Record<string, unknown> {
    const txs = this.txs(n);
    const id = createHash('sha256').update(`block:${this.seed}:${n}`).digest('hex');
    const parent = createHash('sha256')
      .update(`block:${this.seed}:${n - 1}`)
      .digest('hex');
    const block: Record<string, unknown> = {
      blockID: `${n.toString(16).padStart(16, '0')}${id.slice(16)}`,
      block_header: {
        raw_data: {
          number: n,
          txTrieRoot: id,
          witness_address: WITNESS,
          parentHash: `${(n - 1).toString(16).padStart(16, '0')}${parent.slice(16)}`,
          version: 32,
          timestamp: this.blockTime(n),
        },
        witness_signature: '0'.repeat(130),
      },
    };
    if (txs.length > 0) block.transactions = txs.map((t) => t.body);
    return block;
  }

  fail(endpoint: SimEndpoint | '*', fault: SimFault, times = 1): void {
    const list = this.faults.get(endpoint) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.faults.set(endpoint, list);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  count(endpoint?: SimEndpoint): number {
    return endpoint ? this.requests.filter((r) => r.endpoint === endpoint).length : this.requests.filter((r) => r.endpoint !== 'control').length;
  }

  bytes(endpoint?: SimEndpoint): number {
    return this.requests.filter((r) => (endpoint ? r.endpoint === endpoint : r.endpoint !== 'control')).reduce((sum, r) => sum + r.bytes, 0);
  }

  resetCounts(): void {
    this.requests.length = 0;
  }

  setDown(down: boolean): void {
    this.down = down;
    if (down) this.server.closeAllConnections();
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.down) {
      req.socket.destroy();
      return;
    }
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://sim');
    const path = url.pathname.replace(/\/+$/, '');
    const seen: SimRequest = { endpoint: 'unknown', path, body: raw, headers: req.headers, bytes: 0 };
    this.requests.push(seen);
    if (this.requests.length > 50_000) this.requests.splice(0, 25_000); // bounded for a long-running dev node
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const reply = (status: number, text: string, headers: Record<string, string> = {}): void => {
      const compress = gzip && text.length > 1024;
      const buf = compress ? gzipSync(text, { level: 1 }) : Buffer.from(text);
      const h: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...headers };
      if (compress) h['content-encoding'] = 'gzip';
      seen.bytes = buf.length;
      res.writeHead(status, h);
      res.end(buf);
    };
    const json = (value: unknown): void => reply(200, JSON.stringify(value));

    if (path.startsWith('/_sim/') && this.options.control !== false) {
      seen.endpoint = 'control';
      return this.control(path, req.method ?? 'GET', raw, json, reply);
    }
    const endpoint = ENDPOINTS[path];
    if (!endpoint) return reply(404, JSON.stringify({ Error: 'not found' }));
    seen.endpoint = endpoint;
    const fault = this.faults.get(endpoint)?.shift() ?? this.faults.get('*')?.shift();
    if (fault && !('inconsistent' in fault)) {
      if ('hang' in fault) {
        this.hung.add(res);
        return;
      }
      if ('raw' in fault) return reply(200, fault.raw, { 'content-type': fault.raw.startsWith('<') ? 'text/html' : 'application/json' });
      return reply(fault.status, typeof fault.body === 'string' ? fault.body : fault.body === undefined ? '' : JSON.stringify(fault.body), fault.headers);
    }
    const params = parseParams(req.method ?? 'GET', url, raw);
    if (params === undefined) return json({ Error: 'class org.tron.core.services.http.JsonFormat$ParseException : 1:1: Expected "{".' });
    const solid = endpoint.startsWith('wallet_') ? this.head().number : this.solidHead().number;
    switch (endpoint) {
      case 'nowblock':
      case 'wallet_nowblock':
        return json(this.block(solid));
      case 'blockinfo':
      case 'wallet_blockinfo':
      case 'block':
      case 'wallet_block': {
        const num = Number(params.num);
        if (!Number.isSafeInteger(num) || num < 0) return json({ Error: 'class java.lang.NumberFormatException : invalid num' });
        const isInfo = endpoint.endsWith('blockinfo');
        if (num > solid || num < 0) return json(isInfo ? [] : {});
        if (!isInfo) return json(this.block(num));
        let infos = this.blockInfos(num);
        if (fault) infos = mutate(infos, new Set((this.injected.get(num) ?? []).map((t) => t.info.id as string)));
        return json(infos);
      }
      case 'txinfo':
      case 'wallet_txinfo': {
        const id = String(params.value ?? '').toLowerCase();
        for (const [n, txs] of this.injected) {
          if (n > solid) continue;
          const tx = txs.find((t) => t.info.id === id);
          if (tx) return json(tx.info);
        }
        return json({});
      }
    }
  }

  private control(path: string, method: string, raw: string, json: (v: unknown) => void, reply: (s: number, t: string) => void): void {
    const bad = (message: string) => reply(400, JSON.stringify({ error: message }));
    let body: Record<string, unknown> = {};
    if (method === 'POST' && raw !== '') {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return bad('body is not JSON');
      }
    }
    try {
      if (path === '/_sim/state') {
        const byEndpoint = (f: (r: SimRequest) => number) => {
          const out: Record<string, number> = {};
          for (const r of this.requests) if (r.endpoint !== 'control') out[r.endpoint] = (out[r.endpoint] ?? 0) + f(r);
          return out;
        };
        return json({
          head: this.head(),
          solid_head: this.solidHead(),
          block_interval_ms: this.interval,
          requests: byEndpoint(() => 1),
          bytes: byEndpoint((r) => r.bytes),
        });
      }
      if (method !== 'POST') return bad('use POST');
      if (path === '/_sim/transfer') {
        const at = typeof body.at === 'string' ? Date.parse(body.at) : (body.at as number | undefined);
        const r = this.transfer({
          to: String(body.to),
          amount: body.amount as string | number,
          from: body.from as string | undefined,
          contract: body.contract as string | undefined,
          result: body.result as SimTransfer['result'],
          at,
          block: body.block as number | undefined,
        });
        return json({
          tx_id: r.txId,
          block_number: r.blockNumber,
          block_timestamp: r.blockTimestamp,
          log_index: r.logIndex,
          solid_head: this.solidHead().number,
        });
      }
      if (path === '/_sim/fault') {
        this.fail(body.endpoint as SimEndpoint, body.fault as SimFault, (body.times as number | undefined) ?? 1);
        return json({ ok: true });
      }
      if (path === '/_sim/clear-faults') {
        this.clearFaults();
        return json({ ok: true });
      }
      return reply(404, JSON.stringify({ error: 'unknown control path' }));
    } catch (err) {
      return bad(err instanceof Error ? err.message : String(err));
    }
  }
}

/**
 * An altered copy of a block's infos: the amount of the first injected transfer (else of the first
 * log) is one micro-unit more, or, without any log, a transaction is dropped.
 */
function mutate(infos: Record<string, unknown>[], injected: Set<string>): Record<string, unknown>[] {
  const copy = structuredClone(infos);
  const hasLog = (i: Record<string, unknown>) => Array.isArray(i.log) && (i.log as unknown[]).length > 0;
  const withLog = copy.find((i) => hasLog(i) && injected.has(i.id as string)) ?? copy.find(hasLog);
  if (withLog) {
    const log = (withLog.log as Array<{ data: string }>)[0]!;
    log.data = (BigInt(`0x${log.data}`) + 1n).toString(16).padStart(64, '0');
    return copy;
  }
  return copy.slice(1);
}

function parseParams(method: string, url: URL, raw: string): Record<string, unknown> | undefined {
  const fromQuery = Object.fromEntries(url.searchParams);
  if (method !== 'POST' || raw.trim() === '') return fromQuery;
  try {
    const body = JSON.parse(raw) as unknown;
    return typeof body === 'object' && body !== null ? { ...fromQuery, ...(body as Record<string, unknown>) } : undefined;
  } catch {
    return undefined;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 1 << 20) chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts a simulated TRON node on 127.0.0.1. */
export async function startSimulatedTron(options: SimulatedTronOptions = {}): Promise<SimulatedTron> {
  const node = new Node(options);
  const server = createServer((req, res) => {
    node.handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  node.server = server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return node;
}
