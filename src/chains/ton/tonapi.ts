/**
 * The second TON index: tonapi (API v2), read from the receiving side, so that it shares nothing with
 * the toncenter reader but the chain. tonapi has no jetton transfer list for many owners at once, so:
 *
 * 1. `POST /v2/blockchain/accounts/_bulk` with the owners' derived jetton wallets (up to its bulk
 *    limit per request, 100 unless it names another, learned from its refusal): each wallet's last
 *    transaction lt. A wallet with nothing since the window's start costs nothing more; one missing
 *    from the answer is read anyway.
 * 2. `GET /v2/blockchain/accounts/{wallet}/transactions?after_lt=…&sort_order=asc` for the others:
 *    a transaction counts when it is the wallet's own (the derived address), not aborted, its compute
 *    phase successful, its inbound message an unbounced `internal_transfer` (parsed from the raw body,
 *    never from tonapi's decoding); the sender and amount come from that body.
 * 3. The masterchain block that committed it: `GET /v2/blockchain/blocks/{shard block}` for the block
 *    it refers to, then `GET /v2/blockchain/masterchain/{n}/blocks` from the next one on until the
 *    shard block is listed (usually the first). Remembered per shard block.
 *
 * Its transfers carry the same key and fields as toncenter's (`reader.ts`), so `compareReads` shows
 * a payment one index omits, or shows otherwise, as a disagreement.
 */
