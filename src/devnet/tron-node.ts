/**
 * A simulated TRON node: a real HTTP server on loopback that answers the java-tron HTTP API the
 * chain watcher reads, with java-tron's shapes, a chain that grows with the clock, solidification
 * lagging the head, realistic filler traffic in every block, payments injected on demand and
 * faults injected on demand. It is product code so that `gatewayd dev` and the test suite share
 * one stand-in; nothing in the gateway's serving path imports it.
 *
 * Served (GET with query parameters or POST with a JSON body, as java-tron accepts both):
 *   /wallet/getnowblock, /walletsolidity/getnowblock            the head / the solidified head block
 *   /wallet[solidity]/gettransactioninfobyblocknum {"num": n}   every TransactionInfo of block n
 *   /wallet[solidity]/getblockbynum {"num": n}                  block n with its transactions
 *   /wallet[solidity]/getblock {"id_or_num"?: "n", "detail"?: b} block n (default: the head), header only unless detail
 *   /wallet[solidity]/gettransactioninfobyid {"value": txid}    one TransactionInfo
 *   /wallet[solidity]/gettransactioncountbyblocknum {"num": n}  {"count": N}, or {} for 0
 *   /wallet/getblockbylimitnext {"startNum": a, "endNum": b}     {"block": [blocks a..b-1 up to the head]}, or {}
 * A solidity endpoint answers `[]` / `{}` for a block above the solidified head, as java-tron does.
 *
 * The chain is a function of time: block n has the timestamp
 *   genesisTime + (n - genesisBlock) * blockIntervalMs
 * and the head is the newest block whose timestamp is not in the future of `now()`. With the real
 * clock a block appears every `blockIntervalMs`; with a test's manual clock blocks appear as the
 * test moves time. Filler transactions are derived from (seed, block number), so a block reads
 * the same every time (unless a fault says otherwise) and memory stays flat over any range.
 *
 * Control, in process: the object `startSimulatedTron` returns. Control from another process:
 *   POST /_sim/transfer  {"to": "T...", "amount": "41.677389" | 41677389, "from"?, "contract"?,
 *                         "result"?: "SUCCESS"|"FAILED"|"REVERT", "at"?: ms | ISO, "block"?: n}
 *                        -> {"tx_id", "block_number", "block_timestamp", "log_index"}
 *   POST /_sim/fault     {"endpoint": "blockinfo"|..., "fault": {...}, "times"?: n}
 *   POST /_sim/clear-faults
 *   GET  /_sim/state     -> {"head", "solid_head", "requests": {...}, "bytes": {...}}
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { closeServer, listenLoopback, readBody } from './loopback.js';
import { SimChain, type SimTransfer, type SimTransferResult, type SimulatedTronOptions } from './sim-chain.js';

export { FAKE_USDT_CONTRACTS, TRANSFER_TOPIC, SimChain, type SimTransfer, type SimTransferResult, type SimulatedTronOptions } from './sim-chain.js';

/** The endpoints, as named by fault injection and request counts. */
export type SimEndpoint =
  | 'nowblock'
  | 'wallet_nowblock'
  | 'blockinfo'
  | 'wallet_blockinfo'
  | 'block'
  | 'wallet_block'
  | 'getblock'
  | 'wallet_getblock'
  | 'txinfo'
  | 'wallet_txinfo'
  | 'txcount'
  | 'wallet_txcount'
  | 'wallet_blockrange';
const ENDPOINTS: Record<string, SimEndpoint> = {
  '/walletsolidity/getnowblock': 'nowblock',
  '/wallet/getnowblock': 'wallet_nowblock',
  '/walletsolidity/gettransactioninfobyblocknum': 'blockinfo',
  '/wallet/gettransactioninfobyblocknum': 'wallet_blockinfo',
  '/walletsolidity/getblockbynum': 'block',
  '/wallet/getblockbynum': 'wallet_block',
  '/walletsolidity/getblock': 'getblock',
  '/wallet/getblock': 'wallet_getblock',
  '/walletsolidity/gettransactioninfobyid': 'txinfo',
  '/wallet/gettransactioninfobyid': 'wallet_txinfo',
  '/walletsolidity/gettransactioncountbyblocknum': 'txcount',
  '/wallet/gettransactioncountbyblocknum': 'wallet_txcount',
  '/wallet/getblockbylimitnext': 'wallet_blockrange',
};

