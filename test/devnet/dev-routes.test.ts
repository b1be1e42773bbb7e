/**
 * The control routes of `gatewayd dev` in process (the real app and the simulated node, sharing a
 * ManualClock): a late payment lands after the window and is recorded late; bad requests get the
 * error envelope and change nothing. And the dev-only webhook rule: http to localhost is accepted
 * under `gatewayd dev` and refused by any other instance, test network or not.
 */
import { test } from 'node:test';
import { request as httpRequest } from 'node:http';
import assert from 'node:assert/strict';
import { runOnce } from '../../src/chain/chain.worker.js';
import { createChainRuntime } from '../../src/chain/chain.worker.js';
import { buildConfig } from '../../src/config.js';
import { devRoutes } from '../../src/devnet/dev.routes.js';
import { startSimulatedTron } from '../../src/devnet/tron-node.js';
import type { AppDeps } from '../../src/deps.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { NETWORKS } from '../../src/lib/tron.js';
import { createUrlPolicy, UrlRejected } from '../../src/webhooks/url-policy.js';
import { startTestApp } from '../helpers/app.js';
import { getInvoice, transfersOf } from '../helpers/chain-fixtures.js';
import { createInvoice, micro, shop } from '../helpers/shop.js';
import type { RequestOptions } from '../helpers/http.js';
import { DEV_TOKEN_HEADER } from '../../src/cli/dev-token.js';

const DEVNET = NETWORKS.devnet;
const TOKEN = 'the-control-token-printed-at-start';

