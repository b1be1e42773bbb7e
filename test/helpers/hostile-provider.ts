/**
 * A hostile TRON provider for tests: a small loopback HTTP proxy in front of an honest stand-in
 * (the simulated node) that passes every request through and can lie about heads, serve its
 * solidified data as the unsolidified head, omit transactions (from its blocks, or also by id),
 * forge or rewrite answers (of blocks, or by id), delay,
 * and rate-limit with Retry-After. Each behaviour is switched on and off while the test runs.
 *
 *   const liar = await startHostileProvider(node.url);
 *   liar.set({ head: (h) => ({ ...h, number: h.number + 1_000_000 }) });
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChainRuntime, runOnce } from '../../src/chain/chain.worker.js';
import { startSimulatedTron, type SimulatedTron } from '../../src/devnet/tron-node.js';
import { SECOND } from '../../src/lib/clock.js';
import { tronAddressToHex } from '../../src/lib/tron.js';
import { startTestApp, type TestApp } from './app.js';

type Json = Record<string, unknown>;

export interface Hostility {
  /** Rewrites the solidified head (a getblock without id_or_num, or getnowblock): number and timestamp. */
  head?: (h: { number: number; timestamp: number }) => { number: number; timestamp: number };
  /** Answers /walletsolidity/ requests from /wallet/ (a solidified head that runs ahead of the solidified blocks it serves). */
  solidIsHead?: boolean;
  /**
   * Transaction ids left out of every block-info answer and count (an omission); asked for one by
   * id, it still returns it, as the audited provider did (unless `deny` says otherwise).
   */
  omit?: ReadonlySet<string>;
  /** Transaction ids it denies knowing when asked by id (`{}`): with `omit`, a consistent omission. */
  deny?: ReadonlySet<string>;
  /** Rewrites a block-info answer of block `num` (forge, shift, corrupt); its count follows. */
  infos?: (num: number, infos: Json[]) => Json[];
  /** Rewrites its answer for one transaction by id (`undefined`: it does not know it, `{}`); with `infos`, a consistent forgery. */
  byId?: (id: string, info: Json | undefined) => Json | undefined;
  /** Answers every request late by this many ms. */
  delayMs?: number;
  /** The next N requests get 429 with Retry-After (seconds). */
  rateLimit?: { times: number; retryAfter: number };
}