import type { ChainHead, DroppedLog, FinalityRule, ReadResult, TransferReader, VerifiedTransfer } from '../family.js';
import type { Network, Token } from '../networks.js';
import { canonicalTonAddress } from './address.js';
import { JettonWallets, parseInternalTransfer } from './jetton.js';
import {
  bookedHead,
  canonicalOwners,
  checkGlobalId,
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

export interface TonapiReaderOptions {
  network: Readonly<Network>;
  client: TonHttpClient;
  /** The hash of the jetton's wallet code, held as a library cell (default USDT's; a test jetton has its own). */
  walletCodeHash?: string;
  windowBlocks?: number;
  /** Accounts in one bulk request before tonapi has named its limit (default 100). */
  bulkLimit?: number;
  /** Transactions a page asks for (default 1,000, tonapi's maximum). */
  pageLimit?: number;
  /** How many masterchain blocks after the referred one are searched for a shard block's commit (default 16). */
  commitSearch?: number;
  finality?: FinalityRule;
}

type Json = Record<string, any>;

const BLOCK_ID = /^\((-?\d+),(-?[0-9a-fA-F]{1,16}),(\d+)\)$/;

function parseBlockId(text: unknown): { workchain: number; shard: string; seqno: bigint; id: string } | undefined {
  const m = typeof text === 'string' ? BLOCK_ID.exec(text) : null;
  if (!m) return undefined;
  const id = shardBlockId(Number(m[1]), m[2]!, BigInt(m[3]!));
  return id ? { workchain: Number(m[1]), shard: m[2]!, seqno: BigInt(m[3]!), id } : undefined;
}

export class TonapiReader implements TransferReader {
  private readonly heads = new HeadBook();
  private readonly wallets: JettonWallets;
  private readonly token: Readonly<Token>;
  private bulkCap: number;
  private readonly commits = new Map<string, bigint>();

  constructor(private readonly options: TonapiReaderOptions) {
    this.token = pinnedJetton(options.network);
    this.wallets = new JettonWallets(this.token.contract, options.walletCodeHash);
    this.bulkCap = options.bulkLimit ?? 100;
  }

  get network(): Readonly<Network> {
    return this.options.network;
  }

  private parseHead(raw: unknown, asked: string): TonHead & { globalId: unknown } {
    const b = raw as Json | null | undefined;
    const number = uint(b?.seqno);
    const hash = hashHex(b?.root_hash);
    const time = uint(b?.gen_utime);
    const startLt = uint(b?.start_lt);
    const endLt = uint(b?.end_lt);
    if (!b || number === undefined || hash === undefined || time === undefined || startLt === undefined || endLt === undefined || b.workchain_id !== -1) {
      throw new TonReadRefused('malformed', `${this.options.client.name}: ${asked} is not a masterchain block`);
    }
    return { number, hash, timeMs: Number(time) * 1000, startLt, endLt, globalId: b.global_id };
  }

  private async head(): Promise<AnsweredHead> {
    return this.parseHead(await this.options.client.get('/v2/blockchain/masterchain-head'), 'the masterchain head');
  }

  async checkNetwork(): Promise<void> {
    checkGlobalId(await this.head(), this.options.network, this.options.client.name);
  }

  async latestHead(): Promise<ChainHead> {
    return bookedHead(this.heads, await this.head());
  }

  async finalHead(): Promise<ChainHead> {
    return bookedHead(this.heads, await this.head(), this.options.client.name);
  }

  private async block(seqno: bigint): Promise<TonHead> {
    const answer = await this.options.client.get(`/v2/blockchain/blocks/(-1,8000000000000000,${seqno})`);
    const { globalId: _g, ...head } = this.parseHead(answer, `masterchain block ${seqno}`);
    if (head.number !== seqno) throw new TonReadRefused('malformed', `asked for masterchain block ${seqno}, got ${head.number}`);
    return head;
  }

  async readTransfers(range: { from: bigint; to: bigint; recipients: readonly string[]; finalAtOrBelow: bigint }): Promise<ReadResult> {
    const owners = canonicalOwners(range.recipients);
    const dropped: DroppedLog[] = [];
    if (owners.length === 0 || range.to < range.from) return { transfers: [], dropped, complete: true };
    const walletOf = await this.wallets.walletsOf(owners);
    const startLt = await windowStartLt(this.heads, range.from, this.options.windowBlocks ?? DEFAULT_WINDOW_BLOCKS, (s) => this.block(s));
    const active = await this.activeWallets([...walletOf.values()], startLt);
    const receipts: CheckedReceipt[] = [];
    for (const wallet of active) {
      const owner = this.wallets.ownerOf(wallet)!;
      for (const tx of await this.transactionsOf(wallet, startLt)) {
        const checked = await this.check(tx, wallet, owner, range.to);
        if ('reason' in checked) {
          dropped.push(checked);
          continue;
        }
        if (checked.mcSeqno < range.from || checked.mcSeqno > range.to) {
          dropped.push({ reason: 'outside_range', txHash: checked.txHash, logIndex: 0, blockNumber: checked.mcSeqno });
          continue;
        }
        receipts.push(checked);
      }
    }
    return readResult(this.options.network, this.token, receipts, dropped, true, range.finalAtOrBelow);
  }

  async recheck(transfers: readonly VerifiedTransfer[]): Promise<{ canonical: VerifiedTransfer[]; reorged: VerifiedTransfer[] }> {
    return { canonical: [...transfers], reorged: [] };
  }

  /** The wallets with a transaction at or after `startLt` (or not answered for), by bulk requests. */
  private async activeWallets(wallets: string[], startLt: bigint): Promise<string[]> {
    const active: string[] = [];
    let i = 0;
    while (i < wallets.length) {
      const part = wallets.slice(i, i + this.bulkCap);
      let answer: Json;
      try {
        answer = await this.options.client.post<Json>('/v2/blockchain/accounts/_bulk', { account_ids: part });
      } catch (err) {
        const limit = err instanceof TonHttpError && err.kind === 'refused' ? /at once:\s*(\d+)/.exec(err.message) : null;
        if (!limit || Number(limit[1]) < 1 || Number(limit[1]) >= part.length) throw err;
        this.bulkCap = Number(limit[1]);
        continue;
      }
      if (!Array.isArray(answer?.accounts)) throw new TonReadRefused('malformed', `${this.options.client.name}: accounts/_bulk answered no list`);
      const lastLt = new Map<string, bigint | undefined>();
      for (const a of answer.accounts) {
        const address = typeof a?.address === 'string' ? canonicalTonAddress(a.address) : undefined;
        if (address) lastLt.set(address, a.status === 'nonexist' ? 0n : uint(a.last_transaction_lt));
      }
      for (const w of part) {
        const lt = lastLt.get(w);
        // A wallet the answer leaves out, or whose lt it does not give, is read rather than trusted idle.
        if (!lastLt.has(w) || lt === undefined || lt >= startLt) active.push(w);
      }
      i += part.length;
    }
    return active;
  }

  private async transactionsOf(wallet: string, startLt: bigint): Promise<Json[]> {
    const limit = this.options.pageLimit ?? 1000;
    const out: Json[] = [];
    let after = startLt > 0n ? startLt - 1n : 0n;
    for (;;) {
      const answer = await this.options.client.get<Json>(`/v2/blockchain/accounts/${encodeURIComponent(wallet)}/transactions`, {
        after_lt: after,
        limit,
        sort_order: 'asc',
      });
      const list = answer?.transactions;
      if (!Array.isArray(list)) throw new TonReadRefused('malformed', `${this.options.client.name}: transactions answered no list`);
      out.push(...list);
      const last = uint(list[list.length - 1]?.lt);
      if (list.length < limit || last === undefined || last <= after) return out;
      after = last;
    }
  }

  /** One transaction at an owner's jetton wallet: a receipt, or why not. */
  private async check(tx: Json, wallet: string, owner: string, to: bigint): Promise<CheckedReceipt | DroppedLog> {
    const txHash = hashHex(tx?.hash);
    const where = { txHash, logIndex: 0 };
    const inMsg = tx?.in_msg as Json | undefined;
    const block = parseBlockId(tx?.block);
    const now = uint(tx?.utime);
    if (!txHash || !block || now === undefined) return { reason: 'malformed', ...where };
    if (canonicalTonAddress(String(tx.account?.address)) !== wallet) return { reason: 'wrong_wallet', ...where };
    if (!inMsg || inMsg.msg_type !== 'int_msg' || typeof inMsg.raw_body !== 'string') return { reason: 'not_transfer', ...where };
    const body = await parseInternalTransfer(inMsg.raw_body);
    if (!body.ok) return { reason: 'not_transfer', ...where };
    if (inMsg.bounced === true) return { reason: 'bounced', ...where };
    if (tx.aborted !== false || tx.success !== true || tx.compute_phase?.success !== true) return { reason: 'aborted', ...where };
    if (!body.value.from || body.value.amount === 0n) return { reason: 'not_transfer', ...where };
    const mc = await this.commitSeqno(block, to);
    if (mc === undefined) return { reason: 'not_committed', ...where };
    return {
      txHash,
      owner,
      from: body.value.from,
      raw: body.value.amount,
      mcSeqno: mc,
      shardBlock: block.id,
      timeMs: Number(now) * 1000,
      comment: body.value.comment,
    };
  }

  /** The masterchain block that committed a shard block, searched no further than `to`. */
  private async commitSeqno(block: { workchain: number; shard: string; seqno: bigint; id: string }, to: bigint): Promise<bigint | undefined> {
    const known = this.commits.get(block.id);
    if (known !== undefined) return known;
    const header = await this.options.client.get<Json>(`/v2/blockchain/blocks/(${block.workchain},${block.shard},${block.seqno})`);
    const ref = parseBlockId(header?.master_ref);
    if (!ref || ref.workchain !== -1)
      throw new TonReadRefused('malformed', `${this.options.client.name}: block ${block.id} names no masterchain block it refers to`);
    const last = ref.seqno + BigInt(this.options.commitSearch ?? 16);
    for (let n = ref.seqno + 1n; n <= last && n <= to; n++) {
      let answer: Json;
      try {
        answer = await this.options.client.get<Json>(`/v2/blockchain/masterchain/${n}/blocks`);
      } catch (err) {
        if (err instanceof TonHttpError && err.kind === 'not_found') return undefined;
        throw err;
      }
      const listed = (Array.isArray(answer?.blocks) ? answer.blocks : []).some(
        (b: Json) => typeof b?.shard === 'string' && shardBlockId(Number(b.workchain_id), b.shard, Number(b.seqno)) === block.id,
      );
      if (listed) {
        if (this.commits.size >= 20_000) this.commits.delete(this.commits.keys().next().value!);
        this.commits.set(block.id, n);
        return n;
      }
    }
    return undefined;
  }
}
