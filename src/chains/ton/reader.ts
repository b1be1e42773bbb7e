/**
 * What the two TON readers (toncenter v3, `toncenter.ts`; tonapi v2, `tonapi.ts`) share: positions,
 * heads, the search window, and how a checked receipt becomes a `VerifiedTransfer`.
 *
 * Positions are masterchain sequence numbers. A TON transaction is final once the shard block that
 * holds it is committed by a masterchain block (there is no reorg after that), so the final head is
 * the provider's latest masterchain block, believed only if it does not go back. A transfer's
 * position is the seqno of the masterchain block that committed the *receiving* jetton wallet's
 * transaction: that transaction, not the sender's, moves the balance, and it can fail or bounce on
 * its own.
 *
 * A transfer is known by (network, the receiving transaction's hash, 0): a TON transaction has exactly
 * one inbound message, so the log index is always 0, and both providers name the same transaction.
 * Its `blockHash` is the id of the shard block holding it (`workchain:shard:seqno`), which both
 * providers give; its time is the transaction's own `now`.
 *
 * Providers search by logical time (lt), not by masterchain seqno. The window for `[from, to]` starts
 * at the end lt of masterchain block `from - windowBlocks`: a shard block's lts exceed those of the
 * masterchain block it refers to, and a shard block is committed a block or two after that one, so
 * a margin of 256 masterchain blocks (about 100 s at 0.4 s a block) holds every transaction committed
 * in `[from, to]`. Transactions committed outside `[from, to]` are left to the read that covers them.
 */
import { fromRaw } from '../scale.js';
import type { ChainHead, DroppedLog, Finality, ReadResult, VerifiedTransfer } from '../family.js';
import type { Network, Token } from '../networks.js';
import { parseTonAddress } from './address.js';

/** Why a reader would not believe a provider's answer about the chain itself. */
export class TonReadRefused extends Error {
  constructor(
    readonly reason: 'wrong_chain' | 'implausible_head' | 'malformed' | 'missing_block',
    message: string,
  ) {
    super(message);
    this.name = 'TonReadRefused';
  }
}

/** A masterchain block as the readers need it: a head, and its logical-time span. */
export interface TonHead extends ChainHead {
  startLt: bigint;
  endLt: bigint;
}

export const DEFAULT_WINDOW_BLOCKS = 256;

/** A masterchain head as a provider answers it, with the global id its block carries. */
export type AnsweredHead = TonHead & { globalId: unknown };

/** Refuses a provider whose blocks carry another network's global id than the reader's. */
export function checkGlobalId(head: AnsweredHead, network: Readonly<Network>, provider: string): void {
  if (head.globalId !== network.chainId) {
    throw new TonReadRefused('wrong_chain', `${provider} serves global id ${String(head.globalId)}, not ${network.id} (${network.chainId})`);
  }
}

/**
 * A provider's head kept in the book: as the latest (remembered for its lt span), or, when
 * `finalFrom` names the provider, as the final head (accepted: never back from the last one).
 */
export function bookedHead(book: HeadBook, { globalId: _g, ...head }: AnsweredHead, finalFrom?: string): ChainHead {
  if (finalFrom === undefined) book.remember(head);
  else book.accept(head, finalFrom);
  return { number: head.number, hash: head.hash, timeMs: head.timeMs };
}

/** The heads a reader has accepted, for the search window's start and the "never back" rule. */
export class HeadBook {
  private readonly heads: TonHead[] = [];
  private last: TonHead | undefined;

  constructor(private readonly keep = 4096) {}

  /** Accepts a final head, refusing one that goes back (or changes its hash) from the last accepted. */
  accept(head: TonHead, provider: string): TonHead {
    const last = this.last;
    if (last && (head.number < last.number || (head.number === last.number && head.hash !== last.hash))) {
      throw new TonReadRefused(
        'implausible_head',
        `${provider}: masterchain head went back from ${last.number} (${last.hash}) to ${head.number} (${head.hash})`,
      );
    }
    this.last = head;
    this.remember(head);
    return head;
  }

  /** Keeps a block's lt span (a head, or a block read for a window's start). */
  remember(head: TonHead): void {
    if (this.heads.some((h) => h.number === head.number)) return;
    this.heads.push(head);
    this.heads.sort((a, b) => (a.number < b.number ? -1 : a.number > b.number ? 1 : 0));
    if (this.heads.length > this.keep) this.heads.splice(0, this.heads.length - this.keep);
  }

  /** The highest remembered block at or below `seqno`, if any. */
  atOrBelow(seqno: bigint): TonHead | undefined {
    for (let i = this.heads.length - 1; i >= 0; i--) if (this.heads[i]!.number <= seqno) return this.heads[i];
    return undefined;
  }
}

