/**
 * A loopback TronGrid + java-tron stand-in: a real node:http server answering the endpoints the
 * watcher uses with real-shaped bodies (as TronGrid and java-tron answer):
 *   GET  /v1/accounts/{address}/transactions/trc20   (filters, ordering, fingerprint pages)
 *   GET  /v1/contracts/{contract}/events             (the newest confirmed event: index progress)
 *   GET|POST /walletsolidity/gettransactioninfobyid, /wallet/gettransactioninfobyid
 *   GET|POST /walletsolidity/getnowblock, /wallet/getnowblock
 * Tests put records and receipts in, queue faults per endpoint, and read request counts; the
 * real-shaped data builders live in tron-samples.ts.
 *
 *   const tg = await startTronGrid({ now: () => t.clock.now() });
 *   const p = tg.pay({ to: address, amount: 41_677_389n, blockTimestamp: ms });   // record + receipt
 *   tg.fail('trc20', { status: 429, body: { Error: '... suspended for 30 s' } });
 *   tg.count('receipt');  await tg.close();
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hexToTronAddress, tronAddressToHex, USDT_CONTRACT } from '../../src/lib/tron.js';
import { blockNumberAt, failedReceipt, newTxId, SAMPLE_PAYER, successReceipt, transferLog, trc20Record, type Trc20Record } from './tron-samples.js';

export type Endpoint = 'trc20' | 'events' | 'receipt' | 'wallet_receipt' | 'nowblock' | 'wallet_nowblock';

/** A queued fault: an HTTP answer of any status and body, a raw (non-JSON) 200 body, or a hang. */
export type Fault =
  | { status: number; body?: string | Record<string, unknown>; headers?: Record<string, string> }
  | { raw: string }
  | { hang: true };

export interface RequestSeen {
  endpoint: Endpoint | 'unknown';
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

interface StoredRecord {
  record: Trc20Record;
  /** false: above the solidified head (only shown without only_confirmed). */
  confirmed: boolean;
}

export interface PayOptions {
  to: string;
  amount: bigint;
  blockTimestamp: number;
  from?: string;
  txId?: string;
  /** The receipt the solidity node gives: a real-shaped success (default), the failure, `{}`, or any body. */
  receipt?: 'success' | 'failed' | 'empty' | Record<string, unknown>;
  /** Not yet solidified: absent from only_confirmed feeds. */
  unconfirmed?: boolean;
}

export interface StartOptions {
  /** The stand-in's idea of now, for the default solidified head (now - 57 s). */
  now?: () => number;
}

export class FakeTronGrid {
  readonly requests: RequestSeen[] = [];
  /** Records per account, in insertion order (served sorted by block time). */
  readonly records = new Map<string, StoredRecord[]>();
  /** Solidity receipts per tx id; absent = `{}`. */
  readonly receipts = new Map<string, Record<string, unknown>>();
  /** Full-node (unsolidified) receipts per tx id; default: the solidity one. */
  readonly fullNodeReceipts = new Map<string, Record<string, unknown>>();
  /** Fixed solidified head; undefined = derived from `now` (57 s behind, the mainnet gap). */
  solidHead: { number: number; timestamp: number } | undefined;
  /** Block time of the newest confirmed event indexed; undefined = the solidified head's (no index lag). */
  indexedUpTo: number | undefined;
  /** Records per page regardless of `limit` (to exercise pagination with few records). */
  pageSize: number | undefined;
  private readonly faults = new Map<Endpoint, Fault[]>();
  private readonly hung = new Set<ServerResponse>();

  constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly now: () => number,
  ) {}

  /** A transfer to `to`: its TronGrid record and its solidity receipt, consistent with each other. */
  pay(opts: PayOptions): { txId: string; record: Trc20Record } {
    const txId = opts.txId ?? newTxId();
    const from = opts.from ?? SAMPLE_PAYER;
    const record = trc20Record({ txId, from, to: opts.to, amount: opts.amount, blockTimestamp: opts.blockTimestamp });
    this.addRecord(opts.to, record, { confirmed: !opts.unconfirmed });
    const kind = opts.receipt ?? 'success';
    if (kind === 'success') this.receipts.set(txId, successReceipt({ txId, blockTimestamp: opts.blockTimestamp, logs: [transferLog({ from, to: opts.to, amount: opts.amount })] }));
    else if (kind === 'failed') this.receipts.set(txId, failedReceipt({ txId, blockTimestamp: opts.blockTimestamp }));
    else if (kind === 'empty') this.receipts.delete(txId);
    else this.receipts.set(txId, kind);
    return { txId, record };
  }

  addRecord(account: string, record: Trc20Record, opts: { confirmed?: boolean } = {}): void {
    const list = this.records.get(account) ?? [];
    list.push({ record, confirmed: opts.confirmed ?? true });
    this.records.set(account, list);
  }

