import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import fc from 'fast-check';
import { blockedReason, parseWebhookUrl, UrlRejected, URL_REJECTED_REASONS } from '../../src/webhooks/url-policy.js';
import ipaddr from 'ipaddr.js';

let rx: HttpsReceiver;
let t: TestApp;
let owner: SignedIn;
const lookups: string[] = [];

// Names the test DNS (an injected resolver standing in for the system one) or the
// `webhooks.resolve` overrides map to hostile addresses.
const RESOLVE: Record<string, string> = {
  'private10.example.test': '10.0.0.5',
  'private172.example.test': '172.16.3.4',
  'private192.example.test': '192.168.1.1',
  'cgnat.example.test': '100.64.0.1',
  'metadata.example.test': '169.254.169.254',
  'multicast.example.test': '224.0.0.1',
  'reserved.example.test': '240.0.0.1',
  'zero.example.test': '0.0.0.0',
  'broadcast.example.test': '255.255.255.255',
  'testnet.example.test': '192.0.2.10',
  'benchmark.example.test': '198.18.0.1',
  'v6loop.example.test': '::1',
  'ula.example.test': 'fd00::1',
  'v6ll.example.test': 'fe80::1',
  'mapped.example.test': '::ffff:10.0.0.1',
  'nat64.example.test': '64:ff9b::a00:1',
  'sixtofour.example.test': '2002:a00:1::1',
  'teredo.example.test': '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  'v6mcast.example.test': 'ff02::1',
  'v6doc.example.test': '2001:db8::1',
  'v4compat.example.test': '::a00:1',
  'unspec6.example.test': '::',
};

