/**
 * Renders @ton/sandbox transactions into the two indexes' answers and serves them on loopback, so the
 * TON readers read transactions the TVM really executed (real hashes, lts, message bodies, aborted
 * flags, bounces). Each sandbox transaction is given a masterchain block (its position) and a shard
 * block; the jetton/transfers records are made from the senders' jetton wallet transactions as
 * toncenter's indexer makes them (the transfer body's destination, amount, the wallet's master).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Address, beginCell, storeMessage, type Message, type Transaction } from '@ton/core';

export interface Placed {
  tx: Transaction;
  account: Address;
  mc: number;
  /** The master of the jetton wallet whose account this is, for a sender's record. */
  master?: Address;
  traceId: string;
}

const SHARD = '8000000000000000';
const up = (a: Address | null | undefined) => (a ? a.toRawString().toUpperCase() : null);

function computeOf(tx: Transaction) {
  const d = tx.description;
  if (d.type !== 'generic') return { aborted: true, compute: { skipped: true } };
  const c = d.computePhase;
  return { aborted: d.aborted, compute: c.type === 'vm' ? { skipped: false, success: c.success, exit_code: c.exitCode } : { skipped: true, reason: c.reason } };
}

function messageHash(m: Message): string {
  return beginCell().store(storeMessage(m)).endCell().hash().toString('base64');
}

function toncenterMessage(m: Message) {
  const body = m.body.beginParse();
  const op = body.remainingBits >= 32 ? body.preloadUint(32) : undefined;
  const info = m.info;
  return {
    hash: messageHash(m),
    source: info.type === 'internal' ? up(info.src) : null,
    destination: info.type === 'external-out' ? null : up(info.dest as Address),
    opcode: op === undefined ? null : `0x${op.toString(16).padStart(8, '0')}`,
    bounced: info.type === 'internal' ? info.bounced : null,
    message_content: { body: m.body.toBoc().toString('base64') },
  };
}

function toncenterTx(p: Placed) {
  const { aborted, compute } = computeOf(p.tx);
  return {
    account: up(p.account),
    hash: p.tx.hash().toString('base64'),
    lt: String(p.tx.lt),
    now: p.tx.now,
    mc_block_seqno: p.mc,
    description: { type: 'ord', aborted, compute_ph: compute },
    block_ref: { workchain: 0, shard: SHARD, seqno: 50_000 + p.mc },
    in_msg: p.tx.inMessage ? toncenterMessage(p.tx.inMessage) : null,
    out_msgs: p.tx.outMessages.values().map(toncenterMessage),
    finality: 'finalized',
  };
}

/** toncenter's jetton/transfers record of a sender's jetton wallet transaction, if it received a transfer. */
function record(p: Placed) {
  const m = p.tx.inMessage;
  if (!p.master || !m || m.info.type !== 'internal') return undefined;
  const s = m.body.beginParse();
  if (s.remainingBits < 32 || s.loadUint(32) !== 0x0f8a7ea5) return undefined;
  const queryId = s.loadUintBig(64);
  const amount = s.loadCoins();
  const destination = s.loadAddress();
  return {
    query_id: String(queryId),
    source: up(m.info.src),
    destination: up(destination),
    amount: String(amount),
    source_wallet: up(p.account),
    jetton_master: up(p.master),
    transaction_hash: p.tx.hash().toString('base64'),
    transaction_lt: String(p.tx.lt),
    transaction_now: p.tx.now,
    transaction_aborted: computeOf(p.tx).aborted,
    trace_id: p.traceId,
  };
}

function tonapiTx(p: Placed) {
  const { aborted, compute } = computeOf(p.tx);
  const m = p.tx.inMessage;
  return {
    hash: p.tx.hash().toString('hex'),
    lt: Number(p.tx.lt),
    account: { address: up(p.account), is_scam: false, is_wallet: false },
    success: !aborted && compute.success === true,
    aborted,
    utime: p.tx.now,
    block: `(0,${SHARD},${50_000 + p.mc})`,
    compute_phase: compute,
    in_msg:
      m && m.info.type === 'internal'
        ? { msg_type: 'int_msg', bounced: m.info.bounced, source: { address: up(m.info.src) }, raw_body: m.body.toBoc().toString('hex') }
        : undefined,
  };
}

