/**
 * Simulated EVM devnets: one HTTP server on loopback serving the JSON-RPC of each `{chain}-devnet`
 * twin at its own path (http://127.0.0.1:PORT/bsc-devnet, ...), in the shapes the EVM reader and a
 * real provider use (evm-rpc.ts), batches included. Each chain (evm-chain.ts) grows with the clock,
 * with `safe` and `finalized` trailing the latest, filler traffic in every block, transfers injected
 * on demand and reorgs on demand. Like the simulated TRON node it is product code so that
 * `gatewayd dev` and the test suite share one stand-in; `gatewayd serve` never imports it.
 *
 * The transport is geth's: POST with Content-Type application/json (415 otherwise), a parse error
 * is -32700, an empty batch or one of more than 1000 calls is one -32600 error, a call without an id
 * (a notification) gets no answer.
 *
 * Control, in process: the object `startSimulatedEvm` returns. From another process (Host a loopback
 * address or localhost, Content-Type application/json):
 *   GET  /_sim/state          -> {"networks": {id: {chain_id, url, latest, safe, finalized, ...}}, "requests": {...}}
 *   POST /_sim/reorg          {"network", "depth", "drop"?, "past_finality"?} -> {"from", "to", "dropped"}
 *   POST /_sim/fault          {"network"?, "method"?, "fault": {...}, "times"?}
 *   POST /_sim/clear-faults
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { EvmNetworkId, Network } from '../chains/networks.js';
import { isLoopbackHostHeader } from '../cli/dev-token.js';
import { EvmSimChain, type EvmChainOptions } from './evm-chain.js';
import { closeServer, listenLoopback, readBody } from './loopback.js';
import { answerCall, type RpcErrorObject, type RpcLimits } from './evm-rpc.js';

export { DEFAULT_EVM_PAYER, FAKE_EVM_CONTRACTS, EvmSimChain, type EvmSimTransfer, type EvmSimTransferResult } from './evm-chain.js';

/**
 * A queued fault for the next call(s) of a method:
 * - status: the whole HTTP request is answered so (429 with Retry-After, 503, an HTML error page);
 * - error: this call answers a JSON-RPC error object (a provider's refusal);
 * - hang: no answer at all (until the node closes).
 */
export type EvmFault =
  { status: number; body?: string | Record<string, unknown>; headers?: Record<string, string> } | { error: RpcErrorObject } | { hang: true };

export interface EvmSimOptions extends Omit<EvmChainOptions, 'network'> {
  /** The EVM networks to simulate (each must be a test network). */
  networks: readonly Readonly<Network>[];
  /** The most blocks one eth_getLogs may span (default 1000); 0 = no cap. */
  maxBlockRange?: number;
  /** The most logs one eth_getLogs may return (default 10 000). */
  maxResults?: number;
  /** Listen port on 127.0.0.1; default 0 (any free port). */
  port?: number;
}

export interface SimulatedEvm {
  /** The server's base URL; each network is at `urlOf(id)`. */
  readonly url: string;
  urlOf(network: EvmNetworkId): string;
  /** The simulated chain of a network, if this node runs it. */
  chain(network: string): EvmSimChain | undefined;
  readonly networks: readonly EvmNetworkId[];
  readonly limits: RpcLimits;
  /** Queues `fault` for the next `times` calls of `method` ('*' = any) on `network` ('*' = any). */
  fail(network: EvmNetworkId | '*', method: string, fault: EvmFault, times?: number): void;
  clearFaults(): void;
  /** Calls answered (each call of a batch counts), optionally of one network and one method. */
  count(network?: EvmNetworkId, method?: string): number;
  /** HTTP requests received (a batch is one), and the bytes sent back. */
  requests(network?: EvmNetworkId): number;
  bytes(network?: EvmNetworkId): number;
  resetCounts(): void;
  close(): Promise<void>;
}

interface Seen {
  network: string;
  methods: string[];
  bytes: number;
}

const MAX_BATCH = 1000;
const MAX_BODY = 5 * 1024 * 1024;

class Node implements SimulatedEvm {
  url = '';
  server!: Server;
  readonly limits: RpcLimits;
  private readonly chains = new Map<string, EvmSimChain>();
  private readonly faults = new Map<string, EvmFault[]>();
  private readonly seen: Seen[] = [];
  private readonly hung = new Set<ServerResponse>();

  constructor(options: EvmSimOptions) {
    const { networks, maxBlockRange, maxResults, port: _port, ...chainOptions } = options;
    for (const network of networks) {
      if (!network.test) throw new Error(`${network.id} is a real network: only test networks are simulated`);
      this.chains.set(network.id, new EvmSimChain({ ...chainOptions, network }));
    }
    this.limits = { maxBlockRange: maxBlockRange ?? 1000, maxResults: maxResults ?? 10_000 };
  }

  get networks(): EvmNetworkId[] {
    return [...this.chains.keys()] as EvmNetworkId[];
  }

  urlOf(network: EvmNetworkId): string {
    return `${this.url}/${network}`;
  }

  chain(network: string): EvmSimChain | undefined {
    return this.chains.get(network);
  }

