/**
 * The TON reader through toncenter's index (API v3), for the network's pinned jetton.
 *
 * 1. `GET /api/v3/jetton/transfers` for the watched owners (up to 1,000 per request, the provider's
 *    limit; fewer when it refuses the URL as too long, learned by halving), `direction=in`, the pinned
 *    master, `start_lt` at the window's start, `sort=asc`, paged by lt. A record describes the
 *    *sender's* jetton wallet transaction; it counts for nothing yet, and it is dropped at once when
 *    `transaction_aborted` is true, when its master is not the pinned one or its destination not a
 *    watched owner (every address compared in canonical form, never by letter case).
 * 2. `GET /api/v3/traces` for the remaining records' traces (many in one request): in it the
 *    sender's transaction must have succeeded, sent one `internal_transfer` to the jetton wallet
 *    derived from (pinned master, owner), and that wallet's transaction receiving it must be
 *    committed in the masterchain (`mc_block_seqno`), not aborted, its compute phase successful, the
 *    message not bounced, and the message body's amount and sender equal to the record's. The text
 *    comment of its forward payload is kept as the transfer's `reference`.
 *
 * A record whose receiving transaction is not committed yet while its own is committed within the
 * range (a transfer in flight) makes the read incomplete, so the caller reads the range again and
 * never moves past it. Settled outcomes are remembered by the sender's transaction hash, so a record
 * seen again in an overlapping window costs no second trace request.
 */
import type { ChainHead, DroppedLog, FinalityRule, ReadResult, TransferReader, VerifiedTransfer } from '../family.js';
import type { Network, Token } from '../networks.js';
import { canonicalTonAddress, toFriendlyAddress } from './address.js';
import { JettonWallets, OP_INTERNAL_TRANSFER, parseInternalTransfer } from './jetton.js';
import {
  bookedHead,
  canonicalOwners,
  checkGlobalId,
  chunks,
  DEFAULT_WINDOW_BLOCKS,
  hashHex,
  HeadBook,
  pinnedJetton,
  readResult,
  shardBlockId,
  TonReadRefused,
  uint,
  windowStartLt,
  type AnsweredHead,
  type CheckedReceipt,
  type TonHead,
} from './reader.js';
import { TonHttpError, type TonHttpClient } from './rpc.js';

export interface ToncenterReaderOptions {
  network: Readonly<Network>;
  client: TonHttpClient;
  /** The hash of the jetton's wallet code, held as a library cell (default USDT's; a test jetton has its own). */
  walletCodeHash?: string;
  /** Masterchain blocks the search window reaches back before `from` (default 256). */
  windowBlocks?: number;
  /** Owners in one jetton/transfers request before the provider has refused any (default 1,000). */
  maxOwnersPerRequest?: number;
  /** Rows a page asks for (default 1,000, the provider's maximum). */
  pageLimit?: number;
  /** Traces in one request (default 50). */
  tracesPerRequest?: number;
  /** Kept for the interface; TON's final block is always the latest committed masterchain block. */
  finality?: FinalityRule;
}

type Json = Record<string, any>;

/** A record that passed the cheap checks, waiting for its trace. */
interface Candidate {
  sourceHash: string;
  traceId: string | undefined;
  sourceB64: string;
  owner: string;
  wallet: string;
  sourceWallet: string;
  source: string;
  amount: bigint;
  lt: bigint;
}

/** What a trace says of a candidate: a receipt, a drop, or not settled yet. */
type Outcome =
  | { kind: 'receipt'; receipt: CheckedReceipt; sourceMc: bigint | undefined }
  | { kind: 'drop'; drop: DroppedLog }
  | { kind: 'unsettled'; drop: DroppedLog; sourceMc: bigint | undefined };

const MASTER_SHARD = '8000000000000000';

function opcode(message: Json | undefined): number | undefined {
  const op = message?.opcode;
  if (typeof op === 'number') return op >>> 0;
  if (typeof op === 'string' && /^0x[0-9a-fA-F]{1,8}$/.test(op)) return Number.parseInt(op.slice(2), 16) >>> 0;
  return undefined;
}

/** True when a toncenter transaction did what it was sent to do: not aborted, its compute phase run and successful. */
export function transactionSucceeded(tx: Json): boolean {
  const d = tx.description;
  return d?.aborted === false && d?.compute_ph?.success === true && d?.compute_ph?.skipped !== true;
}

export class ToncenterReader implements TransferReader {
  private readonly heads = new HeadBook();
  private readonly wallets: JettonWallets;
  private readonly token: Readonly<Token>;
  private ownerCap: number;
  private readonly settled = new Map<string, Outcome>();

