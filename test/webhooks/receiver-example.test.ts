/**
 * The webhook receiver example of docs/api.md (docs/examples/webhook-receiver.mjs, embedded verbatim)
 * run as its own process: it accepts a real signed delivery from gatewayd, refuses a tampered one,
 * and survives a signature header with multi-byte characters, which made the earlier example's
 * timingSafeEqual throw and take the receiver down.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from '../../src/lib/assets.js';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { registerWebhook } from './support.js';

const EXAMPLE = join(projectRoot(), 'docs', 'examples', 'webhook-receiver.mjs');

test('docs/api.md embeds the receiver example verbatim', () => {
  const docs = readFileSync(join(projectRoot(), 'docs', 'api.md'), 'utf8');
  assert.ok(docs.includes(`\`\`\`js\n${readFileSync(EXAMPLE, 'utf8')}\`\`\``), 'the code block is the example file');
});

test('the receiver example accepts a real delivery, refuses a tampered one and survives a multi-byte signature header', async () => {
  const rx = await startHttpsReceiver();
  // Real time: the example checks the timestamp against its own clock.
  const t = await startTestApp({ now: Date.now(), config: { webhooks: rx.webhookConfig({ timeout_seconds: 5 }) } });
  const owner = await signedInMerchant(t);
  const hook = await registerWebhook(owner.client, rx.url('/hook'));
  const child = spawn(process.execPath, [EXAMPLE], { env: { ...process.env, WEBHOOK_SECRET: hook.secret, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        const m = /listening on (\d+)/.exec(d.toString());
        if (m) resolve(Number(m[1]));
      });
      child.on('exit', (code) => reject(new Error(`example exited ${code}: ${stderr}`)));
    });
    assert.equal((await owner.client.post(`/webhooks/${hook.id}/test`, {})).status, 200);
    const [delivery] = await rx.waitFor(1);
    const send = (headers: Record<string, string>, body: string) =>
      fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then((r) => r.status);
    const signed = {
      'x-gateway-timestamp': String(delivery!.headers['x-gateway-timestamp']),
      'x-gateway-signature': String(delivery!.headers['x-gateway-signature']),
      'x-gateway-event-id': String(delivery!.headers['x-gateway-event-id']),
    };

    assert.equal(await send(signed, delivery!.rawBody), 200, 'the real delivery verifies');
    assert.equal(await send(signed, delivery!.rawBody.replace('webhook.test', 'invoice.confirmed')), 401, 'a changed body does not');
    assert.equal(
      await send({ ...signed, 'x-gateway-timestamp': String(Number(signed['x-gateway-timestamp']) - 3600) }, delivery!.rawBody),
      401,
      'nor a stale timestamp',
    );

    // As many characters as a real signature, more bytes: the earlier example's check let it through
    // to timingSafeEqual, which throws RangeError (an uncaught exception ends the receiver).
    const hostile = `sha256=${'é'.repeat(64)}`;
    assert.equal(hostile.length, signed['x-gateway-signature'].length);
    const expected = 'sha256=' + createHmac('sha256', hook.secret).update(`${signed['x-gateway-timestamp']}.${delivery!.rawBody}`).digest('hex');
    assert.throws(
      () => hostile.length === expected.length && timingSafeEqual(Buffer.from(hostile), Buffer.from(expected)),
      RangeError,
      'the old comparison throws',
    );
    // Sent as raw bytes on a socket: 64 bytes 0xE9, which a Node server reads (as Latin-1) as 64
    // characters "é", 128 bytes once UTF-8 encoded.
    const status = await new Promise<number>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const body = Buffer.from(delivery!.rawBody, 'utf8');
      const head =
        `POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n` +
        `X-Gateway-Timestamp: ${signed['x-gateway-timestamp']}\r\nX-Gateway-Signature: ${hostile}\r\n\r\n`;
      socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
      let answer = '';
      socket.on('data', (d) => (answer += d.toString('latin1')));
      socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
      socket.on('error', reject);
    });
    assert.equal(status, 401, 'refused, not thrown');
    assert.equal(child.exitCode, null, 'the receiver is still running');
    assert.equal(await send(signed, delivery!.rawBody), 200, 'and still answers (a repeat is acknowledged once more)');

    // A secret roll: deliveries carry sha256=<new>,sha256=<old>; the receiver, still on the old
    // secret, accepts them (either value may match).
    const rolled = await owner.client.post(`/webhooks/${hook.id}/roll-secret`);
    assert.equal(rolled.status, 200);
    assert.equal((await owner.client.post(`/webhooks/${hook.id}/test`, {})).status, 200);
    const [, during] = await rx.waitFor(2);
    assert.equal(String(during!.headers['x-gateway-signature']).split(',').length, 2);
    const duringHeaders = {
      'x-gateway-timestamp': String(during!.headers['x-gateway-timestamp']),
      'x-gateway-signature': String(during!.headers['x-gateway-signature']),
    };
    assert.equal(await send(duringHeaders, during!.rawBody), 200, 'the old secret verifies a delivery during the roll');
    assert.equal(
      await send({ ...duringHeaders, 'x-gateway-signature': `sha256=${'0'.repeat(64)},${'é'.repeat(71)}` }, during!.rawBody),
      401,
      'two wrong values do not',
    );
  } finally {
    child.kill();
    await t.close();
    await rx.close();
  }
});