before(async () => {
  rx = await startHttpsReceiver();
  t = await startTestApp({
    config: { webhooks: rx.webhookConfig({ allow_private_cidrs: ['127.0.0.0/8'], resolve: { 'hooks.example.test': '127.0.0.1', ...RESOLVE } }) },
    beforeCreate: (deps) => {
      deps.dnsLookup = async (hostname) => {
        lookups.push(hostname);
        if (hostname === 'mixed.example.test')
          return [
            { address: '93.184.216.34', family: 4 },
            { address: '10.1.2.3', family: 4 },
          ];
        if (hostname === 'mixed6.example.test')
          return [
            { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
            { address: 'fd12::1', family: 6 },
          ];
        if (hostname === 'dns-loopback.example.test') return [{ address: '127.0.0.1', family: 4 }];
        if (hostname === 'empty.example.test') return [];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      };
    },
  });
  owner = await signedInMerchant(t);
});
after(async () => {
  await t.close();
  await rx.close();
});

const p = () => rx.port;

/** [url, what the message must say] */
const HOSTILE: Array<[() => string, RegExp]> = [
  [() => `http://hooks.example.test:${p()}/hook`, /scheme must be https/],
  [() => `ftp://hooks.example.test/hook`, /scheme must be https/],
  [() => `javascript:alert(1)`, /scheme must be https/],
  [() => `data:text/plain,hi`, /scheme must be https/],
  [() => `not a url`, /not an absolute URL/],
  [() => `/relative/path`, /not an absolute URL/],
  [() => `https://user:pass@hooks.example.test:${p()}/hook`, /credentials/],
  [() => `https://user@hooks.example.test:${p()}/hook`, /credentials/],
  [() => `https://:pw@hooks.example.test:${p()}/hook`, /credentials/],
  [() => `https://hooks.example.test:${p()}/hook#frag`, /fragment/],
  [() => `https://hooks.example.test:${p()}/hook#`, /fragment/],
  [() => `https://hooks.example.test:8443/hook`, /port 8443 is not allowed/],
  [() => `https://hooks.example.test:22/hook`, /port 22 is not allowed/],
  [() => `https://127.0.0.1/hook`, /IP address is not allowed/],
  [() => `https://2130706433/hook`, /IP address is not allowed/],
  [() => `https://0177.0.0.1/hook`, /IP address is not allowed/],
  [() => `https://0x7f.1/hook`, /IP address is not allowed/],
  [() => `https://0x7f000001/hook`, /IP address is not allowed/],
  [() => `https://127.1/hook`, /IP address is not allowed/],
  [() => `https://0/hook`, /IP address is not allowed/],
  [() => `https://%31%32%37.0.0.1/hook`, /IP address is not allowed/],
  [() => `https://8.8.8.8/hook`, /IP address is not allowed/],
  [() => `https://[::1]/hook`, /IP address is not allowed/],
  [() => `https://[::ffff:127.0.0.1]/hook`, /IP address is not allowed/],
  [() => `https://[::ffff:7f00:1]/hook`, /IP address is not allowed/],
  [() => `https://[2001:4860:4860::8888]/hook`, /IP address is not allowed/],
  [() => `https://[fe80::1%25eth0]/hook`, /not an absolute URL|IP address is not allowed/],
  [() => `https://localhost/hook`, /localhost/],
  [() => `https://LOCALHOST./hook`, /localhost/],
  [() => `https://api.localhost/hook`, /localhost/],
  [() => `https://%6c%6fcalhost/hook`, /localhost/],
  [() => `https://intranet/hook`, /fully qualified/],
  [() => `https://private10.example.test/hook`, /10\.0\.0\.5, a private address/],
  [() => `https://private172.example.test/hook`, /172\.16\.3\.4, a private address/],
  [() => `https://private192.example.test/hook`, /192\.168\.1\.1, a private address/],
  [() => `https://cgnat.example.test/hook`, /carrier-grade NAT/],
  [() => `https://metadata.example.test/hook`, /169\.254\.169\.254, a link-local address/],
  [() => `https://multicast.example.test/hook`, /multicast/],
  [() => `https://reserved.example.test/hook`, /reserved/],
  [() => `https://zero.example.test/hook`, /unspecified/],
  [() => `https://broadcast.example.test/hook`, /broadcast/],
  [() => `https://testnet.example.test/hook`, /reserved/],
  [() => `https://benchmark.example.test/hook`, /reserved/],
  [() => `https://v6loop.example.test/hook`, /::1, a loopback address/],
  [() => `https://ula.example.test/hook`, /unique-local/],
  [() => `https://v6ll.example.test/hook`, /link-local/],
  [() => `https://mapped.example.test/hook`, /IPv4-mapped form of 10\.0\.0\.1 \(a private address\)/],
  [() => `https://nat64.example.test/hook`, /NAT64 form of 10\.0\.0\.1 \(a private address\)/],
  [() => `https://sixtofour.example.test/hook`, /6to4 form of 10\.0\.0\.1 \(a private address\)/],
  [() => `https://teredo.example.test/hook`, /Teredo/],
  [() => `https://v6mcast.example.test/hook`, /multicast/],
  [() => `https://v6doc.example.test/hook`, /reserved/],
  [() => `https://v4compat.example.test/hook`, /IPv4-compatible form of 10\.0\.0\.1/],
  [() => `https://unspec6.example.test/hook`, /unspecified/],
  [() => `https://mixed.example.test/hook`, /10\.1\.2\.3, a private address/],
  [() => `https://mixed6.example.test/hook`, /fd12::1, a unique-local address/],
  [() => `https://nxdomain.example.test/hook`, /does not resolve \(ENOTFOUND\)/],
  [() => `https://empty.example.test/hook`, /does not resolve/],
];

test(`${HOSTILE.length} hostile webhook URLs are refused with 400 invalid_webhook_url naming the rule`, async () => {
  assert.ok(HOSTILE.length >= 30);
  for (const [make, why] of HOSTILE) {
    const url = make();
    const res = await owner.client.post('/webhooks', { url });
    assert.equal(res.status, 400, `${url}: ${res.text}`);
    assert.equal(res.body.error.code, 'invalid_webhook_url', url);
    assert.match(res.body.error.message, why, url);
    // One detail on the url field, with a stable reason word a page can translate.
    assert.equal(res.body.error.details.length, 1, url);
    assert.equal(res.body.error.details[0].path, 'url', url);
    assert.ok((URL_REJECTED_REASONS as readonly string[]).includes(res.body.error.details[0].reason), `${url}: ${res.body.error.details[0].reason}`);
  }
  const count = await t.deps.db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 0, 'nothing was stored');
});

test('IP literals and localhost are refused before any DNS lookup', async () => {
  lookups.length = 0;
  for (const url of ['https://2130706433/', 'https://localhost/', 'https://[::1]/', 'https://0x7f.1/']) {
    assert.equal((await owner.client.post('/webhooks', { url })).status, 400);
  }
  assert.deepEqual(lookups, []);
});

test('an empty or over-long URL is a validation error; a 2048-character URL is fine', async () => {
  assert.equal((await owner.client.post('/webhooks', { url: '' })).body.error.code, 'validation_error');
  const base = rx.url('/');
  const long = base + 'a'.repeat(2048 - base.length);
  assert.equal(long.length, 2048);
  assert.equal((await owner.client.post('/webhooks', { url: `${long}a` })).body.error.code, 'validation_error');
  const ok = await owner.client.post('/webhooks', { url: long });
  assert.equal(ok.status, 201, ok.text);
  assert.equal((await owner.client.post('/webhooks', { url: null })).body.error.code, 'validation_error');
  assert.equal((await owner.client.post('/webhooks', { url: rx.url(), extra: 1 })).body.error.code, 'validation_error');
  await owner.client.delete(`/webhooks/${ok.body.webhook.id}`);
});

