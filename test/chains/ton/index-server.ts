/**
 * A loopback server that answers as toncenter v3 and tonapi v2 do, from one model of a TON chain:
 * masterchain blocks (seqno n spans lts n*1000 … n*1000+999, one second apart), and jetton transfers,
 * each a sender's jetton wallet transaction (what toncenter's jetton/transfers lists) and the
 * receiving jetton wallet's transaction (what the trace and tonapi's account history show), each in
 * a shard block committed by a given masterchain block. Answers use the providers' own shapes and
 * letter cases (toncenter: raw addresses in upper case, base64 hashes; tonapi: raw upper case, hex).
 *
 * Per provider, hostility is switched on by the test: records left out, fields rewritten, the
 * receiving transaction shown as pending, a long URL refused, a bulk limit enforced.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Address, beginCell } from '@ton/core';
import { jettonWalletAddress } from '../../../src/chains/ton/jetton.js';

export interface SimTx {
  hash: string;
  lt: bigint;
  mc: number | null;
  shardSeqno: number;
  aborted?: boolean;
  bounced?: boolean;
  finality?: 'pending' | 'confirmed' | 'finalized';
}

export interface SimTransfer {
  sourceOwner: string;
  sourceWallet: string;
  destOwner: string;
  /** Where the internal_transfer went (the owner's wallet of `master` unless a test says otherwise). */
  destWallet: string;
  master: string;
  amount: bigint;
  comment?: string;
  traceId: string;
  source: SimTx;
  /** Undefined while the internal_transfer is in flight. */
  dest?: SimTx;
}

export interface Hostility {
  /** Source tx hashes whose records toncenter leaves out. */
  omit?: Set<string>;
  /** Rewrites of a toncenter record (by source tx hash). */
  record?: (t: SimTransfer, row: Record<string, unknown>) => Record<string, unknown>;
  /** More owner_address values than this in one URL: HTTP 414. */
  maxOwners?: number;
  /** tonapi's bulk limit (its 400 names it). */
  bulkLimit?: number;
  /** List records of aborted transactions too (toncenter's older Python index did). */
  showAborted?: boolean;
  /** Ignore the jetton_master filter (answer every jetton's records to the owners). */
  ignoreMasterFilter?: boolean;
  /** The next `times` requests get 429 with this Retry-After, as toncenter and tonapi answer past their allowance. */
  rateLimit?: { times: number; retryAfter: string };
}

/** Answers 429 (and counts the allowance down) while a rate limit is switched on. */
function rateLimited(h: Hostility | undefined, res: ServerResponse): boolean {
  if (!h?.rateLimit || h.rateLimit.times <= 0) return false;
  h.rateLimit.times--;
  res.writeHead(429, { 'content-type': 'application/json', 'retry-after': h.rateLimit.retryAfter });
  res.end(JSON.stringify({ ok: false, error: 'Ratelimit exceed', code: 429 }));
  return true;
}

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const b64 = (h: string) => Buffer.from(h, 'hex').toString('base64');
const upper = (raw: string) => raw.toUpperCase().replace(/^0X/, '0x');
const SHARD = '8000000000000000';

/** The internal_transfer body the receiving wallet got, as a BOC. */
export function internalTransferBody(t: Pick<SimTransfer, 'amount' | 'sourceOwner' | 'comment'>): Buffer {
  const b = beginCell()
    .storeUint(0x178d4519, 32)
    .storeUint(1n, 64)
    .storeCoins(t.amount)
    .storeAddress(Address.parseRaw(t.sourceOwner))
    .storeAddress(Address.parseRaw(t.sourceOwner))
    .storeCoins(1n);
  if (t.comment === undefined) b.storeBit(0);
  else b.storeBit(1).storeRef(beginCell().storeUint(0, 32).storeStringTail(t.comment).endCell());
  return b.endCell().toBoc();
}

export class TonChainModel {
  head = 1000;
  readonly transfers: SimTransfer[] = [];
  globalId = -239;
  private n = 0;

