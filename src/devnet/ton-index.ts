/**
 * The simulated ton-devnet of `gatewayd dev`: an index server on loopback answering as toncenter's
 * API v3 answers the calls the toncenter reader (src/chains/ton/toncenter.ts) makes:
 *   GET /api/v3/masterchainInfo   {first, last}: masterchain blocks with the registry's global id (900239)
 *   GET /api/v3/blocks            ?workchain=-1&shard=8000000000000000&seqno=N
 *   GET /api/v3/jetton/transfers  ?owner_address=…&direction=in&jetton_master=…&start_lt=…&sort=asc&limit&offset
 *   GET /api/v3/traces            ?trace_id=… | ?tx_hash=…
 * A masterchain block comes every dev.block_interval_ms; block n spans the lts n*1000 … n*1000+999.
 * A payment (`pay`) is a jetton transfer as TON carries it: the payer's jetton wallet's transaction
 * (what jetton/transfers lists) in the next masterchain block, sending an internal_transfer whose
 * body holds the amount, the payer and the text comment, and the receiving jetton wallet's
 * transaction (derived from the devnet's USDT master and the owner, as the reader derives it),
 * committed by the next masterchain block. Addresses are raw and upper case, hashes base64, as
 * toncenter answers them.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NETWORKS } from '../chains/networks.js';
import { canonicalTonAddress } from '../chains/ton/address.js';
import { jettonWalletAddress, OP_INTERNAL_TRANSFER, OP_TRANSFER, tonCore } from '../chains/ton/jetton.js';
import { closeServer, listenLoopback } from './loopback.js';

export interface SimulatedTonOptions {
  port?: number;
  blockIntervalMs: number;
  now?: () => number;
}

export interface TonPayment {
  /** The receiving wallet (owner), any form. */
  owner: string;
  raw: bigint;
  /** The text comment of the transfer's forward payload. */
  comment?: string;
  /** The payer (owner of the sending jetton wallet); default a fixed devnet payer. */
  from?: string;
  /** A jetton master that is not the devnet's USDT. */
  master?: string;
  /** The sender's jetton wallet transaction aborts: nothing is sent. */
  failed?: boolean;
}

export interface TonPaymentResult {
  /** The sender's jetton wallet transaction (hex). */
  txHash: string;
  /** The receiving jetton wallet's transaction (hex); undefined when the transfer failed. */
  receiptHash: string | undefined;
  /** The masterchain block of the sender's transaction; the receipt is committed by the next one. */
  seqno: number;
  /** The time of the sender's transaction's block. */
  sentAtMs: number;
  /** When the receipt's masterchain block comes: from then on the watcher can confirm it. */
  committedAtMs: number;
  jettonWallet: string;
}

export interface SimulatedTon {
  /** The API root, as [[ton.networks]] providers name it (…/api/v3 is appended by the paths). */
  url: string;
  seqno(): number;
  pay(p: TonPayment): Promise<TonPaymentResult>;
  close(): Promise<void>;
}

const SHARD = '8000000000000000';
const GLOBAL_ID = NETWORKS['ton-devnet'].chainId!;
const USDT_MASTER = NETWORKS['ton-devnet'].tokens[0]!.contract;
const sha = (s: string) => createHash('sha256').update(s).digest();

/** The payer of a payment that names none: 0: + sha256("gatewayd ton-devnet payer"). */
export const DEFAULT_TON_PAYER = `0:${sha('gatewayd ton-devnet payer').toString('hex')}`;
/** A jetton master that calls itself USDT but is not the devnet's: 0: + sha256("gatewayd ton-devnet fake USDT"). */
export const FAKE_TON_MASTER = `0:${sha('gatewayd ton-devnet fake USDT').toString('hex')}`;

interface Transfer {
  sourceOwner: string;
  sourceWallet: string;
  destOwner: string;
  destWallet: string;
  master: string;
  amount: bigint;
  body: string;
  traceId: string;
  failed: boolean;
  source: { hash: Buffer; lt: bigint; mc: number; now: number };
  dest: { hash: Buffer; lt: bigint; mc: number; now: number } | undefined;
  msgHash: Buffer;
}

