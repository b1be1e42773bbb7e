/**
 * Real-shaped TRON data for tests and benchmarks (real mainnet shapes; the attacks of docs/payments.md): the
 * mainnet sample payment, fake tokens, a look-alike address, and builders for TronGrid records,
 * Transfer logs and solidified receipts that agree with each other.
 */
import { randomBytes } from 'node:crypto';
import { hexToTronAddress, NETWORKS, tronAddressToHex } from '../../src/lib/tron.js';

/** The tests' default network (the built-in default): its API id and USDT contract. */
export const NETWORK = NETWORKS.mainnet.id;
export const USDT_CONTRACT = NETWORKS.mainnet.usdtContract;

export interface ReceiptLog {
  address: string;
  topics: string[];
  data: string;
}

export interface Trc20Record {
  transaction_id: string;
  token_info: { symbol: string; address: string; decimals: number; name: string };
  block_timestamp: number;
  from: string;
  to: string;
  type: string;
  value: string;
}

export const SAMPLE_TX = '0130dfde9281a48378109039ef512229d5359fbee2a8adbb17ad73aebc67ea99';
export const SAMPLE_MERCHANT = 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx';
export const SAMPLE_PAYER = 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre';
/** Shares the first 16 and last 4 characters of SAMPLE_PAYER; nobody holds its key. */
export const LOOKALIKE_PAYER = 'TL24LCps5FKwp3PoTysfgSPY9t9QpJtHre';
export const SAMPLE_AMOUNT = 41_677_389n;
export const SAMPLE_BLOCK = 69_316_562;
export const SAMPLE_BLOCK_TIME = 1_738_601_505_000;
/** Tokens deployed with the USDT symbol and name (deployed on mainnet by others). */
export const FAKE_USDT_CONTRACTS = ['TJCDneQevgfGFkU1rpCxVofksbeiGLhMCi', 'TVvHYiz294Q1ZeTjRTWTczJJjVz9yS8FEP', 'TJXMm2zHg2FpTEAWSmn7JAzfjji6XuMWPy'];
export const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const APPROVAL_TOPIC = '8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';
/** The real OUT_OF_ENERGY failure's resMessage. */
const OUT_OF_ENERGY_MESSAGE =
  '4e6f7420656e6f75676820656e6572677920666f7220275353544f524527206f7065726174696f6e20657865637574696e673a20637572496e766f6b65456e657267794c696d69745b37383537325d2c206375724f70456e657267795b32303030305d2c2070656e616c7479456e657267795b36383030305d2c2075736564456e657267795b33333536375d';

/** Block number of a block time, consistent with the sample (one block every 3 s). */
export function blockNumberAt(ms: number): number {
  return SAMPLE_BLOCK + Math.floor((ms - SAMPLE_BLOCK_TIME) / 3000);
}

/** A random 64-hex transaction id. */
export function newTxId(): string {
  return randomBytes(32).toString('hex');
}

/** A random valid base58check address (a fresh payer or merchant wallet). */
export function randomAddress(): string {
  return hexToTronAddress(`41${randomBytes(20).toString('hex')}`)!;
}

function word(addressBase58: string): string {
  return `000000000000000000000000${tronAddressToHex(addressBase58)!.slice(2)}`;
}

/** A Transfer (or Approval) log as a receipt carries it: emitting contract as 20-byte hex, no 41. */
export function transferLog(opts: { from: string; to: string; amount: bigint; contract?: string; topic?: string }): ReceiptLog {
  return {
    address: tronAddressToHex(opts.contract ?? USDT_CONTRACT)!.slice(2),
    topics: [opts.topic ?? TRANSFER_TOPIC, word(opts.from), word(opts.to)],
    data: opts.amount.toString(16).padStart(64, '0'),
  };
}

/** A successful solidified receipt in the shape of the real sample (section 2.1). */
export function successReceipt(opts: {
  txId: string;
  blockTimestamp: number;
  blockNumber?: number;
  logs: ReceiptLog[];
  contract?: string;
}): Record<string, unknown> {
  return {
    id: opts.txId,
    fee: 26420100,
    blockNumber: opts.blockNumber ?? blockNumberAt(opts.blockTimestamp),
    blockTimeStamp: opts.blockTimestamp,
    // USDT's transfer() returns false even on success: contractResult is all zeros.
    contractResult: ['0'.repeat(64)],
    contract_address: tronAddressToHex(opts.contract ?? USDT_CONTRACT),
    receipt: { energy_usage: 4475, energy_fee: 26420100, energy_usage_total: 130285, net_usage: 345, result: 'SUCCESS', energy_penalty_total: 100635 },
    log: opts.logs,
  };
}

/** The real OUT_OF_ENERGY failure shape: no log, result FAILED. */
export function failedReceipt(opts: { txId: string; blockTimestamp: number; blockNumber?: number; contract?: string }): Record<string, unknown> {
  return {
    id: opts.txId,
    fee: 16500120,
    blockNumber: opts.blockNumber ?? blockNumberAt(opts.blockTimestamp),
    blockTimeStamp: opts.blockTimestamp,
    contractResult: [''],
    contract_address: tronAddressToHex(opts.contract ?? USDT_CONTRACT),
    receipt: { energy_fee: 16500120, energy_usage_total: 78572, net_usage: 345, result: 'OUT_OF_ENERGY', energy_penalty_total: 25905 },
    result: 'FAILED',
    resMessage: OUT_OF_ENERGY_MESSAGE,
  };
}

export function trc20Record(opts: {
  txId: string;
  from: string;
  to: string;
  amount: bigint | string;
  blockTimestamp: number;
  contract?: string;
  type?: string;
  symbol?: string;
  name?: string;
}): Trc20Record {
  return {
    transaction_id: opts.txId,
    token_info: { symbol: opts.symbol ?? 'USDT', address: opts.contract ?? USDT_CONTRACT, decimals: 6, name: opts.name ?? 'Tether USD' },
    block_timestamp: opts.blockTimestamp,
    from: opts.from,
    to: opts.to,
    type: opts.type ?? 'Transfer',
    value: String(opts.amount),
  };
}