test('/_dev/pay --late lands after the window: the invoice expires and the payment is recorded late; bad requests change nothing', async (t) => {
  let clockNow = () => Date.UTC(2026, 0, 15, 12, 0, 0);
  const node = await startSimulatedTron({ usdtContract: DEVNET.usdtContract, blockIntervalMs: 1000, solidityLag: 3, now: () => clockNow() });
  t.after(() => node.close());
  let deps: AppDeps | undefined;
  const app = await startTestApp({
    config: { tron: { network: 'devnet', api_url: node.url, poll_interval_seconds: 1 } },
    beforeCreate: (d) => {
      deps = d;
    },
    beforeServe: (a) => devRoutes(a, deps!, { node, solidityLag: 3, blockIntervalMs: 1000 }, TOKEN),
  });
  t.after(() => app.close());
  clockNow = () => app.clock.now();
  app.deps.chain = createChainRuntime(app.config, { maxRequestsPerSecond: 0, timeoutMs: 2000 });

  const s = await shop(app, 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx');
  const inv = (await createInvoice(s.client, { amount: '5', wallet_id: s.walletId, expires_in_minutes: 1 })).body.invoice;
  const client = app.client({ origin: null });
  const dev = {
    post: (url: string, body?: unknown, options: RequestOptions = {}) =>
      client.post(url, body, { ...options, headers: { [DEV_TOKEN_HEADER]: TOKEN, ...options.headers } }),
  };

  // Refused, with the envelope, and nothing lands on the chain.
  const before = node.blockInfos(node.head().number + 1).length;
  const asForm = await dev.post(app.baseUrl + '/_dev/pay', undefined, {
    raw: `invoice_id=${inv.id}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(asForm.status, 400);
  assert.equal(asForm.body.error.code, 'validation_error');
  assert.equal(asForm.headers.get('x-gatewayd-dev'), 'tron-devnet');
  assert.equal((await dev.post(app.baseUrl + '/_dev/pay', { invoice_id: 'inv_nope' })).body.error.code, 'not_found');
  const badAddress = await dev.post(app.baseUrl + '/_dev/transfer', { to: 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqy', amount: '1' });
  assert.deepEqual([badAddress.status, badAddress.body.error.details[0].path], [400, 'to']);
  assert.equal((await dev.post(app.baseUrl + '/_dev/transfer', { to: s.address, amount: '1.0000001' })).status, 400);
  assert.equal((await dev.post(app.baseUrl + '/_dev/merchant', { email: 'x@example.com', password: 'short' })).body.error.details[0].path, 'password');
  // A DNS-rebinding page reaches the port with its own host name; a page or process without the
  // token (a foreign web page cannot read the file it is in) gets nothing either.
  const pay = JSON.stringify({ invoice_id: inv.id });
  for (const [host, token, status, code] of [
    ['rebind.attacker.example:' + new URL(app.baseUrl).port, TOKEN, 403, 'invalid_origin'],
    ['127.0.0.1.nip.io', TOKEN, 403, 'invalid_origin'],
    ['192.0.2.2', TOKEN, 403, 'invalid_origin'],
    [new URL(app.baseUrl).host, undefined, 401, 'unauthorized'],
    [new URL(app.baseUrl).host, 'a-guessed-token', 401, 'unauthorized'],
    [`localhost:${new URL(app.baseUrl).port}`, 'a-guessed-token', 401, 'unauthorized'],
  ] as const) {
    const res = await rawPost(app.baseUrl, '/_dev/pay', pay, { host, 'content-type': 'application/json', ...(token ? { [DEV_TOKEN_HEADER]: token } : {}) });
    assert.deepEqual([res.status, JSON.parse(res.body).error.code], [status, code], host);
  }
  const merchant = await rawPost(app.baseUrl, '/_dev/merchant', JSON.stringify({ email: 'mint@example.com', password: 'a long dev password' }), {
    host: 'rebind.attacker.example',
    'content-type': 'application/json',
  });
  assert.equal(merchant.status, 403);
  assert.equal(await app.deps.db.selectFrom('merchants').select('id').where('email', '=', 'mint@example.com').executeTakeFirst(), undefined);
  assert.equal(node.blockInfos(node.head().number + 1).length, before, 'no transaction was injected');
  const viaLocalhost = await rawPost(app.baseUrl, '/_dev/transfer', JSON.stringify({ to: s.address, amount: '0' }), {
    host: `localhost:${new URL(app.baseUrl).port}`,
    'content-type': 'application/json',
    [DEV_TOKEN_HEADER]: TOKEN,
  });
  assert.equal(viaLocalhost.status, 200, 'Host localhost with the token is served');

  const late = await dev.post(app.baseUrl + '/_dev/pay', { invoice_id: inv.id, late: true });
  assert.equal(late.status, 200, late.text);
  assert.ok(Date.parse(late.body.block_timestamp) > Date.parse(inv.expires_at));
  assert.equal(late.body.amount, inv.payable_amount);
  assert.equal(micro(late.body.amount), micro(inv.payable_amount));
  // It says exactly when the gateway can see it (the block, just after expiry, solidified 3 s later).
  assert.equal(late.body.solidified_at, new Date(Date.parse(late.body.block_timestamp) + 3000).toISOString());
  assert.match(late.body.note, new RegExp(`^late payment: the gateway sees it at ${late.body.solidified_at} \\((within a minute|in about 2 minutes)\\)`));

  for (let i = 0; i < 40 && !(await transfersOf(app)).some((x) => x.tx_hash === late.body.tx_id); i++) {
    app.clock.advance(5 * SECOND);
    while (await runOnce(app.deps));
  }
  assert.ok(app.clock.now() < Date.parse(inv.expires_at) + 5 * MINUTE);
  const recorded = (await transfersOf(app)).find((x) => x.tx_hash === late.body.tx_id)!;
  assert.deepEqual([recorded.kind, recorded.invoice_id, recorded.network, recorded.token_contract], ['late', inv.id, 'tron-devnet', DEVNET.usdtContract]);
  assert.equal((await getInvoice(app, inv.id)).status, 'expired');
});

/** A POST with headers fetch does not let a caller set (Host). */
function rawPost(base: string, path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('webhooks to http://localhost: allowed under gatewayd dev only, never by another instance (test networks included)', async () => {
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  const url = 'http://localhost:3000/hooks';
  const dev = createUrlPolicy(buildConfig({ tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' } }, { devMode: true }), lookup);
  const target = await dev.check(url);
  assert.deepEqual([target.address, target.port, target.url.protocol], ['127.0.0.1', 3000, 'http:']);
  assert.equal((await dev.check('http://10.1.2.3:8080/x')).address, '10.1.2.3');
  await assert.rejects(dev.check('ftp://localhost/x'), UrlRejected);
  await assert.rejects(dev.check('http://user:pw@localhost/x'), UrlRejected);

  for (const config of [
    buildConfig(),
    buildConfig({ tron: { network: 'nile' } }),
    buildConfig({ tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' } }),
  ]) {
    const policy = createUrlPolicy(config, lookup);
    await assert.rejects(policy.check(url), (err: unknown) => err instanceof UrlRejected && /scheme must be https/.test(err.message), config.network.id);
    await assert.rejects(policy.check('https://localhost/hooks'), (err: unknown) => err instanceof UrlRejected && /localhost is not allowed/.test(err.message));
  }
});