  constructor(private readonly options: ToncenterReaderOptions) {
    this.token = pinnedJetton(options.network);
    this.wallets = new JettonWallets(this.token.contract, options.walletCodeHash);
    this.ownerCap = options.maxOwnersPerRequest ?? 1000;
  }

  get network(): Readonly<Network> {
    return this.options.network;
  }

  /** The owners per request this reader asks now (the learned cap). */
  ownersPerRequest(): number {
    return this.ownerCap;
  }

  private parseHead(raw: unknown, asked: string): TonHead & { globalId: unknown } {
    const b = raw as Json | null | undefined;
    const number = uint(b?.seqno);
    const hash = hashHex(b?.root_hash);
    const time = uint(b?.gen_utime);
    const startLt = uint(b?.start_lt);
    const endLt = uint(b?.end_lt);
    if (!b || number === undefined || hash === undefined || time === undefined || startLt === undefined || endLt === undefined) {
      throw new TonReadRefused('malformed', `${this.options.client.name}: ${asked} is not a masterchain block`);
    }
    return { number, hash, timeMs: Number(time) * 1000, startLt, endLt, globalId: b.global_id };
  }

  private async masterchainLast(): Promise<AnsweredHead> {
    const info = await this.options.client.get<Json>('/api/v3/masterchainInfo');
    return this.parseHead(info?.last, 'the masterchain head');
  }

  async checkNetwork(): Promise<void> {
    checkGlobalId(await this.masterchainLast(), this.options.network, this.options.client.name);
  }

  async latestHead(): Promise<ChainHead> {
    return bookedHead(this.heads, await this.masterchainLast());
  }

  async finalHead(): Promise<ChainHead> {
    return bookedHead(this.heads, await this.masterchainLast(), this.options.client.name);
  }

  private async block(seqno: bigint): Promise<TonHead> {
    const answer = await this.options.client.get<Json>('/api/v3/blocks', { workchain: -1, shard: MASTER_SHARD, seqno, limit: 1 });
    const b = Array.isArray(answer?.blocks) ? answer.blocks[0] : undefined;
    if (!b) throw new TonReadRefused('missing_block', `${this.options.client.name} has no masterchain block ${seqno}`);
    const { globalId: _g, ...head } = this.parseHead(b, `masterchain block ${seqno}`);
    if (head.number !== seqno) throw new TonReadRefused('malformed', `asked for masterchain block ${seqno}, got ${head.number}`);
    return head;
  }

  async readTransfers(range: { from: bigint; to: bigint; recipients: readonly string[]; finalAtOrBelow: bigint }): Promise<ReadResult> {
    const owners = canonicalOwners(range.recipients);
    const dropped: DroppedLog[] = [];
    if (owners.length === 0 || range.to < range.from) return { transfers: [], dropped, complete: true };
    const walletOf = await this.wallets.walletsOf(owners);
    const startLt = await windowStartLt(this.heads, range.from, this.options.windowBlocks ?? DEFAULT_WINDOW_BLOCKS, (s) => this.block(s));
    const candidates: Candidate[] = [];
    for (const record of await this.records(owners, startLt)) {
      const checked = this.checkRecord(record, walletOf);
      if ('reason' in checked) dropped.push(checked);
      else candidates.push(checked);
    }
    const unknown = candidates.filter((c) => !this.settled.has(c.sourceHash));
    const traces = await this.traces(unknown);
    const receipts: CheckedReceipt[] = [];
    let complete = true;
    for (const c of candidates) {
      let outcome = this.settled.get(c.sourceHash);
      if (!outcome) {
        outcome = await this.verify(c, traces.get(c.sourceHash));
        if (outcome.kind !== 'unsettled') this.remember(c.sourceHash, outcome);
      }
      if (outcome.kind === 'drop') {
        dropped.push(outcome.drop);
        continue;
      }
      // The sender's transaction is within the range (or its place unknown) and the receipt is not
      // there yet: the range cannot be settled until it is.
      const inRangeSource = outcome.sourceMc === undefined || outcome.sourceMc <= range.to;
      if (outcome.kind === 'unsettled') {
        dropped.push(outcome.drop);
        if (inRangeSource) complete = false;
        continue;
      }
      const r = outcome.receipt;
      if (r.mcSeqno < range.from || r.mcSeqno > range.to) {
        dropped.push({ reason: 'outside_range', txHash: r.txHash, logIndex: 0, blockNumber: r.mcSeqno });
        if (r.mcSeqno > range.to && inRangeSource) complete = false;
        continue;
      }
      receipts.push(r);
    }
    return readResult(this.options.network, this.token, receipts, dropped, complete, range.finalAtOrBelow);
  }

