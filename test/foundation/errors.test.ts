import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRoute, z } from '@hono/zod-openapi';
import { createRouter, errorResponses, jsonBody, jsonResponse } from '../../src/http/openapi.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

// A route of the test's own, built exactly as feature routes are, to exercise the shared body
// guard, validation and error handler.
const EchoBody = z.strictObject({
  name: z.string().min(1).max(10),
  count: z.number().int().optional(),
  code: z
    .string()
    .regex(/^[a-z]+$/)
    .max(3)
    .optional(),
});

let t: TestApp;
before(async () => {
  t = await startTestApp({
    beforeServe: (app) => {
      const r = createRouter();
      r.openapi(
        createRoute({
          method: 'post',
          path: '/_test/echo',
          request: { body: jsonBody(EchoBody) },
          responses: { 200: jsonResponse(EchoBody, 'echo'), ...errorResponses(400) },
        }),
        (c) => c.json(c.req.valid('json'), 200),
      );
      r.get('/_test/boom', () => {
        throw new Error('SELECT secret FROM merchants -- exploded');
      });
      app.route('/api/v1', r);
    },
  });
});
after(() => t.close());

test('valid JSON passes validation', async () => {
  const res = await t.client().post('/_test/echo', { name: 'ok', count: 2 });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { name: 'ok', count: 2 });
});

test('malformed JSON: 400 invalid_json', async () => {
  const res = await t.client().request('POST', '/_test/echo', undefined, { raw: '{"name": ', headers: { 'content-type': 'application/json' } });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'invalid_json');
  assert.equal(res.body.mode, 'live');
});

test('a non-JSON content type with a body: 400 invalid_json', async () => {
  const res = await t.client().request('POST', '/_test/echo', undefined, { raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'invalid_json');
});

test('schema violations: 400 validation_error with details naming each field', async () => {
  const res = await t.client().post('/_test/echo', { name: '', count: 1.5, extra: true });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'validation_error');
  const paths = res.body.error.details.map((d: any) => d.path).sort();
  assert.ok(paths.includes('name'), JSON.stringify(paths));
  assert.ok(paths.includes('count') || paths.includes(''), JSON.stringify(paths));
  const nul = await t.client().post('/_test/echo', { name: null });
  assert.equal(nul.status, 400, 'null is refused where not allowed');
  const arr = await t.client().post('/_test/echo', [1, 2]);
  assert.equal(arr.body.error.code, 'validation_error');
});

test('a field that breaks two rules is listed once, with its first fault', async () => {
  const res = await t.client().post('/_test/echo', { name: 'ok', code: 'ABCDEF' });
  assert.equal(res.status, 400);
  assert.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    ['code'],
  );
});

test('an empty body counts as {} and is validated', async () => {
  const res = await t.client().request('POST', '/_test/echo', undefined, { raw: '' });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'validation_error');
});

test('a body over 64 KiB: 413 payload_too_large, with or without Content-Length', async () => {
  const big = JSON.stringify({ name: 'x', pad: 'y'.repeat(70 * 1024) });
  const res = await t.client().request('POST', '/_test/echo', undefined, { raw: big, headers: { 'content-type': 'application/json' } });
  assert.equal(res.status, 413);
  assert.equal(res.body.error.code, 'payload_too_large');
  const chunks = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 80; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1024)));
      controller.close();
    },
  });
  const streamed = await fetch(`${t.baseUrl}/api/v1/_test/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: chunks,
    duplex: 'half',
  } as RequestInit);
  assert.equal(streamed.status, 413);
});

test('a streamed body is read whole: UTF-8 split across chunks and a leading byte order mark', async () => {
  const bytes = new TextEncoder().encode('\uFEFF{"name":"Zoë — 日本","count":3}');
  const streamed = await fetch(`${t.baseUrl}/api/v1/_test/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // One byte per chunk: every multi-byte character arrives in pieces.
    body: new ReadableStream({
      start(controller) {
        for (const b of bytes) controller.enqueue(new Uint8Array([b]));
        controller.close();
      },
    }),
    duplex: 'half',
  } as RequestInit);
  assert.equal(streamed.status, 200);
  assert.deepEqual(await streamed.json(), { name: 'Zoë — 日本', count: 3 });
});

test('an unexpected exception: 500 internal_error without stack or SQL, logged with the request id', async () => {
  const res = await t.client().get('/_test/boom');
  assert.equal(res.status, 500);
  assert.equal(res.body.error.code, 'internal_error');
  assert.ok(!res.text.includes('SELECT'));
  assert.ok(!res.text.includes('at '), 'no stack frames');
  const id = res.headers.get('x-request-id')!;
  assert.ok(res.body.error.message.includes(id));
  const logged = t.logs.find((l) => l.req_id === id && l.msg === 'unhandled error');
  assert.ok(logged, 'the error is logged with the request id');
});
