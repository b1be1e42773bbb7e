/**
 * The simulated TRON chain: block numbers and times as a function of the clock, deterministic
 * filler traffic in every block (USDT between strangers, TRX, failed calls, poisoning, fake
 * tokens), injected transfers, and java-tron's TransactionInfo and block shapes. The HTTP server
 * and fault injection around it are in tron-node.ts.
 */
import { createHash } from 'node:crypto';
import { parseAmount } from '../lib/amounts.js';
import { seededRandom } from '../lib/seeded-random.js';
import { NETWORKS, tronAddressToHex } from '../lib/tron.js';

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const APPROVAL_TOPIC = '8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';
/** Tokens deployed with the USDT symbol and name (fake USDT). */
export const FAKE_USDT_CONTRACTS = ['TJCDneQevgfGFkU1rpCxVofksbeiGLhMCi', 'TVvHYiz294Q1ZeTjRTWTczJJjVz9yS8FEP', 'TJXMm2zHg2FpTEAWSmn7JAzfjji6XuMWPy'];
const WITNESS = '41e7860196ad5b5718c1d6326babab039b70b8c1cd';

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

export interface Tx {
  info: Record<string, unknown>;
  body: Record<string, unknown>;
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

export class SimChain {
  protected readonly interval: number;
  protected readonly lag: number;
  protected readonly filler: [number, number];
  protected readonly now: () => number;
  protected readonly genesisBlock: number;
  protected readonly genesisTime: number;
  protected readonly seed: number;
  protected readonly poisonHex: string[];
  protected readonly usdtHex: string;
  protected readonly injected = new Map<number, Tx[]>();
  protected readonly cache = new Map<number, Tx[]>();
  /** Blocks replaced by another at their height (drop()): how many times. */
  protected readonly forks = new Map<number, number>();
  protected counter = 0;

  constructor(protected readonly options: SimulatedTronOptions) {
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

  /** A transaction of a block above the solidified head leaves the chain: its block is replaced by one without it (another blockID). */
  drop(txId: string): boolean {
    for (const [n, txs] of this.injected) {
      const i = txs.findIndex((t) => t.info.id === txId);
      if (i < 0 || n <= this.solidHead().number) continue;
      txs.splice(i, 1);
      this.forks.set(n, (this.forks.get(n) ?? 0) + 1);
      this.cache.delete(n);
      return true;
    }
    return false;
  }

  /** Where a spam transfer goes: half the time one of the poisoning targets (when any), else `toHex`. */
  private spamTarget(toHex: string, next: () => number): string {
    return this.poisonHex.length > 0 && next() < 0.5 ? this.poisonHex[Math.floor(next() * this.poisonHex.length)]! : toHex;
  }

  /** The transactions of block n: deterministic filler with the injected transactions spread among them. */
  protected txs(n: number): Tx[] {
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

  /** Block n as getblockbynum serves it; with `detail` false, as getblock serves it: the header only. */
  protected block(n: number, detail = true): Record<string, unknown> {
    const txs = this.txs(n);
    const fork = (k: number) => (this.forks.has(k) ? `:${this.forks.get(k)}` : '');
    const id = createHash('sha256')
      .update(`block:${this.seed}:${n}${fork(n)}`)
      .digest('hex');
    const parent = createHash('sha256')
      .update(`block:${this.seed}:${n - 1}${fork(n - 1)}`)
      .digest('hex');
    const block: Record<string, unknown> = {
      blockID: `${n.toString(16).padStart(16, '0')}${id.slice(16)}`,
      block_header: {
        raw_data: {
          number: n,
          // java-tron's Merkle root of no transactions is the zero hash.
          txTrieRoot: txs.length > 0 ? id : '0'.repeat(64),
          witness_address: WITNESS,
          parentHash: `${(n - 1).toString(16).padStart(16, '0')}${parent.slice(16)}`,
          version: 32,
          timestamp: this.blockTime(n),
        },
        witness_signature: '0'.repeat(130),
      },
    };
    if (detail && txs.length > 0) block.transactions = txs.map((t) => t.body);
    return block;
  }
}