  /** TON has no reorg once a masterchain block commits a transaction: every transfer read as final stays. */
  async recheck(transfers: readonly VerifiedTransfer[]): Promise<{ canonical: VerifiedTransfer[]; reorged: VerifiedTransfer[] }> {
    return { canonical: [...transfers], reorged: [] };
  }

  private remember(key: string, outcome: Outcome): void {
    if (this.settled.size >= 20_000) this.settled.delete(this.settled.keys().next().value!);
    this.settled.set(key, outcome);
  }

  /** Every jetton/transfers record to the owners since `startLt`, in chunks the provider accepts. */
  private async records(owners: string[], startLt: bigint): Promise<Json[]> {
    const out = new Map<string, Json>();
    let i = 0;
    while (i < owners.length) {
      const part = owners.slice(i, i + this.ownerCap);
      try {
        for (const row of await this.recordsOf(part, startLt)) {
          const key = String(row?.transaction_hash);
          if (!out.has(key)) out.set(key, row);
        }
        i += part.length;
      } catch (err) {
        if (!(err instanceof TonHttpError) || err.kind !== 'too_long' || part.length === 1) throw err;
        this.ownerCap = Math.max(1, Math.floor(part.length / 2));
      }
    }
    return [...out.values()];
  }

  private async recordsOf(owners: string[], startLt: bigint): Promise<Json[]> {
    const limit = this.options.pageLimit ?? 1000;
    const rows: Json[] = [];
    let fromLt = startLt;
    let offset = 0;
    for (;;) {
      const page = await this.options.client.get<Json>('/api/v3/jetton/transfers', {
        owner_address: owners.map((o) => toFriendlyAddress(o, { bounceable: false })),
        direction: 'in',
        jetton_master: toFriendlyAddress(this.token.contract, { bounceable: true }),
        start_lt: fromLt,
        sort: 'asc',
        limit,
        offset,
      });
      const list = page?.jetton_transfers;
      if (!Array.isArray(list)) throw new TonReadRefused('malformed', `${this.options.client.name}: jetton/transfers answered no list`);
      rows.push(...list);
      if (list.length < limit) return rows;
      const lastLt = uint(list[list.length - 1]?.transaction_lt);
      // Pages go on from the last lt seen (rows at that lt repeat and are deduplicated); only a page
      // that is all one lt moves by offset instead.
      if (lastLt !== undefined && lastLt > fromLt) {
        fromLt = lastLt;
        offset = 0;
      } else offset += limit;
    }
  }

  /** The cheap checks of one record: its own fields, before any trace is read. */
  private checkRecord(row: Json, walletOf: Map<string, string>): Candidate | DroppedLog {
    const sourceHash = hashHex(row?.transaction_hash);
    const lt = uint(row?.transaction_lt);
    const where = { txHash: sourceHash, logIndex: 0 };
    if (!sourceHash || lt === undefined) return { reason: 'malformed', ...where };
    // Answers of 2024 had no transaction_aborted: the trace's own transaction decides then.
    if (row.transaction_aborted === true) return { reason: 'aborted', ...where };
    if (row.transaction_aborted !== false && row.transaction_aborted !== undefined) return { reason: 'malformed', ...where };
    const master = typeof row.jetton_master === 'string' ? canonicalTonAddress(row.jetton_master) : undefined;
    if (master !== this.token.contract) return { reason: 'other_contract', ...where };
    const owner = typeof row.destination === 'string' ? canonicalTonAddress(row.destination) : undefined;
    const wallet = owner === undefined ? undefined : walletOf.get(owner);
    if (owner === undefined || wallet === undefined) return { reason: 'not_watched', ...where };
    const amount = uint(row.amount);
    const source = typeof row.source === 'string' ? canonicalTonAddress(row.source) : undefined;
    const sourceWallet = typeof row.source_wallet === 'string' ? canonicalTonAddress(row.source_wallet) : undefined;
    if (amount === undefined || amount === 0n || !source || !sourceWallet) return { reason: 'malformed', ...where };
    const traceId = typeof row.trace_id === 'string' && hashHex(row.trace_id) ? row.trace_id : undefined;
    return { sourceHash, traceId, sourceB64: String(row.transaction_hash), owner, wallet, sourceWallet, source, amount, lt };
  }

