/**
 * A ledger of finalized Solana history as an RPC node serves it: blocks by slot, transactions by
 * signature in both encodings, and each address's signatures. The litesvm rig (svm.ts) writes it
 * from transactions the real SPL Token program ran, the replay writes it from recorded answers, and
 * the loopback server (solana-rpc.ts) answers from it.
 */
import { createHash } from 'node:crypto';
import { encodeBase58 } from '../../../src/lib/base58.js';

export interface LedgerTransaction {
  signature: string;
  slot: bigint;
  blockTime: number;
  err: unknown;
  /** The getTransaction result in `json` encoding. */
  json: Record<string, any>;
  /** The same in `jsonParsed` (undefined for a recorded answer that has only `json`: that one is served for both). */
  parsed: Record<string, any> | undefined;
  /** Every account key of the transaction, lookup-table ones included: whose signature lists hold it. */
  accounts: string[];
}

export function blockhashOf(slot: bigint): string {
  return encodeBase58(createHash('sha256').update(`ledger block ${slot}`).digest());
}

export class Ledger {
  readonly transactions = new Map<string, LedgerTransaction>();
  /** Per address, its transactions' signatures in ledger order (oldest first). */
  readonly byAddress = new Map<string, string[]>();
  /** Slots that have no block (the leader skipped them). */
  readonly skipped = new Set<bigint>();
  finalized = 0n;
  confirmed = 0n;

  constructor(
    readonly genesisHash: string,
    readonly baseTime = 1_750_000_000,
  ) {}

  /** Block times of slots whose transactions were recorded elsewhere (a recorded answer's own blockTime). */
  private readonly times = new Map<bigint, number>();

  blockTime(slot: bigint): number {
    return this.times.get(slot) ?? this.baseTime + Math.floor(Number(slot) * 0.4);
  }

  block(slot: bigint): { blockhash: string; parentSlot: number; blockTime: number; blockHeight: number } | undefined {
    if (slot < 1n || this.skipped.has(slot)) return undefined;
    let parent = slot - 1n;
    while (parent > 0n && this.skipped.has(parent)) parent--;
    return { blockhash: blockhashOf(slot), parentSlot: Number(parent), blockTime: this.blockTime(slot), blockHeight: Number(slot) };
  }

  add(tx: LedgerTransaction): void {
    if (this.transactions.has(tx.signature)) throw new Error(`${tx.signature} is already in the ledger`);
    this.transactions.set(tx.signature, tx);
    this.times.set(tx.slot, tx.blockTime);
    for (const a of new Set(tx.accounts)) this.byAddress.set(a, [...(this.byAddress.get(a) ?? []), tx.signature]);
    if (tx.slot > this.confirmed) this.confirmed = tx.slot;
  }

  /** Confirms up to `slot` and finalizes `lag` slots behind it. */
  advance(slot: bigint, lag = 32n): void {
    this.confirmed = slot > this.confirmed ? slot : this.confirmed;
    const final = this.confirmed - lag;
    this.finalized = final > this.finalized ? final : this.finalized;
  }

  /** An address's signatures, newest first, at or below a slot: what getSignaturesForAddress pages through. */
  signaturesOf(address: string, atOrBelow: bigint): LedgerTransaction[] {
    const list = (this.byAddress.get(address) ?? []).map((s) => this.transactions.get(s)!).filter((t) => t.slot <= atOrBelow);
    // Newest first: by slot, and within a slot the later transaction first.
    return list
      .map((t, i) => ({ t, i }))
      .sort((a, b) => (a.t.slot === b.t.slot ? b.i - a.i : a.t.slot < b.t.slot ? 1 : -1))
      .map((x) => x.t);
  }
}

/** A recorded getTransaction answer (json encoding) as a ledger entry at its own slot. */
export function recordedEntry(json: Record<string, any>): LedgerTransaction {
  const message = json.transaction.message;
  const loaded = json.meta.loadedAddresses ?? { writable: [], readonly: [] };
  return {
    signature: json.transaction.signatures[0],
    slot: BigInt(json.slot),
    blockTime: json.blockTime,
    err: json.meta.err,
    json,
    parsed: undefined,
    accounts: [...message.accountKeys, ...loaded.writable, ...loaded.readonly],
  };
}