test('an allowed name is stored normalised; exemption by allow_private_cidrs is what lets loopback through', async () => {
  const res = await owner.client.post('/webhooks', { url: `https://HOOKS.Example.TEST:${rx.port}/a/../hook?x=1` });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.webhook.url, `https://hooks.example.test:${rx.port}/hook?x=1`);
  const viaDns = await owner.client.post('/webhooks', { url: `https://dns-loopback.example.test:${rx.port}/hook` });
  assert.equal(viaDns.status, 201, viaDns.text);

  const strict = await startTestApp({ config: { webhooks: rx.webhookConfig({ allow_private_cidrs: [] }) } });
  try {
    const o = await signedInMerchant(strict);
    const refused = await o.client.post('/webhooks', { url: rx.url() });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error.message, /127\.0\.0\.1, a loopback address/);
  } finally {
    await strict.close();
  }
});

test('address classification: public addresses pass, every special range is blocked', () => {
  for (const ok of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2002:5db8:d822::1', '64:ff9b::808:808', '::ffff:8.8.8.8']) {
    assert.equal(blockedReason(ok), undefined, ok);
  }
  const blocked = [
    '127.0.0.1',
    '127.255.255.254',
    '10.255.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '100.127.0.1',
    '169.254.0.1',
    '0.1.2.3',
    '224.0.0.251',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '192.0.0.8',
    '198.51.100.1',
    '203.0.113.9',
    '::1',
    '::',
    'fc00::1',
    'fdff::1',
    'fe80::abcd',
    'fec0::1',
    'ff05::2',
    '100::1',
    '2001:db8::',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::7f00:1',
    '64:ff9b:1::1',
    '2002:7f00:1::',
    '2002:c0a8:101::',
    '::127.0.0.1',
    '4000::1',
    'not-an-ip',
  ];
  for (const bad of blocked) assert.notEqual(blockedReason(bad), undefined, bad);
  const exempt = [ipaddr.parseCIDR('10.0.0.0/8')];
  assert.equal(blockedReason('10.1.2.3', exempt), undefined);
  assert.equal(blockedReason('::ffff:10.1.2.3', exempt), undefined, 'the mapped form of an exempt address is exempt too');
  assert.notEqual(blockedReason('192.168.1.1', exempt), undefined);
});

test('property: every IPv4 address in any notation (decimal, hex, octal, short forms) is refused as an IP literal', () => {
  const ports = new Set([443]);
  const part = (n: number, style: number): string => (style === 0 ? String(n) : style === 1 ? `0x${n.toString(16)}` : `0${n.toString(8)}`);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 0xffffffff }),
      fc.integer({ min: 1, max: 4 }),
      fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 4, maxLength: 4 }),
      (ip, parts, styles) => {
        const b = [ip >>> 24, (ip >>> 16) & 0xff, (ip >>> 8) & 0xff, ip & 0xff];
        // a.b.c.d, a.b.(16 bits), a.(24 bits), (32 bits): the forms inet_aton accepts.
        const fields = parts === 4 ? b : parts === 3 ? [b[0]!, b[1]!, b[2]! * 256 + b[3]!] : parts === 2 ? [b[0]!, ip & 0xffffff] : [ip];
        const host = fields.map((n, i) => part(n, styles[i]!)).join('.');
        assert.throws(
          () => parseWebhookUrl(`https://${host}/hook`, ports),
          (err: unknown) => err instanceof UrlRejected && /IP address/.test(err.message),
          host,
        );
      },
    ),
    { numRuns: 2000 },
  );
});

test('an API key cannot manage webhooks; a session without Origin is refused', async () => {
  const noOrigin = await owner.client.post('/webhooks', { url: rx.url() }, { origin: null });
  assert.equal(noOrigin.status, 403);
  assert.equal(noOrigin.body.error.code, 'invalid_origin');
  const key = await t.client().post('/webhooks', { url: rx.url() }, { bearer: 'gw_live_whatever' });
  assert.equal(key.status, 403);
  assert.equal(key.body.error.code, 'session_required');
  const anon = await t.client().post('/webhooks', { url: rx.url() });
  assert.equal(anon.status, 401);
});