const upper = (raw: string) => raw.toUpperCase();
const b64 = (b: Buffer) => b.toString('base64');

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export async function startSimulatedTon(options: SimulatedTonOptions): Promise<SimulatedTon> {
  const now = options.now ?? Date.now;
  const interval = options.blockIntervalMs;
  const startMs = now() - 2 * interval;
  const head = () => Math.floor((now() - startMs) / interval) + 1;
  // gen_utime in whole seconds, rounded up: a payment made after an invoice never carries an earlier time.
  const timeOf = (n: number) => Math.ceil((startMs + (n - 1) * interval) / 1000);
  const transfers: Transfer[] = [];
  const blockOf = (n: number) => ({
    workchain: -1,
    shard: SHARD,
    seqno: n,
    root_hash: b64(sha(`gatewayd ton-devnet mc ${n}`)),
    file_hash: b64(sha(`gatewayd ton-devnet mc file ${n}`)),
    global_id: GLOBAL_ID,
    version: 0,
    gen_utime: String(timeOf(n)),
    start_lt: String(n * 1000),
    end_lt: String(n * 1000 + 999),
  });
  const tx = (account: string, t: { hash: Buffer; lt: bigint; mc: number; now: number }, ok: boolean, inMsg: object, outMsgs: object[]) => ({
    account: upper(account),
    hash: b64(t.hash),
    lt: String(t.lt),
    now: t.now,
    mc_block_seqno: t.mc,
    trace_id: undefined as string | undefined,
    orig_status: 'active',
    end_status: 'active',
    description: {
      type: 'ord',
      aborted: !ok,
      destroyed: false,
      credit_first: false,
      compute_ph: { skipped: false, success: ok, exit_code: ok ? 0 : 705 },
      action: { success: ok, valid: true, no_funds: false },
    },
    block_ref: { workchain: 0, shard: SHARD, seqno: 40_000 + t.mc },
    in_msg: inMsg,
    out_msgs: outMsgs,
    emulated: false,
    finality: 'finalized',
  });
  const outMsg = (t: Transfer) => ({
    hash: b64(t.msgHash),
    source: upper(t.sourceWallet),
    destination: upper(t.destWallet),
    value: '50000000',
    fwd_fee: '1000000',
    opcode: `0x${OP_INTERNAL_TRANSFER.toString(16)}`,
    bounce: true,
    bounced: false,
    created_lt: String(t.source.lt + 1n),
    message_content: { hash: b64(sha(t.body)), body: t.body, decoded: null },
  });
  function trace(t: Transfer, h: number) {
    const source = tx(
      t.sourceWallet,
      t.source,
      !t.failed,
      {
        hash: b64(sha(`in ${t.traceId}`)),
        source: upper(t.sourceOwner),
        destination: upper(t.sourceWallet),
        opcode: `0x0${OP_TRANSFER.toString(16)}`,
        bounced: false,
      },
      t.failed ? [] : [outMsg(t)],
    );
    source.trace_id = t.traceId;
    const txs: Record<string, unknown> = { [source.hash]: source };
    if (t.dest && t.dest.mc <= h) {
      const dest = tx(t.destWallet, t.dest, true, outMsg(t), []);
      dest.trace_id = t.traceId;
      txs[dest.hash] = dest;
    }
    return { trace_id: t.traceId, is_incomplete: !(t.dest && t.dest.mc <= h) && !t.failed, transactions: txs, transactions_order: Object.keys(txs) };
  }
  function record(t: Transfer) {
    return {
      query_id: '1',
      source: upper(t.sourceOwner),
      destination: upper(t.destOwner),
      amount: String(t.amount),
      source_wallet: upper(t.sourceWallet),
      jetton_master: upper(t.master),
      transaction_hash: b64(t.source.hash),
      transaction_lt: String(t.source.lt),
      transaction_now: t.source.now,
      transaction_aborted: t.failed,
      response_destination: upper(t.sourceOwner),
      custom_payload: null,
      forward_ton_amount: '1',
      forward_payload: null,
      trace_id: t.traceId,
    };
  }
  const raw = (text: string | null) => (text === null ? undefined : canonicalTonAddress(text));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET') return send(res, 405, { error: 'method not allowed' });
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const p = url.pathname;
    const q = url.searchParams;
    const h = head();
    if (p === '/api/v3/masterchainInfo') return send(res, 200, { first: blockOf(1), last: blockOf(h) });
    if (p === '/api/v3/blocks') {
      const seqno = Number(q.get('seqno'));
      const ok = q.get('workchain') === '-1' && Number.isSafeInteger(seqno) && seqno >= 1 && seqno <= h;
      return send(res, 200, { blocks: ok ? [blockOf(seqno)] : [] });
    }
    if (p === '/api/v3/jetton/transfers') {
      const owners = new Set(q.getAll('owner_address').map(raw));
      const master = raw(q.get('jetton_master'));
      const start = BigInt(/^[0-9]+$/.test(q.get('start_lt') ?? '') ? q.get('start_lt')! : '0');
      const limit = Math.min(Number(q.get('limit') ?? 10) || 10, 1000);
      const offset = Number(q.get('offset') ?? 0) || 0;
      const rows = transfers
        .filter((t) => t.source.mc <= h && owners.has(t.destOwner) && (master === undefined || t.master === master) && t.source.lt >= start)
        .sort((a, b) => (a.source.lt < b.source.lt ? -1 : 1))
        .map(record);
      return send(res, 200, { jetton_transfers: rows.slice(offset, offset + limit), address_book: {}, metadata: {} });
    }
    if (p === '/api/v3/traces') {
      const ids = new Set(q.getAll('trace_id'));
      const hashes = new Set(q.getAll('tx_hash'));
      const found = transfers.filter((t) => t.source.mc <= h && (ids.has(t.traceId) || hashes.has(b64(t.source.hash))));
      return send(res, 200, { traces: found.map((t) => trace(t, h)), address_book: {}, metadata: {} });
    }
    return send(res, 404, { error: `no ${p}` });
  }

  const { server, url } = await listenLoopback(options.port ?? 0, handle);

  async function pay(p: TonPayment): Promise<TonPaymentResult> {
    const { Address, beginCell } = await tonCore();
    const destOwner = canonicalTonAddress(p.owner);
    const sourceOwner = canonicalTonAddress(p.from ?? DEFAULT_TON_PAYER);
    if (!destOwner || !sourceOwner) throw new Error('not a TON address');
    const master = p.master ?? USDT_MASTER;
    const body = beginCell()
      .storeUint(OP_INTERNAL_TRANSFER, 32)
      .storeUint(1n, 64)
      .storeCoins(p.raw)
      .storeAddress(Address.parseRaw(sourceOwner))
      .storeAddress(Address.parseRaw(sourceOwner))
      .storeCoins(1n);
    if (p.comment === undefined) body.storeBit(0);
    else body.storeBit(1).storeRef(beginCell().storeUint(0, 32).storeStringTail(p.comment).endCell());
    // Sent now, the payer's jetton wallet transaction is in the next masterchain block.
    const mc = head() + 1;
    const i = transfers.length + 1;
    const t: Transfer = {
      sourceOwner,
      sourceWallet: await jettonWalletAddress(master, sourceOwner),
      destOwner,
      destWallet: await jettonWalletAddress(master, destOwner),
      master,
      amount: p.raw,
      body: body.endCell().toBoc().toString('base64'),
      traceId: b64(randomBytes(32)),
      failed: p.failed === true,
      source: { hash: randomBytes(32), lt: BigInt(mc * 1000 + 10 + (i % 400)), mc, now: timeOf(mc) },
      dest: undefined,
      msgHash: randomBytes(32),
    };
    if (!t.failed) t.dest = { hash: randomBytes(32), lt: BigInt((mc + 1) * 1000 + 20 + (i % 400)), mc: mc + 1, now: timeOf(mc + 1) };
    transfers.push(t);
    return {
      txHash: t.source.hash.toString('hex'),
      receiptHash: t.dest?.hash.toString('hex'),
      seqno: mc,
      sentAtMs: timeOf(mc) * 1000,
      committedAtMs: startMs + mc * interval,
      jettonWallet: t.destWallet,
    };
  }

  return { url, seqno: head, pay, close: () => closeServer(server, []) };
}