  /** Marks every record of a transaction as solidified (it then shows in only_confirmed feeds). */
  solidify(txId: string): void {
    for (const list of this.records.values()) for (const r of list) if (r.record.transaction_id === txId) r.confirmed = true;
  }

  /** Queues a fault for the next `times` requests to an endpoint. */
  fail(endpoint: Endpoint, fault: Fault, times = 1): void {
    const list = this.faults.get(endpoint) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.faults.set(endpoint, list);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  count(endpoint?: Endpoint): number {
    return endpoint ? this.requests.filter((r) => r.endpoint === endpoint).length : this.requests.length;
  }

  resetCounts(): void {
    this.requests.length = 0;
  }

  currentSolidHead(): { number: number; timestamp: number } {
    if (this.solidHead) return this.solidHead;
    const timestamp = Math.floor((this.now() - 57_000) / 3000) * 3000;
    return { number: blockNumberAt(timestamp), timestamp };
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** @internal the request handler */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const endpoint = endpointOf(url.pathname);
    this.requests.push({ endpoint, method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body });
    if (endpoint === 'unknown') return send(res, 404, { Error: 'not found' });
    const fault = this.faults.get(endpoint)?.shift();
    if (fault) {
      if ('hang' in fault) {
        this.hung.add(res);
        return;
      }
      if ('raw' in fault) return sendText(res, 200, fault.raw);
      return sendText(res, fault.status, typeof fault.body === 'string' ? fault.body : fault.body === undefined ? '' : JSON.stringify(fault.body), fault.headers);
    }
    switch (endpoint) {
      case 'trc20':
        return this.trc20(url, res);
      case 'events': {
        const at = this.indexedUpTo ?? this.currentSolidHead().timestamp;
        // One real-shaped USDT Transfer event (as TronGrid's events endpoint lists it) at the index position.
        return send(res, 200, {
          data: [
            {
              block_number: blockNumberAt(at),
              block_timestamp: at,
              caller_contract_address: USDT_CONTRACT,
              contract_address: USDT_CONTRACT,
              event_index: 0,
              event_name: 'Transfer',
              result: { '0': '0x01311788a9736dcc38cf6d53342c076c38e95ef2', '1': '0xb2ff692d318825a41b5668c4cefa263e8cdcc82e', '2': '1399000000', from: '0x01311788a9736dcc38cf6d53342c076c38e95ef2', to: '0xb2ff692d318825a41b5668c4cefa263e8cdcc82e', value: '1399000000' },
              result_type: { from: 'address', to: 'address', value: 'uint256' },
              event: 'Transfer(address indexed from, address indexed to, uint256 value)',
              transaction_id: createHash('sha256').update(String(at)).digest('hex'),
            },
          ],
          success: true,
          meta: { at: this.now(), page_size: 1 },
        });
      }
      case 'receipt':
      case 'wallet_receipt': {
        const txId = txIdOf(req.method, url, body);
        if (txId === undefined) return send(res, 200, { Error: 'class org.tron.core.services.http.JsonFormat$ParseException : 1:1: Expected "{".' });
        const receipt = endpoint === 'receipt' ? this.receipts.get(txId) : (this.fullNodeReceipts.get(txId) ?? this.receipts.get(txId));
        return send(res, 200, receipt ?? {});
      }
      case 'nowblock':
      case 'wallet_nowblock': {
        const head = this.currentSolidHead();
        const shown = endpoint === 'nowblock' ? head : { number: head.number + 19, timestamp: head.timestamp + 57_000 };
        return send(res, 200, {
          blockID: `${shown.number.toString(16).padStart(16, '0')}${createHash('sha256').update(String(shown.number)).digest('hex').slice(16)}`,
          block_header: {
            raw_data: { number: shown.number, txTrieRoot: '0'.repeat(64), witness_address: '41e7860196ad5b5718c1d6326babab039b70b8c1cd', parentHash: '0'.repeat(64), version: 34, timestamp: shown.timestamp },
            witness_signature: '0'.repeat(130),
          },
        });
      }
    }
  }

  private trc20(url: URL, res: ServerResponse): void {
    const account = decodeURIComponent(url.pathname.split('/')[3] ?? '');
    const accountBase58 = /^41[0-9a-fA-F]{40}$/.test(account) ? hexToTronAddress(account) : tronAddressToHex(account) ? account : undefined;
    if (!accountBase58) return send(res, 400, { success: false, error: 'A valid account address is required.', statusCode: 400 });
    const q = (snake: string): string | null => url.searchParams.get(snake) ?? url.searchParams.get(snake.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()));
    const limit = Number(q('limit') ?? 20);
    // The real service answers an oversized limit with 400 and an empty body.
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) return sendText(res, 400, '');
    if (q('only_confirmed') === 'true' && q('only_unconfirmed') === 'true') return send(res, 400, { success: false, error: 'only_confirmed and only_unconfirmed cannot be used together', statusCode: 400 });
    const contract = q('contract_address');
    const contractBase58 = contract && /^41[0-9a-fA-F]{40}$/.test(contract) ? hexToTronAddress(contract) : contract;
    const min = Number(q('min_timestamp') ?? q('min_block_timestamp') ?? 0);
    const max = Number(q('max_timestamp') ?? q('max_block_timestamp') ?? Number.MAX_SAFE_INTEGER);
    const asc = (q('order_by') ?? 'block_timestamp,desc') === 'block_timestamp,asc';
    let rows = (this.records.get(accountBase58) ?? []).filter((r) => {
      if (q('only_confirmed') === 'true' && !r.confirmed) return false;
      if (q('only_unconfirmed') === 'true' && r.confirmed) return false;
      if (q('only_to') === 'true' && r.record.to !== accountBase58) return false;
      if (q('only_from') === 'true' && r.record.from !== accountBase58) return false;
      if (contractBase58 && r.record.token_info.address !== contractBase58) return false;
      return r.record.block_timestamp >= min && r.record.block_timestamp <= max;
    });
    rows = rows
      .map((r, i) => ({ r, i }))
      .sort((a, b) => (asc ? a.r.record.block_timestamp - b.r.record.block_timestamp : b.r.record.block_timestamp - a.r.record.block_timestamp) || a.i - b.i)
      .map((x) => x.r);
    // The fingerprint is opaque to clients; here it carries the offset and the other parameters,
    // which must stay the same between pages.
    const others = new URLSearchParams(url.searchParams);
    others.delete('fingerprint');
    others.sort();
    const paramsHash = createHash('sha256').update(others.toString()).digest('hex').slice(0, 16);
    let offset = 0;
    const fp = q('fingerprint');
    if (fp) {
      const decoded = decodeFingerprint(fp);
      if (!decoded || decoded.h !== paramsHash) return send(res, 400, { success: false, error: 'fingerprint does not match the query', statusCode: 400 });
      offset = decoded.o;
    }
    const size = Math.min(limit, this.pageSize ?? limit);
    const page = rows.slice(offset, offset + size).map((r) => r.record);
    const meta: Record<string, unknown> = { at: this.now(), page_size: page.length };
    if (offset + size < rows.length) {
      const next = Buffer.from(JSON.stringify({ o: offset + size, h: paramsHash })).toString('base64url');
      meta.fingerprint = next;
      // Like the real service: links.next names api.trongrid.io. A client must not follow it.
      const nextParams = new URLSearchParams(url.searchParams);
      nextParams.set('fingerprint', next);
      meta.links = { next: `https://api.trongrid.io${url.pathname}?${nextParams}` };
    }
    send(res, 200, { data: page, success: true, meta });
  }
}

