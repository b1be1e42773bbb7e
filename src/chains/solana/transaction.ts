/**
 * One Solana transaction, as `getTransaction` answers it, read for payments into watched token
 * accounts. Both encodings are read: `jsonParsed` (what the reader asks for: Token instructions come
 * parsed, account keys as objects with lookup-table addresses included) and `json` (compiled
 * instructions with base58 data, the keys of lookup tables in meta.loadedAddresses), whose Token
 * `transfer` (tag 3, u64 amount) and `transferChecked` (tag 12, u64 amount, u8 decimals) are decoded
 * here; a jsonParsed instruction the node could not parse comes in that raw form too.
 *
 * A transfer counts only when the transaction succeeded (meta.err null), the instruction is the SPL
 * Token program's (top-level or inner), its destination is a watched account, the mint is the pinned
 * one (the instruction's for transferChecked, the account's token balance for transfer), the
 * account's token balance entry names the watched owner, and every Token transfer into and out of the
 * account in the transaction adds up to its post minus pre balance. Position: the slot;
 * `logIndex` = top-level instruction index x 1000 + 0 for the instruction itself, or + k for the k-th
 * (from 1) inner instruction under it (a transaction has at most 64 instructions in all, inner ones
 * included, so the two parts never collide), the same on every honest provider.
 */
import { decodeBase58 } from '../../lib/base58.js';
import type { DroppedLog, VerifiedTransfer } from '../family.js';
import type { Network, Token } from '../networks.js';
import { fromRaw } from '../scale.js';
import { solanaAddressBytes, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './address.js';

/** One watched token account: the owner's associated token account for one pinned token. */
export interface WatchedAccount {
  account: string;
  owner: string;
  token: Readonly<Token>;
}

/** A verified Solana transfer: `to` is the owner (the address the merchant registered). */
export interface SolanaTransfer extends VerifiedTransfer {
  /** The receiving token account (the owner's associated token account). */
  tokenAccount: string;
  /** The paying token account; `from` is its owner where the transaction's token balances name one. */
  sourceAccount: string;
  /** Accounts the transfer instruction carries after its authority: Solana Pay reference keys (or a multisig's signers). */
  references: string[];
}

/** What one transaction holds for the watched accounts, before the block's hash and time are added. */
export interface TransactionRead {
  transfers: Array<Omit<SolanaTransfer, 'blockHash' | 'blockTimeMs' | 'finality'>>;
  dropped: DroppedLog[];
  /** blockTime of the answer (seconds), to be compared with the block's. */
  blockTime: number | null;
}

/** An answer that is not a transaction of the asked signature and slot: the read must not go on. */
export class MalformedTransaction extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedTransaction';
  }
}

interface TokenTransfer {
  position: number;
  program: string;
  checked: boolean;
  source: string;
  destination: string;
  mint: string | undefined;
  decimals: number | undefined;
  amount: bigint;
  extra: string[];
}

type Json = Record<string, unknown>;

function obj(value: unknown, what: string): Json {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new MalformedTransaction(`${what} is not an object`);
  return value as Json;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new MalformedTransaction(`${what} is not a list`);
  return value;
}

function address(value: unknown, what: string): string {
  if (typeof value !== 'string' || !solanaAddressBytes(value)) throw new MalformedTransaction(`${what} is not a Solana address`);
  return value;
}

function u64(value: unknown, what: string): bigint {
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(value) || BigInt(value) >= 2n ** 64n) {
    throw new MalformedTransaction(`${what} is not a token amount`);
  }
  return BigInt(value);
}

/** The transaction's account keys, in index order (lookup-table keys after the static ones). */
function accountKeys(message: Json, meta: Json): string[] {
  const keys = list(message.accountKeys, 'accountKeys');
  if (keys.every((k) => typeof k === 'string')) {
    const loaded = meta.loadedAddresses === undefined || meta.loadedAddresses === null ? {} : obj(meta.loadedAddresses, 'loadedAddresses');
    const writable = loaded.writable === undefined ? [] : list(loaded.writable, 'loadedAddresses.writable');
    const readonly = loaded.readonly === undefined ? [] : list(loaded.readonly, 'loadedAddresses.readonly');
    return [...keys, ...writable, ...readonly].map((k, i) => address(k, `account key ${i}`));
  }
  return keys.map((k, i) => address(obj(k, `account key ${i}`).pubkey, `account key ${i}`));
}