/**
 * A queued fault for the next request(s) to an endpoint:
 * - status: any HTTP answer (429 with TronGrid's body, 5xx, 401...);
 * - raw: a 200 whose body is not the JSON asked for (an HTML error page, truncated JSON);
 * - hang: no answer at all (the connection stays open until the node closes);
 * - inconsistent: the block's transaction infos (or one transaction's, by id) come back altered
 *   (one watched transfer's amount changed, or the whole answer mutated), as a lying provider might.
 */
export type SimFault =
  { status: number; body?: string | Record<string, unknown>; headers?: Record<string, string> } | { raw: string } | { hang: true } | { inconsistent: true };

export interface SimRequest {
  endpoint: SimEndpoint | 'control' | 'unknown';
  path: string;
  body: string;
  headers: IncomingMessage['headers'];
  /** Bytes sent on the wire (after compression when the client asked for it). */
  bytes: number;
}

export interface SimulatedTron {
  readonly url: string;
  readonly requests: SimRequest[];
  /** Injects a transfer (or a failed call) into a block; returns where it landed. */
  transfer(t: SimTransfer): SimTransferResult;
  /** Takes an injected transaction out of its block above the solidified head (the block is replaced by another); false when it is solidified or unknown. */
  drop(txId: string): boolean;
  /**
   * Injects a transaction with a hand-made TransactionInfo (any logs, receipt, result), for attack
   * cases the transfer() shapes do not cover; id, blockNumber and blockTimeStamp are filled in
   * unless given.
   */
  injectInfo(o: { info: Record<string, unknown>; at?: number; block?: number }): SimTransferResult;
  /** Queues `fault` for the next `times` requests to `endpoint` ('*' = any endpoint). */
  fail(endpoint: SimEndpoint | '*', fault: SimFault, times?: number): void;
  clearFaults(): void;
  /** The head and the solidified head block numbers and timestamps now. */
  head(): { number: number; timestamp: number };
  solidHead(): { number: number; timestamp: number };
  /** Number and timestamp of the first block at or after `ms`. */
  blockAt(ms: number): { number: number; timestamp: number };
  blockTime(n: number): number;
  /** The TransactionInfo list of block n as the node serves it (without faults). */
  blockInfos(n: number): Record<string, unknown>[];
  /** Requests seen, optionally for one endpoint. */
  count(endpoint?: SimEndpoint): number;
  bytes(endpoint?: SimEndpoint): number;
  resetCounts(): void;
  /** Stops or resumes answering on the loopback port (a provider going down and back). */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

class Node extends SimChain implements SimulatedTron {
  readonly requests: SimRequest[] = [];
  url = '';
  private readonly faults = new Map<string, SimFault[]>();
  private readonly hung = new Set<ServerResponse>();
  private down = false;
  server!: Server;

  fail(endpoint: SimEndpoint | '*', fault: SimFault, times = 1): void {
    const list = this.faults.get(endpoint) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.faults.set(endpoint, list);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  count(endpoint?: SimEndpoint): number {
    return endpoint ? this.requests.filter((r) => r.endpoint === endpoint).length : this.requests.filter((r) => r.endpoint !== 'control').length;
  }

  bytes(endpoint?: SimEndpoint): number {
    return this.requests.filter((r) => (endpoint ? r.endpoint === endpoint : r.endpoint !== 'control')).reduce((sum, r) => sum + r.bytes, 0);
  }

  resetCounts(): void {
    this.requests.length = 0;
  }

  setDown(down: boolean): void {
    this.down = down;
    if (down) this.server.closeAllConnections();
  }

  close(): Promise<void> {
    return closeServer(this.server, this.hung);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.down) {
      req.socket.destroy();
      return;
    }
    const { text: raw } = await readBody(req, 1 << 20);
    const url = new URL(req.url ?? '/', 'http://sim');
    // A provider may put an access token in the path before the API's (https://host/<token>/wallet/...).
    const path = url.pathname.replace(/\/+$/, '').replace(/^\/.*?(?=\/wallet(solidity)?\/)/, '');
    const seen: SimRequest = { endpoint: 'unknown', path, body: raw, headers: req.headers, bytes: 0 };
    this.requests.push(seen);
    if (this.requests.length > 50_000) this.requests.splice(0, 25_000); // bounded for a long-running dev node
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const reply = (status: number, text: string, headers: Record<string, string> = {}): void => {
      const compress = gzip && text.length > 1024;
      const buf = compress ? gzipSync(text, { level: 1 }) : Buffer.from(text);
      const h: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...headers };
      if (compress) h['content-encoding'] = 'gzip';
      seen.bytes = buf.length;
      res.writeHead(status, h);
      res.end(buf);
    };
    const json = (value: unknown): void => reply(200, JSON.stringify(value));

