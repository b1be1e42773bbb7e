import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

function assertEnvelope(body: any, code: string) {
  assert.equal(body.mode, 'live');
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
}

test('GET /health', async () => {
  const res = await t.client().get('/health');
  assert.equal(res.status, 200);
  assert.equal(res.body.status, 'ok');
  assert.equal(res.body.mode, 'live');
  assert.equal(res.body.live_payments_enabled, true);
  assert.deepEqual(res.body.deliveries, { backlog: 0 });
  assert.equal(typeof res.body.watcher.state, 'string');
  assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
});

test('GET /config: captcha and google null until configured', async () => {
  const res = await t.client().get('/config');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { captcha: null, google: null });
});

test('GET /config shows the provider and site key, never the secret', async () => {
  const t2 = await startTestApp({
    config: {
      captcha: { provider: 'turnstile', site_key: 'site-123', secret_key: 'very-secret' },
      google: { client_id: 'client-abc.apps.googleusercontent.com' },
    },
  });
  try {
    const res = await t2.client().get('/config');
    assert.deepEqual(res.body, { captcha: { provider: 'turnstile', site_key: 'site-123' }, google: { client_id: 'client-abc.apps.googleusercontent.com' } });
    assert.ok(!res.text.includes('very-secret'));
  } finally {
    await t2.close();
  }
});

test('unknown route: 404 not_found in the envelope', async () => {
  const res = await t.client().get('/nope');
  assert.equal(res.status, 404);
  assertEnvelope(res.body, 'not_found');
  const outside = await t.client().get('/api/v2/health');
  assert.equal(outside.status, 404);
});

test('wrong method on a known path: 405 with Allow', async () => {
  const res = await t.client().request('DELETE', '/health');
  assert.equal(res.status, 405);
  assertEnvelope(res.body, 'method_not_allowed');
  assert.match(res.headers.get('allow') ?? '', /GET/);
  const post = await t.client().post('/config', { x: 1 });
  assert.equal(post.status, 405);
});

test('a wrong method or unknown path wins over a malformed body', async () => {
  const res = await t.client().request('POST', '/nope', undefined, { raw: '{bad', headers: { 'content-type': 'application/json' } });
  assert.equal(res.status, 404);
});

test('an incoming X-Request-Id is kept when well-formed, replaced otherwise', async () => {
  const ok = await t.client().get('/health', { headers: { 'x-request-id': 'abc-123' } });
  assert.equal(ok.headers.get('x-request-id'), 'abc-123');
  const bad = await t.client().get('/health', { headers: { 'x-request-id': 'x'.repeat(200) } });
  assert.match(bad.headers.get('x-request-id') ?? '', /^req_/);
});

test('request log lines carry the request id and route, not the raw path', async () => {
  const res = await t.client().get('/health');
  const id = res.headers.get('x-request-id');
  const line = t.logs.find((l) => l.req_id === id && l.msg === 'request');
  assert.ok(line, 'a log line for the request');
  assert.equal(line.route, '/api/v1/health');
  assert.equal(line.status, 200);
});

test('a trailing slash is a different (unknown) path, never a self-contradicting 405', async () => {
  const res = await t.client().get('/health/');
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, 'not_found');
});

test('HEAD on a GET route answers like GET without a body', async () => {
  const res = await t.client().request('HEAD', '/health');
  assert.equal(res.status, 200);
  assert.equal(res.text, '');
});
