/**
 * A real HTTPS webhook receiver on loopback, for tests of outbound delivery. It makes its own CA
 * (so the gateway must trust it through `webhooks.ca_file`), serves a certificate for
 * `*.example.test`, records every request (raw body, headers, TLS server name) and answers as told:
 * a status (200, 4xx, 503, 302 with Location...), `hang` (never answers), or `down()` (port closed).
 *
 *   const rx = await startHttpsReceiver();
 *   const t = await startTestApp({ config: { webhooks: rx.webhookConfig() } });
 *   rx.answer(503);                        // or (req) => req.path === '/slow' ? 'hang' : 200
 *   ... POST /webhooks { url: rx.url('/hook') } ...
 *   const [req] = await rx.waitFor(1);
 */
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCa } from './test-ca.js';

export type Answer = number | 'hang' | { status: number; headers?: Record<string, string>; body?: string };

export interface ReceivedRequest {
  method: string;
  /** Path and query as requested. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as received (what a receiver must verify the signature over). */
  rawBody: string;
  /** The TLS server name (SNI) the client sent. */
  servername: string | undefined;
  /** Whether the TLS handshake resumed an earlier session, and the client's port (one per connection). */
  sessionReused: boolean;
  remotePort: number | undefined;
  /** Wall-clock time of arrival (ms). */
  at: number;
}

export interface HttpsReceiver {
  readonly port: number;
  /** PEM of the CA that signed the receiver's certificate, and a file holding it. */
  readonly caPem: string;
  readonly caFile: string;
  readonly requests: ReceivedRequest[];
  /** A URL on this receiver; any `*.example.test` name works when it resolves to the receiver's address. */
  url(path?: string, hostname?: string): string;
  /** How to answer from now on (default 200). */
  answer(answer: Answer | ((req: ReceivedRequest) => Answer)): void;
  /** Resolves once `count` requests in all have arrived (rejects after timeoutMs). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops listening: connections are refused until up(). */
  down(): Promise<void>;
  up(): Promise<void>;
  /** `[webhooks]` settings that let the gateway reach this receiver. */
  webhookConfig(extra?: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

export const RECEIVER_DOMAIN = 'example.test';

/** `host`: the loopback address to listen on (127.0.0.1, or ::1 for an IPv6 receiver). */
export async function startHttpsReceiver(options: { hostnames?: string[]; host?: string } = {}): Promise<HttpsReceiver> {
  const hostnames = options.hostnames ?? ['hooks.example.test'];
  const host = options.host ?? '127.0.0.1';
  const ca = await makeTestCa();
  const leaf = await ca.issue({ dns: [`*.${RECEIVER_DOMAIN}`, ...hostnames] });
  const dir = mkdtempSync(join(tmpdir(), 'gatewayd-rx-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca.pem);

  const requests: ReceivedRequest[] = [];
  let responder: (req: ReceivedRequest) => Answer = () => 200;
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        servername: (req.socket as TLSSocket).servername || undefined,
        sessionReused: (req.socket as TLSSocket).isSessionReused(),
        remotePort: req.socket.remotePort,
        at: Date.now(),
      };
      requests.push(received);
      for (const w of [...waiters]) w();
      const answer = responder(received);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const { status, headers, body } = typeof answer === 'number' ? { status: answer, headers: undefined, body: undefined } : answer;
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end(body ?? `answered ${status}`);
    });
  };

  let server: Server | undefined;
  let port = 0;
  const listen = async (): Promise<void> => {
    if (server?.listening) return;
    const s = createServer({ key: leaf.key, cert: leaf.cert }, handler);
    s.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, host, () => resolve());
    });
    server = s;
    port = (s.address() as { port: number }).port;
  };
  const stop = async (): Promise<void> => {
    for (const res of hanging) res.destroy();
    hanging.clear();
    const s = server;
    if (!s?.listening) return;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  };
  await listen();

  return {
    get port() {
      return port;
    },
    caPem: ca.pem,
    caFile,
    requests,
    url: (path = '/hook', hostname = hostnames[0]!) => `https://${hostname}:${port}${path}`,
    answer(answer) {
      responder = typeof answer === 'function' ? answer : () => answer;
    },
    waitFor(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (requests.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(requests.slice(0, count));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: ${requests.length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    down: stop,
    up: listen,
    webhookConfig: (extra = {}) => ({
      allowed_ports: [443, port],
      allow_private_cidrs: ['127.0.0.0/8', '::1/128'],
      resolve: Object.fromEntries(hostnames.map((h) => [h, host])),
      ca_file: caFile,
      ...extra,
    }),
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
