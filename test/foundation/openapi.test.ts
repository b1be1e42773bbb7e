import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/lib/assets.js';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { NETWORK_IDS } from '../../src/chains/networks.js';

// The served OpenAPI document is compared with a checked-in copy, so every contract change shows
// in review. After an intended change: `npm run openapi:update`.
const SNAPSHOT = join(projectRoot(), 'test', 'openapi.snapshot.json');

test('GET /api/v1/openapi.json is OpenAPI 3.1, version 0.2.0, and matches the checked-in copy', async () => {
  const t = await startTestApp({ config: { server: { public_url: 'https://pay.example.com' } } });
  try {
    const res = await t.client().get('/openapi.json');
    assert.equal(res.status, 200);
    const doc = res.body;
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '0.2.0');
    assert.equal(doc.servers[0].url, 'https://pay.example.com');
    assert.ok(
      Object.keys(doc.paths).every((p) => p.startsWith('/api/v1/')),
      'paths carry the version prefix',
    );
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        assert.ok(op.responses['500'], `${method.toUpperCase()} ${path} documents 500`);
        // Every JSON body passes the 64 KiB guard, so every operation with a body can answer 413.
        if (op.requestBody) assert.ok(op.responses['413'], `${method.toUpperCase()} ${path} documents 413`);
        for (const [status, r] of Object.entries<any>(op.responses)) {
          if (Number(status) >= 400 && method !== 'head')
            assert.equal(r.content['application/json'].schema.$ref, '#/components/schemas/Error', `${method} ${path} ${status}`);
        }
        // Every GET is documented with its HEAD, which has the same answers and no bodies.
        if (method === 'get') assert.deepEqual(Object.keys(ops.head.responses), Object.keys(op.responses), `HEAD ${path}`);
        if (method === 'head')
          assert.ok(
            Object.values<any>(op.responses).every((r) => !r.content),
            `HEAD ${path} has no bodies`,
          );
        // Shared middleware gives these answers, so every operation declares them.
        for (const status of ['400', '405', '500']) assert.ok(op.responses[status], `${method} ${path} documents ${status}`);
        if (op.security.length > 0) assert.ok(op.responses['401'].headers['WWW-Authenticate'], `${method} ${path}: 401 with WWW-Authenticate`);
      }
    }
    // One document per API version: every network is listed in answers whatever the instance runs
    // (a request may name only the instance's own: src/openapi-instance.ts).
    assert.deepEqual(doc.components.schemas.Invoice.properties.network.enum, [...NETWORK_IDS]);
    assert.deepEqual(doc.components.schemas.InvoiceOption.properties.network.enum, [...NETWORK_IDS]);
    assert.deepEqual(doc.components.schemas.Wallet.properties.network.enum, [...NETWORK_IDS]);
    assert.deepEqual(doc.components.schemas.Wallet.properties.networks.items.enum, [...NETWORK_IDS]);
    assert.ok(doc.paths['/api/v1/openapi.json'].get, 'the document describes itself');
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === '1') {
      writeFileSync(SNAPSHOT, text);
      return;
    }
    let expected = '';
    try {
      expected = readFileSync(SNAPSHOT, 'utf8');
    } catch {
      assert.fail(`missing ${SNAPSHOT}; run npm run openapi:update`);
    }
    assert.equal(text, expected, 'the API contract changed: review it, then run npm run openapi:update');
  } finally {
    await t.close();
  }
});