  fail(network: EvmNetworkId | '*', method: string, fault: EvmFault, times = 1): void {
    const key = `${network} ${method}`;
    const list = this.faults.get(key) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.faults.set(key, list);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  private takeFault(network: string, method: string): EvmFault | undefined {
    for (const key of [`${network} ${method}`, `${network} *`, `* ${method}`, '* *']) {
      const fault = this.faults.get(key)?.shift();
      if (fault) return fault;
    }
    return undefined;
  }

  count(network?: EvmNetworkId, method?: string): number {
    return this.of(network).reduce((sum, s) => sum + (method ? s.methods.filter((m) => m === method).length : s.methods.length), 0);
  }

  requests(network?: EvmNetworkId): number {
    return this.of(network).length;
  }

  bytes(network?: EvmNetworkId): number {
    return this.of(network).reduce((sum, s) => sum + s.bytes, 0);
  }

  private of(network: string | undefined): Seen[] {
    return this.seen.filter((s) => s.network !== '_sim' && (network === undefined || s.network === network));
  }

  resetCounts(): void {
    this.seen.length = 0;
  }

  close(): Promise<void> {
    return closeServer(this.server, this.hung);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sim').pathname.replace(/\/+$/, '');
    const seen: Seen = { network: path.slice(1), methods: [], bytes: 0 };
    this.seen.push(seen);
    if (this.seen.length > 50_000) this.seen.splice(0, 25_000); // bounded for a long-running dev node
    const reply = (status: number, body: string, headers: Record<string, string> = {}) => {
      seen.bytes = Buffer.byteLength(body);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    };
    const received = await readBody(req, MAX_BODY);
    const raw = received.tooLarge ? undefined : received.text;
    if (path.startsWith('/_sim/')) {
      seen.network = '_sim';
      return this.control(req, path, raw, reply);
    }
    const chain = this.chains.get(path.slice(1));
    if (!chain) {
      return reply(404, JSON.stringify({ error: `no simulated network at ${path || '/'}; POST JSON-RPC to ${this.networks.map((n) => `/${n}`).join(', ')}` }));
    }
    if (req.method !== 'POST') return reply(405, JSON.stringify({ error: 'method not allowed: POST JSON-RPC' }), { allow: 'POST' });
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
      return reply(415, 'invalid content type, only application/json is supported', { 'content-type': 'text/plain' });
    if (raw === undefined) return reply(413, 'content length too large', { 'content-type': 'text/plain' });
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return reply(200, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }));
    }
    const batch = Array.isArray(body);
    const calls = batch ? (body as unknown[]) : [body];
    if (batch && calls.length === 0) return reply(200, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } }));
    if (calls.length > MAX_BATCH) return reply(200, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } }));
    const answers: unknown[] = [];
    for (const call of calls) {
      const c = call as { id?: unknown; method?: unknown; params?: unknown } | null;
      if (typeof c !== 'object' || c === null || typeof c.method !== 'string') {
        answers.push({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } });
        continue;
      }
      seen.methods.push(c.method);
      const fault = this.takeFault(chain.network.id, c.method);
      if (fault && 'hang' in fault) {
        this.hung.add(res);
        return;
      }
      if (fault && 'status' in fault) {
        return reply(fault.status, typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body ?? {}), fault.headers);
      }
      const answer = fault ? { error: fault.error } : answerCall(chain, c.method, c.params, this.limits);
      if (!('id' in c)) continue; // a notification: no answer
      answers.push({ jsonrpc: '2.0', id: c.id, ...answer });
    }
    if (answers.length === 0) return reply(200, '');
    return reply(200, JSON.stringify(batch ? answers : answers[0]));
  }

  private control(req: IncomingMessage, path: string, raw: string | undefined, reply: (s: number, b: string) => void): void {
    const json = (status: number, value: unknown) => reply(status, JSON.stringify(value));
    // Like the dev control routes: a DNS-rebinding page sends its own host name, and is refused.
    if (!isLoopbackHostHeader(req.headers.host)) return json(403, { error: 'the control paths answer only requests to a loopback address or localhost' });
    if (path === '/_sim/state') return json(200, this.state());
    if (req.method !== 'POST' || !/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return json(400, { error: 'POST a JSON body' });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw || '{}') as Record<string, unknown>;
    } catch {
      return json(400, { error: 'the body is not JSON' });
    }
    try {
      if (path === '/_sim/reorg') {
        const chain = this.chains.get(String(body.network));
        if (!chain) return json(400, { error: `network must be one of ${this.networks.join(', ')}` });
        return json(200, chain.reorg(Number(body.depth), { drop: body.drop === true, pastFinality: body.past_finality === true }));
      }
      if (path === '/_sim/fault') {
        this.fail(
          (body.network as EvmNetworkId | undefined) ?? '*',
          (body.method as string | undefined) ?? '*',
          body.fault as EvmFault,
          (body.times as number | undefined) ?? 1,
        );
        return json(200, { ok: true });
      }
      if (path === '/_sim/clear-faults') {
        this.clearFaults();
        return json(200, { ok: true });
      }
      return json(404, { error: 'unknown control path' });
    } catch (err) {
      return json(400, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  private state(): Record<string, unknown> {
    const networks: Record<string, unknown> = {};
    for (const [id, c] of this.chains) {
      networks[id] = {
        chain_id: c.chainId,
        url: this.urlOf(id as EvmNetworkId),
        latest: c.latest(),
        safe: c.safe(),
        finalized: c.finalized(),
        block_interval_ms: c.interval,
        finality_lag: c.lag,
        requests: this.requests(id as EvmNetworkId),
        calls: this.count(id as EvmNetworkId),
      };
    }
    return { networks, max_block_range: this.limits.maxBlockRange, max_results: this.limits.maxResults };
  }
}

/** Starts the simulated EVM devnets on 127.0.0.1, one path per network. */
export async function startSimulatedEvm(options: EvmSimOptions): Promise<SimulatedEvm> {
  const node = new Node(options);
  const { server, url } = await listenLoopback(options.port ?? 0, (req, res) => node.handle(req, res));
  node.server = server;
  node.url = url;
  return node;
}