  /** The traces of the candidates, by the sender's transaction hash (hex). */
  private async traces(candidates: Candidate[]): Promise<Map<string, Json>> {
    const byHash = new Map<string, Json>();
    const perRequest = this.options.tracesPerRequest ?? 50;
    const withId = [...new Set(candidates.filter((c) => c.traceId).map((c) => c.traceId!))];
    const withoutId = candidates.filter((c) => !c.traceId).map((c) => c.sourceB64);
    const ask = async (key: 'trace_id' | 'tx_hash', values: string[]) => {
      for (const part of chunks(values, perRequest)) {
        const answer = await this.options.client.get<Json>('/api/v3/traces', { [key]: part, limit: part.length });
        if (!Array.isArray(answer?.traces)) throw new TonReadRefused('malformed', `${this.options.client.name}: traces answered no list`);
        for (const trace of answer.traces) {
          for (const tx of Object.values((trace?.transactions ?? {}) as Record<string, Json>)) {
            const h = hashHex(tx?.hash);
            if (h) byHash.set(h, trace);
          }
        }
      }
    };
    await ask('trace_id', withId);
    await ask('tx_hash', withoutId);
    return byHash;
  }

  /** What the trace proves of one candidate. */
  private async verify(c: Candidate, trace: Json | undefined): Promise<Outcome> {
    const at = (reason: DroppedLog['reason'], txHash = c.sourceHash, blockNumber?: bigint): DroppedLog => ({ reason, txHash, logIndex: 0, blockNumber });
    if (!trace) return { kind: 'unsettled', drop: at('not_committed'), sourceMc: undefined };
    const txs = Object.values((trace.transactions ?? {}) as Record<string, Json>);
    const src = txs.find((t) => hashHex(t?.hash) === c.sourceHash);
    if (!src) return { kind: 'unsettled', drop: at('not_committed'), sourceMc: undefined };
    const sourceMc = uint(src.mc_block_seqno);
    if (!transactionSucceeded(src)) return { kind: 'drop', drop: at('aborted') };
    if (canonicalTonAddress(String(src.account)) !== c.sourceWallet) return { kind: 'drop', drop: at('mismatch') };
    const outs = (Array.isArray(src.out_msgs) ? src.out_msgs : []).filter((m: Json) => opcode(m) === OP_INTERNAL_TRANSFER);
    if (outs.length !== 1) return { kind: 'drop', drop: at('malformed') };
    const out = outs[0] as Json;
    if (canonicalTonAddress(String(out.destination)) !== c.wallet) return { kind: 'drop', drop: at('wrong_wallet') };
    const dest = txs.find((t) => t?.in_msg && hashHex(t.in_msg.hash) !== undefined && hashHex(t.in_msg.hash) === hashHex(out.hash));
    if (!dest) return { kind: 'unsettled', drop: at('not_committed'), sourceMc };
    const destHash = hashHex(dest.hash);
    if (!destHash) return { kind: 'drop', drop: at('malformed') };
    const mc = uint(dest.mc_block_seqno);
    if (canonicalTonAddress(String(dest.account)) !== c.wallet) return { kind: 'drop', drop: at('wrong_wallet', destHash) };
    if (mc === undefined || (dest.finality !== undefined && dest.finality !== 'finalized') || dest.emulated === true) {
      return { kind: 'unsettled', drop: at('not_committed', destHash), sourceMc };
    }
    if (dest.in_msg.bounced === true) return { kind: 'drop', drop: at('bounced', destHash, mc) };
    if (!transactionSucceeded(dest)) return { kind: 'drop', drop: at('aborted', destHash, mc) };
    if (canonicalTonAddress(String(dest.in_msg.source)) !== c.sourceWallet) return { kind: 'drop', drop: at('mismatch', destHash, mc) };
    return this.receiptOf(c, dest, destHash, mc, sourceMc);
  }

  /** The receipt's message body (amount, sender, comment) checked against the record. */
  private async receiptOf(c: Candidate, dest: Json, destHash: string, mc: bigint, sourceMc: bigint | undefined): Promise<Outcome> {
    const drop = (reason: DroppedLog['reason']): Outcome => ({ kind: 'drop', drop: { reason, txHash: destHash, logIndex: 0, blockNumber: mc } });
    const body = dest.in_msg?.message_content?.body;
    const now = uint(dest.now);
    const ref = dest.block_ref as Json | undefined;
    const shard = ref && typeof ref.shard === 'string' ? shardBlockId(Number(ref.workchain), ref.shard, Number(ref.seqno)) : undefined;
    if (typeof body !== 'string' || now === undefined || !shard) return drop('malformed');
    const parsed = await parseInternalTransfer(body);
    if (!parsed.ok) return drop('not_transfer');
    const t = parsed.value;
    if (t.amount !== c.amount || t.from !== c.source) return drop('mismatch');
    const receipt: CheckedReceipt = {
      txHash: destHash,
      owner: c.owner,
      from: c.source,
      raw: t.amount,
      mcSeqno: mc,
      shardBlock: shard,
      timeMs: Number(now) * 1000,
      comment: t.comment,
    };
    return { kind: 'receipt', receipt, sourceMc };
  }
}
