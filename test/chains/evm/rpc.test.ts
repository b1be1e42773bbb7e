/**
 * The JSON-RPC client against a loopback provider that answers as real ones do when they refuse:
 * a batch refused as a whole, answers that are not JSON or have no result, a rate limit as HTTP 429
 * with an HTTP-date Retry-After and as a JSON-RPC error without one. Time is a manual clock that
 * the client's sleeps move, so the waits are asserted exactly.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EvmRpcClient, RpcError } from '../../../src/chains/evm/rpc.js';
import { ManualClock } from '../../../src/lib/clock.js';

type Handler = (body: any, res: ServerResponse) => void;
let handler: Handler = () => {};
let requests = 0;
let url = '';
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    requests++;
    handler(JSON.parse(Buffer.concat(chunks).toString()), res);
  });
});
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function json(res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function client() {
  const clock = new ManualClock();
  const waits: number[] = [];
  const rpc = new EvmRpcClient({
    url,
    clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock.advance(ms);
    },
  });
  return { rpc, clock, waits };
}

test('a provider that refuses batches is asked one call at a time, then and afterwards', async () => {
  handler = (body, res) =>
    Array.isArray(body)
      ? json(res, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } })
      : json(res, { jsonrpc: '2.0', id: body.id, result: body.params[0] });
  const { rpc } = client();
  const start = requests;
  assert.deepEqual(
    await rpc.batch([
      { method: 'echo', params: ['a'] },
      { method: 'echo', params: ['b'] },
    ]),
    ['a', 'b'],
  );
  assert.equal(requests - start, 3, 'the refused batch, then each call');
  assert.deepEqual(
    await rpc.batch([
      { method: 'echo', params: ['c'] },
      { method: 'echo', params: ['d'] },
    ]),
    ['c', 'd'],
  );
  assert.equal(requests - start, 5, 'no batch again');
});

test('answers that are not JSON-RPC are errors of their own kind, never results', async () => {
  const { rpc } = client();
  const kinds: Array<[Handler, string]> = [
    [(_, res) => res.end('<html>gateway</html>'), 'malformed'],
    [(_, res) => (res.writeHead(502), res.end('Bad Gateway')), 'http'],
    [(b, res) => json(res, { jsonrpc: '2.0', id: b.id }), 'malformed'],
    [(_, res) => json(res, { jsonrpc: '2.0', id: 999, result: '0x1' }), 'malformed'],
    [(b, res) => json(res, { jsonrpc: '2.0', id: b.id, error: { code: -32601, message: 'the method eth_foo does not exist' } }), 'rpc'],
  ];
  for (const [h, kind] of kinds) {
    handler = h;
    await assert.rejects(rpc.call('eth_chainId', []), (err: unknown) => err instanceof RpcError && err.kind === kind, kind);
  }
});

test('HTTP 429 with an HTTP-date Retry-After: the client waits until that date, then asks again', async () => {
  const { rpc, clock, waits } = client();
  let first = true;
  handler = (b, res) => {
    if (first) {
      first = false;
      return json(res, { jsonrpc: '2.0', id: b.id, error: { code: 429, message: 'Too Many Requests' } }, 429, {
        'retry-after': new Date(clock.now() + 7000).toUTCString(),
      });
    }
    json(res, { jsonrpc: '2.0', id: b.id, result: '0x38' });
  };
  assert.equal(await rpc.call('eth_chainId', []), '0x38');
  assert.deepEqual(waits, [7000]);
});

test('a rate-limit error without Retry-After: waits of 1 s, then 2 s, then the answer', async () => {
  const { rpc, waits } = client();
  let refusals = 2;
  handler = (b, res) =>
    refusals-- > 0
      ? json(res, { jsonrpc: '2.0', id: b.id, error: { code: -32005, message: 'daily request count exceeded, request rate limited' } })
      : json(res, { jsonrpc: '2.0', id: b.id, result: '0x1' });
  assert.equal(await rpc.call('eth_chainId', []), '0x1');
  assert.deepEqual(waits, [1000, 2000]);
  assert.equal(rpc.stats.rateLimited, 2);
  assert.equal(rpc.stats.requests, 3);
});