    if (path.startsWith('/_sim/') && this.options.control !== false) {
      seen.endpoint = 'control';
      return this.control(path, req.method ?? 'GET', raw, json, reply);
    }
    const endpoint = ENDPOINTS[path];
    if (!endpoint) return reply(404, JSON.stringify({ Error: 'not found' }));
    seen.endpoint = endpoint;
    const fault = this.faults.get(endpoint)?.shift() ?? this.faults.get('*')?.shift();
    if (fault && !('inconsistent' in fault)) {
      if ('hang' in fault) {
        this.hung.add(res);
        return;
      }
      if ('raw' in fault) return reply(200, fault.raw, { 'content-type': fault.raw.startsWith('<') ? 'text/html' : 'application/json' });
      return reply(fault.status, typeof fault.body === 'string' ? fault.body : fault.body === undefined ? '' : JSON.stringify(fault.body), fault.headers);
    }
    const params = parseParams(req.method ?? 'GET', url, raw);
    if (params === undefined) return json({ Error: 'class org.tron.core.services.http.JsonFormat$ParseException : 1:1: Expected "{".' });
    const solid = endpoint.startsWith('wallet_') ? this.head().number : this.solidHead().number;
    switch (endpoint) {
      case 'nowblock':
      case 'wallet_nowblock':
        return json(this.block(solid));
      case 'blockinfo':
      case 'wallet_blockinfo':
      case 'block':
      case 'wallet_block': {
        const num = Number(params.num);
        if (!Number.isSafeInteger(num) || num < 0) return json({ Error: 'class java.lang.NumberFormatException : invalid num' });
        const isInfo = endpoint.endsWith('blockinfo');
        if (num > solid || num < 0) return json(isInfo ? [] : {});
        if (!isInfo) return json(this.block(num));
        let infos = this.blockInfos(num);
        if (fault) infos = mutate(infos, new Set((this.injected.get(num) ?? []).map((t) => t.info.id as string)));
        return json(infos);
      }
      case 'txcount':
      case 'wallet_txcount': {
        // java-tron: {"count": N}, and {} (0 omitted as protobuf's default) for an empty or unknown block.
        const num = Number(params.num);
        if (!Number.isSafeInteger(num) || num < 0) return json({ Error: 'class java.lang.NumberFormatException : invalid num' });
        const n = num > solid ? 0 : this.blockInfos(num).length;
        return json(n === 0 ? {} : { count: n });
      }
      case 'wallet_blockrange': {
        const from = Number(params.startNum);
        const to = Math.min(Number(params.endNum), solid + 1);
        if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to - from > 100) return json({ Error: 'invalid startNum or endNum' });
        const blocks = [];
        for (let n = from; n < to; n++) blocks.push(this.block(n));
        return json(blocks.length === 0 ? {} : { block: blocks });
      }
      case 'getblock':
      case 'wallet_getblock': {
        const raw = params.id_or_num;
        const num = raw === undefined || raw === '' ? solid : Number(raw);
        if (!Number.isSafeInteger(num) || num < 0) return json({ Error: 'class java.lang.NumberFormatException : invalid id_or_num' });
        if (num > solid) return json({});
        return json(this.block(num, params.detail === true || params.detail === 'true'));
      }
      case 'txinfo':
      case 'wallet_txinfo': {
        const id = String(params.value ?? '').toLowerCase();
        for (const [n, txs] of this.injected) {
          if (n > solid) continue;
          const tx = txs.find((t) => t.info.id === id);
          if (tx) return json(fault ? (mutate([tx.info], new Set([id]))[0] ?? {}) : tx.info);
        }
        return json({});
      }
    }
  }

  private control(path: string, method: string, raw: string, json: (v: unknown) => void, reply: (s: number, t: string) => void): void {
    const bad = (message: string) => reply(400, JSON.stringify({ error: message }));
    let body: Record<string, unknown> = {};
    if (method === 'POST' && raw !== '') {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return bad('body is not JSON');
      }
    }
    try {
      if (path === '/_sim/state') {
        const byEndpoint = (f: (r: SimRequest) => number) => {
          const out: Record<string, number> = {};
          for (const r of this.requests) if (r.endpoint !== 'control') out[r.endpoint] = (out[r.endpoint] ?? 0) + f(r);
          return out;
        };
        return json({
          head: this.head(),
          solid_head: this.solidHead(),
          block_interval_ms: this.interval,
          requests: byEndpoint(() => 1),
          bytes: byEndpoint((r) => r.bytes),
        });
      }
      if (method !== 'POST') return bad('use POST');
      if (path === '/_sim/transfer') {
        const at = typeof body.at === 'string' ? Date.parse(body.at) : (body.at as number | undefined);
        const r = this.transfer({
          to: String(body.to),
          amount: body.amount as string | number,
          from: body.from as string | undefined,
          contract: body.contract as string | undefined,
          result: body.result as SimTransfer['result'],
          at,
          block: body.block as number | undefined,
        });
        return json({
          tx_id: r.txId,
          block_number: r.blockNumber,
          block_timestamp: r.blockTimestamp,
          log_index: r.logIndex,
          solid_head: this.solidHead().number,
        });
      }
      if (path === '/_sim/fault') {
        this.fail(body.endpoint as SimEndpoint, body.fault as SimFault, (body.times as number | undefined) ?? 1);
        return json({ ok: true });
      }
      if (path === '/_sim/clear-faults') {
        this.clearFaults();
        return json({ ok: true });
      }
      return reply(404, JSON.stringify({ error: 'unknown control path' }));
    } catch (err) {
      return bad(err instanceof Error ? err.message : String(err));
    }
  }
}