test('a test-network instance serves the same document as a mainnet one, but for its server entry and the networks an invoice may ask', async () => {
  const served = async (network: string) => {
    const t = await startTestApp({ config: { server: { public_url: 'https://pay.example.com' }, tron: { network } } });
    try {
      return (await t.client().get('/openapi.json')).body;
    } finally {
      await t.close();
    }
  };
  const [main, nile] = [await served('mainnet'), await served('nile')];
  assert.match(nile.servers[0].description, /tron-nile, a TRON test network/);
  assert.match(main.servers[0].description, /tron-mainnet/);
  // A request names only the instance's own networks (the answers list every network): a wallet's
  // networks and an invoice's network and options.
  const requested = (doc: any) =>
    ['CreateWallet', 'UpdateWallet'].map((name) => {
      const schema = doc.components.schemas[name];
      const own = schema.properties.networks.items.enum;
      delete schema.properties.networks.items.enum;
      for (const rule of schema.allOf ?? []) delete rule.then.properties.networks.items.enum;
      return own;
    });
  assert.deepEqual(requested(main), [['tron-mainnet'], ['tron-mainnet']]);
  assert.deepEqual(requested(nile), [['tron-nile'], ['tron-nile']]);
  const networks = (doc: any) => [
    doc.components.schemas.CreateInvoice.properties.network.enum,
    doc.components.schemas.InvoiceOptionRequest.properties.network.enum,
  ];
  assert.deepEqual(networks(main), [['tron-mainnet'], ['tron-mainnet']]);
  assert.deepEqual(networks(nile), [['tron-nile'], ['tron-nile']]);
  const withoutNetworks = (doc: any) => {
    const copy = structuredClone({ ...doc, servers: [] });
    const { CreateInvoice, InvoiceOptionRequest } = copy.components.schemas;
    for (const network of [CreateInvoice.properties.network, InvoiceOptionRequest.properties.network]) {
      delete network.enum;
      delete network.example;
    }
    delete CreateInvoice.properties.options.example;
    return copy;
  };
  assert.deepEqual(withoutNetworks(nile), withoutNetworks(main));
});

test("a gatewayd dev instance serves its own URL policy (http webhook receivers), and differs from serve's document only there and in servers", async () => {
  const served = async (devMode: boolean) => {
    const t = await startTestApp({
      devMode,
      config: { server: { public_url: 'http://127.0.0.1:8080' }, tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' } },
    });
    try {
      return (await t.client().get('/openapi.json')).body;
    } finally {
      await t.close();
    }
  };
  const [dev, serve] = [await served(true), await served(false)];
  const urlOf = (doc: any, schema: string) => doc.components.schemas[schema].properties.url;
  const readme = 'http://127.0.0.1:3000/hooks';
  for (const schema of ['CreateWebhook', 'UpdateWebhook']) {
    assert.match(readme, new RegExp(urlOf(dev, schema).pattern, 'u'), `${schema}: the README's receiver is valid on dev`);
    assert.doesNotMatch(readme, new RegExp(urlOf(serve, schema).pattern, 'u'), `${schema}: and not on serve`);
    for (const ok of ['http://localhost:3001/hooks', 'https://[::1]:8443/x?y=1', 'http://receiver/hook'])
      assert.match(ok, new RegExp(urlOf(dev, schema).pattern, 'u'), `${ok} on dev`);
    for (const bad of ['ftp://127.0.0.1/x', 'http://127.0.0.1:3000/hooks#f', 'http://user@127.0.0.1/', 'http://127.0.0.1/a|b', 'http://999.0.0.1/'])
      assert.doesNotMatch(bad, new RegExp(urlOf(dev, schema).pattern, 'u'), `${bad} not even on dev`);
  }
  // The only other difference is servers (here the same URL and network, so none).
  const withoutUrlPolicy = (doc: any) => {
    const copy = structuredClone(doc);
    for (const schema of ['CreateWebhook', 'UpdateWebhook']) delete copy.components.schemas[schema].properties.url.pattern;
    return { ...copy, servers: [] };
  };
  assert.notDeepEqual(dev, serve);
  assert.deepEqual(withoutUrlPolicy(dev), withoutUrlPolicy(serve));
});

test('the dev instance accepts exactly what its document says about webhook URLs', async () => {
  const t = await startTestApp({
    devMode: true,
    config: { server: { public_url: 'http://127.0.0.1:8080' }, tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' } },
  });
  try {
    const doc = (await t.client().get('/openapi.json')).body;
    const pattern = new RegExp(doc.components.schemas.CreateWebhook.properties.url.pattern, 'u');
    const owner = await signedInMerchant(t);
    for (const [url, stored] of [
      ['http://127.0.0.1:3000/hooks', 'http://127.0.0.1:3000/hooks'],
      ['http://LOCALHOST:3001/a/./b', 'http://localhost:3001/a/b'],
      ['http://127.0.0.1:3000/a|b', undefined],
      ['http://127.0.0.1:3000/hooks#frag', undefined],
    ] as const) {
      const res = await owner.client.post('/webhooks', { url });
      assert.equal(pattern.test(url), stored !== undefined, url);
      if (stored === undefined) assert.equal(res.status, 400, `${url}: ${res.text}`);
      else {
        assert.equal(res.status, 201, `${url}: ${res.text}`);
        assert.equal(res.body.webhook.url, stored);
      }
    }
  } finally {
    await t.close();
  }
});
