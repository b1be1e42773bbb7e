/**
 * The HTTP side of the tests' loopback JSON-RPC providers: one POST body (a call or a batch) handed
 * to `answer` as parsed JSON, and, while `rateLimit` says so, whole requests answered 429 with a
 * Retry-After header, as real providers refuse them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RateLimit {
  times: number;
  retryAfter: string;
}

export interface LoopbackRpc {
  url: string;
  /** The times HTTP requests came, refused ones included. */
  readonly requestTimes: number[];
  /** Bytes of the answers sent. */
  readonly bytesSent: () => number;
  close(): Promise<void>;
}

export async function serveJsonRpc(answer: (body: any) => unknown, rateLimit: () => RateLimit | undefined): Promise<LoopbackRpc> {
  const requestTimes: number[] = [];
  let bytes = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requestTimes.push(performance.now());
      const limit = rateLimit();
      if (limit && limit.times > 0) {
        limit.times--;
        res.writeHead(429, { 'retry-after': limit.retryAfter, 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: 429, message: 'Too Many Requests' } }));
        return;
      }
      Promise.resolve()
        .then(() => answer(JSON.parse(Buffer.concat(chunks).toString())))
        .then(
          (out) => {
            const text = JSON.stringify(out);
            bytes += Buffer.byteLength(text);
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(text);
          },
          (err: Error) => {
            res.writeHead(500);
            res.end(err.message);
          },
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requestTimes,
    bytesSent: () => bytes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