/**
 * The lt a read of `[from, …]` searches from: the end lt of the highest known masterchain block at or
 * below `from - windowBlocks` (an earlier one only widens the window), or of that block read anew.
 */
export async function windowStartLt(book: HeadBook, from: bigint, windowBlocks: number, readBlock: (seqno: bigint) => Promise<TonHead>): Promise<bigint> {
  const target = from - BigInt(windowBlocks);
  if (target <= 0n) return 0n;
  const known = book.atOrBelow(target);
  // A block far below the target would widen the window a lot; read the target itself instead.
  if (known && target - known.number <= BigInt(windowBlocks)) return known.endLt;
  const block = await readBlock(target);
  book.remember(block);
  return block.endLt;
}

/** Watched owners in canonical form (any form accepted), refusing what is not a TON address. */
export function canonicalOwners(recipients: readonly string[]): string[] {
  const owners = new Set<string>();
  for (const r of recipients) {
    const parsed = parseTonAddress(r, { test: true });
    if (!parsed.ok) throw new Error(`watched address ${r}: ${parsed.error}`);
    owners.add(parsed.address);
  }
  return [...owners];
}

/** A shard block's id as both providers can give it: `workchain:shard (16 hex digits):seqno`. */
export function shardBlockId(workchain: number, shard: string, seqno: number | bigint): string | undefined {
  if (!/^-?[0-9a-fA-F]{1,16}$/.test(shard)) return undefined;
  const value = BigInt.asUintN(64, BigInt(shard.startsWith('-') ? `-0x${shard.slice(1)}` : `0x${shard}`));
  return `${workchain}:${value.toString(16).padStart(16, '0')}:${seqno}`;
}

/** What a reader established about one receipt at the owner's jetton wallet. */
export interface CheckedReceipt {
  txHash: string;
  owner: string;
  from: string;
  raw: bigint;
  mcSeqno: bigint;
  shardBlock: string;
  timeMs: number;
  comment: string | undefined;
}

/** A checked receipt as the chain-neutral transfer. */
export function toVerifiedTransfer(network: Readonly<Network>, token: Readonly<Token>, r: CheckedReceipt, finalAtOrBelow: bigint): VerifiedTransfer {
  const finality: Finality = r.mcSeqno <= finalAtOrBelow ? 'final' : 'seen';
  const transfer: VerifiedTransfer = {
    network: network.id,
    token: token.symbol,
    contract: token.contract,
    from: r.from,
    to: r.owner,
    raw: r.raw,
    amount: fromRaw(r.raw, token.decimals),
    txHash: r.txHash,
    logIndex: 0,
    blockNumber: r.mcSeqno,
    blockHash: r.shardBlock,
    blockTimeMs: r.timeMs,
    finality,
  };
  if (r.comment !== undefined) transfer.reference = r.comment;
  return transfer;
}

/** Sorts and dedupes the receipts of one read into its result. */
export function readResult(
  network: Readonly<Network>,
  token: Readonly<Token>,
  receipts: CheckedReceipt[],
  dropped: DroppedLog[],
  complete: boolean,
  finalAtOrBelow: bigint,
): ReadResult {
  const seen = new Set<string>();
  const transfers: VerifiedTransfer[] = [];
  for (const r of receipts) {
    if (seen.has(r.txHash)) {
      dropped.push({ reason: 'duplicate', txHash: r.txHash, logIndex: 0, blockNumber: r.mcSeqno });
      continue;
    }
    seen.add(r.txHash);
    transfers.push(toVerifiedTransfer(network, token, r, finalAtOrBelow));
  }
  transfers.sort((a, b) => (a.blockNumber === b.blockNumber ? (a.txHash < b.txHash ? -1 : 1) : a.blockNumber < b.blockNumber ? -1 : 1));
  return { transfers, dropped, complete };
}

/** The network's one pinned jetton (USDT), refusing a network of another family. */
export function pinnedJetton(network: Readonly<Network>): Readonly<Token> {
  if (network.family !== 'ton') throw new Error(`${network.id} is not a TON network`);
  const token = network.tokens[0];
  if (!token || network.tokens.length !== 1) throw new Error(`${network.id} must pin exactly one jetton`);
  return token;
}

/** Base64 (or base64url) of 32 bytes to lower-case hex, or undefined. */
export function hashHex(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (/^[0-9a-fA-F]{64}$/.test(value)) return value.toLowerCase();
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value, /[-_]/.test(value) ? 'base64url' : 'base64');
  return bytes.length === 32 ? bytes.toString('hex') : undefined;
}

/** A non-negative decimal integer (a string or a safe number) as a bigint, or undefined. */
export function uint(value: unknown): bigint | undefined {
  if (typeof value === 'string' && /^\d{1,40}$/.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return undefined;
}

/** Splits a list into parts of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, size)) out.push(items.slice(i, i + Math.max(1, size)));
  return out;
}