/** Decodes a raw Token instruction's data and accounts: transfer and transferChecked, else undefined. */
function decodeRaw(program: string, accounts: string[], data: unknown, position: number): TokenTransfer | undefined {
  if (typeof data !== 'string') throw new MalformedTransaction(`instruction ${position} has no data`);
  const bytes = decodeBase58(data);
  if (!bytes) throw new MalformedTransaction(`instruction ${position} data is not base58`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const base = { position, program, extra: [] as string[] };
  if (bytes[0] === 3 && bytes.length === 9 && accounts.length >= 3) {
    const [source, destination, , ...extra] = accounts as [string, string, string, ...string[]];
    return { ...base, checked: false, source, destination, mint: undefined, decimals: undefined, amount: view.getBigUint64(1, true), extra };
  }
  if (bytes[0] === 12 && bytes.length === 10 && accounts.length >= 4) {
    const [source, mint, destination, , ...extra] = accounts as [string, string, string, string, ...string[]];
    return { ...base, checked: true, source, destination, mint, decimals: bytes[9]!, amount: view.getBigUint64(1, true), extra };
  }
  return undefined;
}

/** Reads a parsed (jsonParsed) Token instruction: transfer and transferChecked, else undefined. */
function decodeParsed(program: string, parsed: unknown, position: number): TokenTransfer | undefined {
  const p = obj(parsed, `instruction ${position} parsed`);
  if (p.type !== 'transfer' && p.type !== 'transferChecked') return undefined;
  const info = obj(p.info, `instruction ${position} info`);
  const extra = info.multisigAuthority === undefined ? [] : list(info.signers ?? [], 'signers').map((s, i) => address(s, `signer ${i}`));
  const base = {
    position,
    program,
    source: address(info.source, 'source'),
    destination: address(info.destination, 'destination'),
    extra,
  };
  if (p.type === 'transfer') return { ...base, checked: false, mint: undefined, decimals: undefined, amount: u64(info.amount, 'amount') };
  const tokenAmount = obj(info.tokenAmount, 'tokenAmount');
  if (typeof tokenAmount.decimals !== 'number') throw new MalformedTransaction(`instruction ${position} has no decimals`);
  return { ...base, checked: true, mint: address(info.mint, 'mint'), decimals: tokenAmount.decimals, amount: u64(tokenAmount.amount, 'amount') };
}

/** One instruction (compiled, partially decoded or parsed) as a Token transfer of either Token program, else undefined. */
function tokenTransfer(raw: unknown, keys: string[], position: number): TokenTransfer | undefined {
  const ix = obj(raw, `instruction ${position}`);
  let program: string;
  let accounts: string[] | undefined;
  if (typeof ix.programIdIndex === 'number') {
    program = keyAt(keys, ix.programIdIndex, `instruction ${position}`);
    accounts = list(ix.accounts, `instruction ${position} accounts`).map((a) => keyAt(keys, a, `instruction ${position}`));
  } else {
    program = address(ix.programId, `instruction ${position} programId`);
    if (ix.parsed === undefined) accounts = list(ix.accounts, `instruction ${position} accounts`).map((a, i) => address(a, `account ${i}`));
  }
  if (program !== TOKEN_PROGRAM_ID && program !== TOKEN_2022_PROGRAM_ID) return undefined;
  return accounts ? decodeRaw(program, accounts, ix.data, position) : decodeParsed(program, ix.parsed, position);
}

function keyAt(keys: string[], index: unknown, what: string): string {
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= keys.length) {
    throw new MalformedTransaction(`${what} names account index ${String(index)} of ${keys.length}`);
  }
  return keys[index]!;
}

/** Every Token transfer of the transaction, top-level and inner, with its position. */
function tokenTransfers(message: Json, meta: Json, keys: string[]): TokenTransfer[] {
  const top = list(message.instructions, 'instructions');
  const out: TokenTransfer[] = [];
  top.forEach((ix, i) => {
    const t = tokenTransfer(ix, keys, i * 1000);
    if (t) out.push(t);
  });
  const inner = meta.innerInstructions === undefined || meta.innerInstructions === null ? [] : list(meta.innerInstructions, 'innerInstructions');
  const seen = new Set<number>();
  for (const group of inner) {
    const g = obj(group, 'inner instructions');
    const index = g.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= top.length || seen.has(index)) {
      throw new MalformedTransaction(`inner instructions name top-level instruction ${String(index)}`);
    }
    seen.add(index);
    const ixs = list(g.instructions, 'inner instructions');
    if (ixs.length >= 1000) throw new MalformedTransaction('more inner instructions than a transaction can hold');
    ixs.forEach((ix, k) => {
      const t = tokenTransfer(ix, keys, index * 1000 + k + 1);
      if (t) out.push(t);
    });
  }
  return out;
}

interface Balance {
  mint: string;
  owner: string | undefined;
  program: string | undefined;
  amount: bigint;
}

/** Token balances by account key (pre or post). */
function balances(value: unknown, keys: string[], what: string): Map<string, Balance> {
  const out = new Map<string, Balance>();
  if (value === undefined || value === null) return out;
  for (const raw of list(value, what)) {
    const b = obj(raw, what);
    const key = keyAt(keys, b.accountIndex, what);
    const amount = u64(obj(b.uiTokenAmount, 'uiTokenAmount').amount, `${what} amount`);
    out.set(key, {
      mint: address(b.mint, `${what} mint`),
      owner: b.owner === undefined ? undefined : address(b.owner, `${what} owner`),
      program: b.programId === undefined ? undefined : address(b.programId, `${what} programId`),
      amount,
    });
  }
  return out;
}

