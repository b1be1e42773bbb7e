/**
 * A hostile TRON provider for tests: a small loopback HTTP proxy in front of an honest stand-in
 * (the simulated node) that passes every request through and can lie about heads, serve its
 * solidified data as the unsolidified head, omit transactions, forge or rewrite answers, delay,
 * and rate-limit with Retry-After. Each behaviour is switched on and off while the test runs.
 *
 *   const liar = await startHostileProvider(node.url);
 *   liar.set({ head: (h) => ({ ...h, number: h.number + 1_000_000 }) });
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, unknown>;

export interface Hostility {
  /** Rewrites the solidified head (a getblock without id_or_num, or getnowblock): number and timestamp. */
  head?: (h: { number: number; timestamp: number }) => { number: number; timestamp: number };
  /** Answers /walletsolidity/ requests from /wallet/ (a solidified head that runs ahead of the solidified blocks it serves). */
  solidIsHead?: boolean;
  /** Transaction ids left out of every block-info answer (an omission). */
  omit?: ReadonlySet<string>;
  /** Rewrites a block-info answer of block `num` (forge, shift, corrupt). */
  infos?: (num: number, infos: Json[]) => Json[];
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
      const up = await fetch(`${upstream}${path}${url.search}`, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body: req.method === 'POST' ? body : undefined,
      });
      let text = await up.text();
      const params = (body ? JSON.parse(body) : {}) as Json;
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
