/**
 * The TON index HTTP client against a loopback provider: one request a second by default (toncenter
 * without a key), a 429's Retry-After honoured by every later call, a long owner list's 414 or 431
 * classified as too long, a provider's own error message kept, keys sent as each provider wants them,
 * lists sent as repeated query parameters. Time is a manual clock that the client's waits move.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { queryString, TonHttpClient, TonHttpError } from '../../../src/chains/ton/rpc.js';
import { ManualClock } from '../../../src/lib/clock.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let handler: Handler = (_req, _body, res) => json(res, {});
let url = '';
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => handler(req, Buffer.concat(chunks).toString(), res));
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

function client(options: Partial<ConstructorParameters<typeof TonHttpClient>[0]> = {}) {
  const clock = new ManualClock();
  const waits: number[] = [];
  const http = new TonHttpClient({
    url,
    clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock.advance(ms);
    },
    ...options,
  });
  return { http, clock, waits };
}

test('lists go as repeated parameters; without a key calls are a second apart, with a rate of ten, a tenth', async () => {
  assert.equal(
    queryString({ owner_address: ['0:ab', 'EQx'], limit: 5, start_lt: 10n, skip: undefined }),
    'owner_address=0%3Aab&owner_address=EQx&limit=5&start_lt=10',
  );
  const seen: string[] = [];
  handler = (req, _b, res) => (seen.push(req.url!), json(res, { ok: true }));
  const { http, waits } = client();
  await http.get('/api/v3/jetton/transfers', { owner_address: ['0:ab', '0:cd'] });
  await http.get('/api/v3/masterchainInfo');
  await http.get('/api/v3/masterchainInfo');
  assert.deepEqual(waits, [1000, 1000]);
  assert.equal(seen[0], '/api/v3/jetton/transfers?owner_address=0%3Aab&owner_address=0%3Acd');
  const fast = client({ requestsPerSecond: 10 });
  await fast.http.get('/a');
  await fast.http.get('/a');
  assert.deepEqual(fast.waits, [100]);
});

test("keys are sent as toncenter's X-API-Key and tonapi's bearer token; POST bodies are JSON", async () => {
  const got: Array<Record<string, unknown>> = [];
  handler = (req, body, res) => (got.push({ key: req.headers['x-api-key'], auth: req.headers.authorization, body, method: req.method }), json(res, {}));
  await client({ apiKey: 'k1' }).http.get('/x');
  await client({ apiKey: 'k2', keyHeader: 'bearer' }).http.post('/v2/blockchain/accounts/_bulk', { account_ids: ['0:ab'] });
  assert.deepEqual(got, [
    { key: 'k1', auth: undefined, body: '', method: 'GET' },
    { key: undefined, auth: 'Bearer k2', body: '{"account_ids":["0:ab"]}', method: 'POST' },
  ]);
});

test('a 429 pauses every call for its Retry-After; a pause longer than allowed fails at once without a request', async () => {
  let calls = 0;
  handler = (_req, _b, res) => (++calls === 1 ? json(res, { error: 'Ratelimit exceed' }, 429, { 'retry-after': '3' }) : json(res, { ok: calls }));
  const { http, waits } = client({ requestsPerSecond: 1000 });
  assert.deepEqual(await http.get('/x'), { ok: 2 });
  assert.deepEqual(waits, [3000]);
  assert.equal(http.stats.rateLimited, 1);
  calls = 0;
  handler = (_req, _b, res) => (calls++, json(res, { error: 'slow down' }, 429, { 'retry-after': '120' }));
  const slow = client({ requestsPerSecond: 1000 });
  await assert.rejects(slow.http.get('/x'), (e: unknown) => e instanceof TonHttpError && e.kind === 'rate_limited');
  await assert.rejects(slow.http.get('/x'), (e: unknown) => e instanceof TonHttpError && e.kind === 'rate_limited');
  assert.equal(calls, 1, 'the second call waited for nothing and asked nothing');
});

test('refusals are classified: too long (414, 431), not found, refused with the provider message, server errors, not JSON', async () => {
  const cases: Array<[Handler, string, RegExp?]> = [
    [(_q, _b, res) => (res.writeHead(414), res.end('URI Too Long')), 'too_long'],
    [(_q, _b, res) => json(res, { error: 'too large' }, 431), 'too_long'],
    [(_q, _b, res) => json(res, { error: 'adjacent transactions not found' }, 404), 'not_found', /not found/],
    [(_q, _b, res) => json(res, { error: 'the maximum number of accounts to request at once: 100' }, 400), 'refused', /at once: 100/],
    [(_q, _b, res) => json(res, { error: 'db timeout' }, 500), 'http', /db timeout/],
    [(_q, _b, res) => res.end('<html>'), 'malformed'],
  ];
  for (const [h, kind, message] of cases) {
    handler = h;
    await assert.rejects(
      client({ requestsPerSecond: 1000 }).http.get('/x'),
      (e: unknown) => e instanceof TonHttpError && e.kind === kind && (!message || message.test(e.message)),
      kind,
    );
  }
});