export async function startTronGrid(options: StartOptions = {}): Promise<FakeTronGrid> {
  let tg: FakeTronGrid | undefined;
  const server = createServer((req, res) => {
    tg!.handle(req, res).catch(() => {
      if (!res.headersSent) sendText(res, 500, '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tg = new FakeTronGrid(server, url, options.now ?? (() => Date.now()));
  return tg;
}

function endpointOf(path: string): Endpoint | 'unknown' {
  if (/^\/v1\/accounts\/[^/]+\/transactions\/trc20\/?$/.test(path)) return 'trc20';
  if (/^\/v1\/contracts\/[^/]+\/events\/?$/.test(path)) return 'events';
  if (path === '/walletsolidity/gettransactioninfobyid') return 'receipt';
  if (path === '/wallet/gettransactioninfobyid') return 'wallet_receipt';
  if (path === '/walletsolidity/getnowblock') return 'nowblock';
  if (path === '/wallet/getnowblock') return 'wallet_nowblock';
  return 'unknown';
}

function txIdOf(method: string | undefined, url: URL, body: string): string | undefined {
  if (method === 'GET') return url.searchParams.get('value') ?? undefined;
  try {
    const parsed = JSON.parse(body) as { value?: unknown };
    return typeof parsed.value === 'string' ? parsed.value : undefined;
  } catch {
    return undefined;
  }
}

function decodeFingerprint(fp: string): { o: number; h: string } | undefined {
  try {
    const v = JSON.parse(Buffer.from(fp, 'base64url').toString('utf8')) as { o?: unknown; h?: unknown };
    return typeof v.o === 'number' && typeof v.h === 'string' ? { o: v.o, h: v.h } : undefined;
  } catch {
    return undefined;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  sendText(res, status, JSON.stringify(body));
}

function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-trace-id': randomBytes(8).toString('hex'), ...headers });
  res.end(text);
}