export interface HostileProvider {
  readonly url: string;
  /** Paths asked, in order. */
  readonly paths: string[];
  set(h: Hostility): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startHostileProvider(upstream: string): Promise<HostileProvider> {
  let h: Hostility = {};
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://proxy');
      paths.push(url.pathname);
      if (h.delayMs) await new Promise((r) => setTimeout(r, h.delayMs));
      if (h.rateLimit && h.rateLimit.times > 0) {
        h.rateLimit.times -= 1;
        res.writeHead(429, { 'retry-after': String(h.rateLimit.retryAfter), 'content-type': 'application/json' });
        res.end(JSON.stringify({ Error: 'rate limited' }));
        return;
      }
      const path = h.solidIsHead ? url.pathname.replace('/walletsolidity/', '/wallet/') : url.pathname;
      const params = (body ? JSON.parse(body) : {}) as Json;
      // A coherent liar: its transaction count is that of the block infos it would serve.
      const counting = path.endsWith('gettransactioncountbyblocknum') && (h.omit || h.infos);
      const upPath = counting ? path.replace('gettransactioncountbyblocknum', 'gettransactioninfobyblocknum') : path;
      const up = await fetch(`${upstream}${upPath}${url.search}`, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body: req.method === 'POST' ? body : undefined,
      });
      let text = await up.text();
      if (up.ok && text.startsWith('{') && /getblock$|getnowblock$/.test(url.pathname) && params.id_or_num === undefined && h.head) {
        const block = JSON.parse(text) as { block_header: { raw_data: { number: number; timestamp: number } } };
        const lie = h.head(block.block_header.raw_data);
        block.block_header.raw_data.number = lie.number;
        block.block_header.raw_data.timestamp = lie.timestamp;
        text = JSON.stringify(block);
      }
      if (up.ok && text.startsWith('[') && url.pathname.endsWith('gettransactioninfobyblocknum')) {
        let infos = JSON.parse(text) as Json[];
        if (h.omit) infos = infos.filter((i) => !h.omit!.has(String(i.id)));
        if (h.infos) infos = h.infos(Number(params.num), infos);
        text = JSON.stringify(infos);
      }
      if (counting && up.ok && text.startsWith('[')) {
        let infos = JSON.parse(text) as Json[];
        if (h.omit) infos = infos.filter((i) => !h.omit!.has(String(i.id)));
        if (h.infos) infos = h.infos(Number(params.num), infos);
        text = JSON.stringify(infos.length === 0 ? {} : { count: infos.length });
      }
      if (up.ok && url.pathname.endsWith('gettransactioninfobyid')) {
        const id = String(params.value);
        const known = JSON.parse(text) as Json;
        let info: Json | undefined = Object.keys(known).length === 0 || h.deny?.has(id) ? undefined : known;
        if (h.byId) info = h.byId(id, info);
        text = JSON.stringify(info ?? {});
      }
      res.writeHead(up.status, { 'content-type': 'application/json' });
      res.end(text);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    set(next) {
      h = next;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

export type Role = 'node' | 'liar' | 'other';

export interface World {
  t: TestApp;
  node: SimulatedTron;
  /** A hostile proxy, and a second proxy (honest unless told otherwise). */
  liar: HostileProvider;
  other: HostileProvider;
  pass(ms?: number): Promise<void>;
  health(): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export async function world(roles: Role[], opts: { dbPath?: string; config?: Record<string, Record<string, unknown>> } = {}): Promise<World> {
  let now = Date.UTC(2026, 0, 15, 12, 0, 0);
  const node = await startSimulatedTron({ now: () => now });
  const liar = await startHostileProvider(node.url);
  const other = await startHostileProvider(node.url);
  const urls: Record<Role, string> = { node: node.url, liar: liar.url, other: other.url };
  const t = await startTestApp({
    now,
    config: {
      ...(opts.dbPath ? { database: { path: opts.dbPath } } : {}),
      ...opts.config,
      tron: { providers: roles.map((r) => ({ url: urls[r], requests_per_second: 0 })), ...opts.config?.tron },
    },
  });
  t.deps.chain = createChainRuntime(t.config, { timeoutMs: 2000, maxRequestsPerSecond: 0 });
  return {
    t,
    node,
    liar,
    other,
    async pass(ms = 5 * SECOND) {
      t.clock.advance(ms);
      now = t.clock.now();
      while (await runOnce(t.deps));
    },
    async health() {
      return (await t.client().get('/health')).body;
    },
    async close() {
      await t.close();
      await liar.close();
      await other.close();
      await node.close();
    },
  };
}

/**
 * A made-up USDT payment of `amount` to `to` in block `num`, with transaction id `id`: a copy of a
 * real info of that block (its shape and time) with a Transfer log of the network's USDT.
 */
export function forgedTransfer(node: SimulatedTron, num: number, id: string, to: string, amount: bigint): Json {
  const genuine = node.blockInfos(num).find((i) => Array.isArray(i.log) && (i.log as unknown[]).length > 0);
  const forged = structuredClone(genuine!) as Record<string, any>;
  forged.id = id;
  forged.log[0].address = '41a614f803b6fd780986a42c78ec9c7f77e6ded13c';
  forged.log[0].topics[2] = `000000000000000000000000${tronAddressToHex(to)!.slice(2)}`;
  forged.log[0].data = amount.toString(16).padStart(64, '0');
  return forged;
}

/** Runs passes until the block of `at` is solidified and read (19 blocks of 3 s, plus margin). */
export async function untilSolid(w: World, at: number, extra = 20 * SECOND): Promise<void> {
  while (w.t.clock.now() < at + 57 * SECOND + extra) await w.pass();
}