/**
 * The transfers into watched accounts that this transaction proves. Throws MalformedTransaction when
 * the answer is not a transaction of that signature and slot, or is not well formed.
 */
export function readTransaction(
  raw: unknown,
  expected: { network: Readonly<Network>; signature: string; slot: bigint; watched: ReadonlyMap<string, WatchedAccount> },
): TransactionRead {
  const tx = obj(raw, 'the transaction');
  const meta = obj(tx.meta, 'meta');
  const transaction = obj(tx.transaction, 'transaction');
  const message = obj(transaction.message, 'message');
  const signatures = list(transaction.signatures, 'signatures');
  if (signatures[0] !== expected.signature) throw new MalformedTransaction(`asked for ${expected.signature}, got ${String(signatures[0])}`);
  if (typeof tx.slot !== 'number' || BigInt(tx.slot) !== expected.slot)
    throw new MalformedTransaction(`the transaction is in slot ${String(tx.slot)}, listed in ${expected.slot}`);
  const blockTime = typeof tx.blockTime === 'number' ? tx.blockTime : null;
  const where = { txHash: expected.signature, blockNumber: expected.slot };
  // A failed transaction moved no token: its instructions are listed, and count for nothing. A
  // missing err is taken as failure too (never as success).
  const status = meta.status && typeof meta.status === 'object' ? (meta.status as Json) : {};
  if (meta.err !== null || 'Err' in status) return { transfers: [], dropped: [{ reason: 'failed', ...where }], blockTime };
  const keys = accountKeys(message, meta);
  const all = tokenTransfers(message, meta, keys);
  const pre = balances(meta.preTokenBalances, keys, 'preTokenBalances');
  const post = balances(meta.postTokenBalances, keys, 'postTokenBalances');
  const dropped: DroppedLog[] = [];
  const transfers: TransactionRead['transfers'] = [];
  const owners = new Set([...expected.watched.values()].map((w) => w.owner));
  for (const [account, watched] of expected.watched) {
    const incoming = all.filter((t) => t.destination === account);
    if (incoming.length === 0) continue;
    const drop = (t: TokenTransfer, reason: DroppedLog['reason']) => dropped.push({ reason, ...where, logIndex: t.position });
    const tokenProgram = incoming.filter((t) => t.program === TOKEN_PROGRAM_ID);
    for (const t of incoming) if (t.program !== TOKEN_PROGRAM_ID) drop(t, 'other_program');
    if (tokenProgram.length === 0) continue;
    const after = post.get(account);
    const before = pre.get(account);
    const mint = watched.token.contract;
    // The account's balance entry must be the watched owner's account of the pinned mint.
    if (!after || after.mint !== mint || (before && before.mint !== mint) || (after.program !== undefined && after.program !== TOKEN_PROGRAM_ID)) {
      for (const t of tokenProgram) drop(t, 'other_contract');
      continue;
    }
    if (after.owner !== undefined && after.owner !== watched.owner) {
      for (const t of tokenProgram) drop(t, 'not_watched');
      continue;
    }
    const net = all
      .filter((t) => t.program === TOKEN_PROGRAM_ID)
      .reduce((sum, t) => sum + (t.destination === account ? t.amount : 0n) - (t.source === account ? t.amount : 0n), 0n);
    if (net !== after.amount - (before?.amount ?? 0n)) {
      for (const t of tokenProgram) drop(t, 'balance_mismatch');
      continue;
    }
    for (const t of tokenProgram) {
      if (t.source === account) drop(t, 'self_transfer');
      else if (t.checked && (t.mint !== mint || t.decimals !== watched.token.decimals)) drop(t, 'other_contract');
      else {
        const source = pre.get(t.source) ?? post.get(t.source);
        transfers.push({
          network: expected.network.id,
          token: watched.token.symbol,
          contract: mint,
          from: source?.owner ?? t.source,
          to: watched.owner,
          raw: t.amount,
          amount: fromRaw(t.amount, watched.token.decimals),
          txHash: expected.signature,
          logIndex: t.position,
          blockNumber: expected.slot,
          tokenAccount: account,
          sourceAccount: t.source,
          references: t.extra,
        });
      }
    }
  }
  // A Token transfer to a watched owner's own address (not to its token account) pays nothing: the
  // program refuses a destination that is not a token account, so only a provider can show one.
  for (const t of all) if (owners.has(t.destination)) dropped.push({ reason: 'not_watched', ...where, logIndex: t.position });
  return { transfers, dropped, blockTime };
}