export async function serveSandbox(placed: () => Placed[], head: () => number) {
  const mcBlock = (n: number, tonapi: boolean) =>
    tonapi
      ? {
          workchain_id: -1,
          shard: SHARD,
          seqno: n,
          root_hash: Buffer.alloc(32, n % 256).toString('hex'),
          gen_utime: 1_780_000_000 + n,
          start_lt: 0,
          end_lt: 0,
          global_id: -239,
        }
      : {
          seqno: n,
          root_hash: Buffer.alloc(32, n % 256).toString('base64'),
          gen_utime: String(1_780_000_000 + n),
          start_lt: '0',
          end_lt: '0',
          global_id: -239,
        };
  const answer = (url: URL, body: any): [number, unknown] => {
    const all = placed().filter((p) => p.mc <= head());
    const p = decodeURIComponent(url.pathname);
    const q = url.searchParams;
    if (p === '/toncenter/api/v3/masterchainInfo') return [200, { last: mcBlock(head(), false) }];
    if (p === '/toncenter/api/v3/blocks') return [200, { blocks: [mcBlock(Number(q.get('seqno')), false)] }];
    if (p === '/toncenter/api/v3/jetton/transfers') {
      const owners = q.getAll('owner_address').map((o) => Address.parse(o).toRawString().toUpperCase());
      // Aborted records included, as toncenter's Python index answers them.
      const rows = all.map(record).filter((r) => r && owners.includes(r.destination!));
      return [200, { jetton_transfers: rows }];
    }
    if (p === '/toncenter/api/v3/traces') {
      const ids = q.getAll('trace_id');
      const traces = [...new Set(all.map((x) => x.traceId))].filter((id) => ids.includes(id));
      return [
        200,
        {
          traces: traces.map((id) => ({
            trace_id: id,
            transactions: Object.fromEntries(all.filter((x) => x.traceId === id).map((x) => [x.tx.hash().toString('base64'), toncenterTx(x)])),
          })),
        },
      ];
    }
    if (p === '/tonapi/v2/blockchain/masterchain-head') return [200, mcBlock(head(), true)];
    let m = /^\/tonapi\/v2\/blockchain\/blocks\/\((-?\d+),[0-9a-fA-F]+,(\d+)\)$/.exec(p);
    if (m)
      return [
        200,
        m[1] === '-1'
          ? mcBlock(Number(m[2]), true)
          : { workchain_id: 0, shard: SHARD, seqno: Number(m[2]), master_ref: `(-1,${SHARD},${Number(m[2]) - 50_001})` },
      ];
    m = /^\/tonapi\/v2\/blockchain\/masterchain\/(\d+)\/blocks$/.exec(p);
    if (m) return [200, { blocks: [mcBlock(Number(m[1]), true), { workchain_id: 0, shard: SHARD, seqno: 50_000 + Number(m[1]) }] }];
    if (p === '/tonapi/v2/blockchain/accounts/_bulk') {
      return [
        200,
        {
          accounts: body.account_ids.map((id: string) => ({
            address: id.toUpperCase(),
            status: 'active',
            last_transaction_lt: Math.max(0, ...all.filter((x) => x.account.toRawString() === id).map((x) => Number(x.tx.lt))),
          })),
        },
      ];
    }
    m = /^\/tonapi\/v2\/blockchain\/accounts\/([^/]+)\/transactions$/.exec(p);
    if (m) {
      const raw = Address.parse(m[1]!).toRawString();
      return [200, { transactions: all.filter((x) => x.account.toRawString() === raw && x.tx.lt > BigInt(q.get('after_lt') ?? '0')).map(tonapiTx) }];
    }
    return [404, { error: `no ${p}` }];
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [status, body] = answer(new URL(req.url!, 'http://x'), chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { toncenterUrl: `${base}/toncenter`, tonapiUrl: `${base}/tonapi`, close: () => new Promise<void>((r) => server.close(() => r())) };
}