/**
 * An altered copy of a block's infos: the amount of the first injected transfer (else of the first
 * log) is one micro-unit more, or, without any log, a transaction is dropped.
 */
function mutate(infos: Record<string, unknown>[], injected: Set<string>): Record<string, unknown>[] {
  const copy = structuredClone(infos);
  const hasLog = (i: Record<string, unknown>) => Array.isArray(i.log) && (i.log as unknown[]).length > 0;
  const withLog = copy.find((i) => hasLog(i) && injected.has(i.id as string)) ?? copy.find(hasLog);
  if (withLog) {
    const log = (withLog.log as Array<{ data: string }>)[0]!;
    log.data = (BigInt(`0x${log.data}`) + 1n).toString(16).padStart(64, '0');
    return copy;
  }
  return copy.slice(1);
}

function parseParams(method: string, url: URL, raw: string): Record<string, unknown> | undefined {
  const fromQuery = Object.fromEntries(url.searchParams);
  if (method !== 'POST' || raw.trim() === '') return fromQuery;
  try {
    const body = JSON.parse(raw) as unknown;
    return typeof body === 'object' && body !== null ? { ...fromQuery, ...(body as Record<string, unknown>) } : undefined;
  } catch {
    return undefined;
  }
}

/** Starts a simulated TRON node on 127.0.0.1. */
export async function startSimulatedTron(options: SimulatedTronOptions = {}): Promise<SimulatedTron> {
  const node = new Node(options);
  const { server, url } = await listenLoopback(options.port ?? 0, (req, res) => node.handle(req, res));
  node.server = server;
  node.url = url;
  return node;
}