  constructor(readonly master: string) {}

  mcBlock(n: number) {
    return { seqno: n, start_lt: String(n * 1000), end_lt: String(n * 1000 + 999), gen_utime: String(1_780_000_000 + n), root: hex(`mc ${n}`) };
  }

  /** A transfer sent at masterchain block `at` and received at `at + 1` (override with `options`). */
  async pay(
    sourceOwner: string,
    destOwner: string,
    amount: bigint,
    options: Partial<Omit<SimTransfer, 'source' | 'dest'>> & { at?: number; dest?: Partial<SimTx> | null; source?: Partial<SimTx> } = {},
  ): Promise<SimTransfer> {
    const i = ++this.n;
    const at = options.at ?? this.head - 5;
    const master = options.master ?? this.master;
    const t: SimTransfer = {
      sourceOwner,
      destOwner,
      master,
      amount,
      comment: options.comment,
      sourceWallet: options.sourceWallet ?? (await jettonWalletAddress(master, sourceOwner)),
      destWallet: options.destWallet ?? (await jettonWalletAddress(master, destOwner)),
      traceId: b64(hex(`trace ${i}`)),
      source: { hash: hex(`source ${i}`), lt: BigInt(at * 1000 + 10 + i), mc: at, shardSeqno: 50_000 + at, ...options.source },
    };
    // An aborted sender's transaction sends nothing: there is no receipt.
    if (options.dest !== null && t.source.aborted !== true) {
      t.dest = { hash: hex(`dest ${i}`), lt: BigInt((at + 1) * 1000 + 20 + i), mc: at + 1, shardSeqno: 50_001 + at, finality: 'finalized', ...options.dest };
    }
    this.transfers.push(t);
    return t;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** toncenter's transaction shape for a model transaction. */
function toncenterTx(account: string, tx: SimTx, inMsg: Record<string, unknown>, outMsgs: Array<Record<string, unknown>>) {
  const ok = tx.aborted !== true;
  return {
    account: upper(account),
    hash: b64(tx.hash),
    lt: String(tx.lt),
    now: 1_780_000_000 + (tx.mc ?? 0),
    mc_block_seqno: tx.mc,
    description: { type: 'ord', aborted: !ok, compute_ph: { skipped: false, success: ok, exit_code: ok ? 0 : 707 } },
    block_ref: { workchain: 0, shard: SHARD, seqno: tx.shardSeqno },
    in_msg: inMsg,
    out_msgs: outMsgs,
    emulated: false,
    finality: tx.finality ?? 'finalized',
  };
}

export async function startIndexServer(
  model: TonChainModel,
  hostile: { toncenter?: Hostility; tonapi?: Hostility } = {},
  options: { maxHeaderSize?: number } = {},
) {
  const counts = { toncenter: 0, tonapi: 0 };
  const bodyOf = (t: SimTransfer) => internalTransferBody(t);
  const outMsg = (t: SimTransfer) => ({
    hash: b64(hex(`msg ${t.traceId}`)),
    source: upper(t.sourceWallet),
    destination: upper(t.destWallet),
    opcode: '0x178d4519',
    bounced: false,
    message_content: { body: bodyOf(t).toString('base64') },
  });

  function trace(t: SimTransfer) {
    const source = toncenterTx(
      t.sourceWallet,
      t.source,
      { hash: b64(hex(`in ${t.traceId}`)), source: upper(t.sourceOwner), opcode: '0x0f8a7ea5' },
      t.source.aborted ? [] : [outMsg(t)],
    );
    const txs: Record<string, unknown> = { [source.hash]: source };
    if (t.dest && !t.source.aborted && (t.dest.mc === null || t.dest.mc <= model.head || t.dest.finality !== 'finalized')) {
      const m = outMsg(t);
      const dest = toncenterTx(t.destWallet, t.dest, { ...m, bounced: t.dest.bounced === true }, []);
      if (t.dest.finality !== 'finalized') dest.mc_block_seqno = null;
      txs[dest.hash] = dest;
    }
    return { trace_id: t.traceId, is_incomplete: !t.dest, transactions: txs };
  }

  function record(t: SimTransfer) {
    const row = {
      query_id: '1',
      source: upper(t.sourceOwner),
      destination: upper(t.destOwner),
      amount: String(t.amount),
      source_wallet: upper(t.sourceWallet),
      jetton_master: upper(t.master),
      transaction_hash: b64(t.source.hash),
      transaction_lt: String(t.source.lt),
      transaction_now: 1_780_000_000 + (t.source.mc ?? 0),
      transaction_aborted: t.source.aborted === true,
      response_destination: upper(t.sourceOwner),
      custom_payload: null,
      forward_ton_amount: '1',
      forward_payload: null,
      trace_id: t.traceId,
    };
    return hostile.toncenter?.record ? hostile.toncenter.record(t, row) : row;
  }

  function toncenter(url: URL, res: ServerResponse): void {
    counts.toncenter++;
    if (rateLimited(hostile.toncenter, res)) return;
    const p = url.pathname;
    const q = url.searchParams;
    const block = (n: number) => {
      const b = model.mcBlock(n);
      return {
        workchain: -1,
        shard: SHARD,
        seqno: n,
        root_hash: b64(b.root),
        gen_utime: b.gen_utime,
        start_lt: b.start_lt,
        end_lt: b.end_lt,
        global_id: model.globalId,
      };
    };
    if (p === '/api/v3/masterchainInfo') return send(res, 200, { first: block(1), last: block(model.head) });
    if (p === '/api/v3/blocks') return send(res, 200, { blocks: Number(q.get('seqno')) <= model.head ? [block(Number(q.get('seqno')))] : [] });
    if (p === '/api/v3/jetton/transfers') {
      const owners = q.getAll('owner_address').map((o) => Address.parse(o).toRawString());
      if (hostile.toncenter?.maxOwners !== undefined && owners.length > hostile.toncenter.maxOwners) return send(res, 414, { error: 'URI too long' });
      const start = BigInt(q.get('start_lt') ?? '0');
      const limit = Number(q.get('limit') ?? 10);
      const offset = Number(q.get('offset') ?? 0);
      const rows = model.transfers
        .filter((t) => t.source.mc !== null && t.source.mc <= model.head && owners.includes(t.destOwner) && t.source.lt >= start)
        .filter((t) => !hostile.toncenter?.omit?.has(t.source.hash))
        .filter((t) => hostile.toncenter?.showAborted || t.source.aborted !== true)
        .filter((t) => hostile.toncenter?.ignoreMasterFilter || Address.parse(q.get('jetton_master')!).toRawString() === t.master)
        .sort((a, b) => (a.source.lt < b.source.lt ? -1 : 1))
        .map(record);
      return send(res, 200, { jetton_transfers: rows.slice(offset, offset + limit), address_book: {}, metadata: {} });
    }
    if (p === '/api/v3/traces') {
      const ids = q.getAll('trace_id');
      const hashes = q.getAll('tx_hash');
      const found = model.transfers.filter((t) => ids.includes(t.traceId) || hashes.includes(b64(t.source.hash)));
      return send(res, 200, { traces: found.map(trace) });
    }
    return send(res, 404, { error: `no ${p}` });
  }

  function tonapiBlock(n: number) {
    const b = model.mcBlock(n);
    return {
      workchain_id: -1,
      shard: SHARD,
      seqno: n,
      root_hash: b.root,
      gen_utime: Number(b.gen_utime),
      start_lt: Number(b.start_lt),
      end_lt: Number(b.end_lt),
      global_id: model.globalId,
    };
  }

  function tonapi(url: URL, body: any, res: ServerResponse): void {
    counts.tonapi++;
    if (rateLimited(hostile.tonapi, res)) return;
    const p = decodeURIComponent(url.pathname);
    const q = url.searchParams;
    if (p === '/v2/blockchain/masterchain-head') return send(res, 200, tonapiBlock(model.head));
    let m = /^\/v2\/blockchain\/blocks\/\((-?\d+),([0-9a-fA-F]+),(\d+)\)$/.exec(p);
    if (m) {
      if (m[1] === '-1') return send(res, 200, tonapiBlock(Number(m[3])));
      const seqno = Number(m[3]);
      return send(res, 200, { workchain_id: 0, shard: m[2], seqno, master_ref: `(-1,${SHARD},${seqno - 50_001})` });
    }
    m = /^\/v2\/blockchain\/masterchain\/(\d+)\/blocks$/.exec(p);
    if (m) {
      const n = Number(m[1]);
      if (n > model.head) return send(res, 404, { error: 'no blocks found' });
      const shards = new Set<number>();
      for (const t of model.transfers) for (const tx of [t.source, t.dest]) if (tx && tx.mc === n && tx.finality !== 'pending') shards.add(tx.shardSeqno);
      return send(res, 200, { blocks: [tonapiBlock(n), ...[...shards].map((s) => ({ workchain_id: 0, shard: SHARD, seqno: s }))] });
    }
    if (p === '/v2/blockchain/accounts/_bulk') {
      const ids: string[] = body.account_ids;
      const limit = hostile.tonapi?.bulkLimit;
      if (limit !== undefined && ids.length > limit) return send(res, 400, { error: `the maximum number of accounts to request at once: ${limit}` });
      return send(res, 200, {
        accounts: ids.map((id) => {
          const raw = Address.parse(id).toRawString();
          const lts = model.transfers.filter((t) => t.dest && t.destWallet === raw && (t.dest.mc === null || t.dest.mc <= model.head)).map((t) => t.dest!.lt);
          return lts.length === 0
            ? { address: upper(raw), status: 'nonexist' }
            : { address: upper(raw), status: 'active', last_transaction_lt: Number(lts.reduce((a, b) => (b > a ? b : a))) };
        }),
      });
    }
    m = /^\/v2\/blockchain\/accounts\/([^/]+)\/transactions$/.exec(p);
    if (m) {
      const raw = Address.parse(m[1]!).toRawString();
      const after = BigInt(q.get('after_lt') ?? '0');
      const txs = model.transfers
        .filter(
          (t) => t.dest && t.destWallet === raw && t.dest.lt > after && (t.dest.mc === null || t.dest.mc <= model.head || t.dest.finality !== 'finalized'),
        )
        .filter((t) => !hostile.tonapi?.omit?.has(t.source.hash))
        .map((t) => ({
          hash: t.dest!.hash,
          lt: Number(t.dest!.lt),
          account: { address: upper(raw), is_scam: false, is_wallet: false },
          success: t.dest!.aborted !== true,
          aborted: t.dest!.aborted === true,
          utime: 1_780_000_000 + (t.dest!.mc ?? 0),
          block: `(0,${SHARD},${t.dest!.shardSeqno})`,
          compute_phase: { skipped: false, success: t.dest!.aborted !== true, exit_code: 0 },
          in_msg: {
            msg_type: 'int_msg',
            bounced: t.dest!.bounced === true,
            source: { address: upper(t.sourceWallet) },
            op_code: '0x178d4519',
            raw_body: bodyOf(t).toString('hex'),
          },
        }));
      return send(res, 200, { transactions: txs });
    }
    return send(res, 404, { error: `no ${p}` });
  }

  const server = createServer({ maxHeaderSize: options.maxHeaderSize ?? 16 * 1024 }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      if (url.pathname.startsWith('/toncenter')) toncenter(new URL(url.pathname.slice('/toncenter'.length) + url.search, url), res);
      else if (url.pathname.startsWith('/tonapi')) tonapi(new URL(url.pathname.slice('/tonapi'.length) + url.search, url), body, res);
      else send(res, 404, { error: 'unknown provider' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    toncenterUrl: `${base}/toncenter`,
    tonapiUrl: `${base}/tonapi`,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
