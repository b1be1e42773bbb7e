/**
 * The Epusdt facade, driven the way Epusdt shops drive it, with clients written from the protocol's
 * documentation: a JSON POST to {base}/api/v1/order/create-transaction signed with MD5 over the
 * non-empty fields sorted by name (k=v&...) and the token. The stand-in checks the callback the way
 * dujiaoka does (every field, numbers as PHP prints them) and as the WHMCS module does
 * (array_filter, then urldecode of the joined string).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE } from '../../src/lib/clock.js';
import { connect, local, md5, payThroughCheckout, sendCallbacks, startShopWorld, type ShopWorld } from './support.js';

type Json = Record<string, unknown>;

/** How PHP writes a decoded JSON value into a string ("$key=$val"): numbers in their shortest form. */
function php(value: unknown): string {
  return typeof value === 'number' ? String(value) : String(value);
}

/** dujiaoka's epusdtSign: skip `signature` and empty values, sort, k=v&..., then the token. */
function dujiaokaSign(fields: Json, token: string): string {
  const text = Object.keys(fields)
    .filter((k) => k !== 'signature' && fields[k] !== '' && fields[k] !== null && fields[k] !== undefined)
    .sort()
    .map((k) => `${k}=${php(fields[k])}`)
    .join('&');
  return md5(text + token);
}

/** The WHMCS module: array_filter drops 0, "0", false and empty values; the joined string is urldecoded. */
function whmcsSign(fields: Json, token: string): string {
  const kept = Object.keys(fields).filter((k) => k !== 'signature' && ![0, '0', false, '', null, undefined].includes(fields[k] as never));
  const joined = kept
    .sort()
    .map((k) => `${k}=${php(fields[k])}`)
    .join('&');
  return md5(decodeURIComponent(joined.replace(/\+/g, ' ')) + token);
}

async function create(w: ShopWorld, baseUrl: string, body: Json): Promise<Json> {
  const res = await fetch(`${local(w, baseUrl)}/api/v1/order/create-transaction`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as Json;
}

test('epusdt: a dujiaoka-style shop creates a transaction, the payer pays at the checkout, the callback verifies as dujiaoka and WHMCS check it, and the status poll follows', async () => {
  const w = await startShopWorld();
  try {
    const { t } = w.h;
    const conn = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
    assert.equal(conn.apiUrl, t.config.server.public_url);
    // dujiaoka sends (float) actual_price: json_encode writes 12.5 (and 10.0 for a round price).
    const order: Json = {
      amount: 12.5,
      order_id: 'DJK-1',
      redirect_url: 'https://shop.example/epusdt-return?order_id=DJK-1',
      notify_url: w.standIn.url('/pay/epusdt/notify_url'),
    };
    const created = await create(w, conn.apiUrl, { ...order, signature: dujiaokaSign(order, conn.key) });
    assert.equal(created.status_code, 200, JSON.stringify(created));
    const data = created.data as Json;
    assert.equal(data.order_id, 'DJK-1');
    assert.equal(data.amount, 12.5);
    assert.equal(typeof data.actual_amount, 'number');
    assert.match(String(data.token), /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    assert.ok(Number(data.expiration_time) > t.clock.now() / 1000);
    const inv = (await w.merchant.client.get(`/invoices/${data.trade_id as string}`)).body.invoice;
    assert.equal(data.payment_url, inv.checkout_url);
    assert.equal(data.actual_amount, Number(inv.payable_amount), 'actual_amount is the USDT payable amount');
    assert.equal(inv.metadata.shop_protocol, 'epusdt');

    // The same order again (a retry, amount written 12.50 as a string) is the same invoice; another amount is refused in Epusdt's shape.
    const again: Json = { ...order, amount: '12.50' };
    assert.equal(((await create(w, conn.apiUrl, { ...again, signature: dujiaokaSign(again, conn.key) })).data as Json).trade_id, data.trade_id);
    const other: Json = { ...order, amount: 13 };
    const refused = await create(w, conn.apiUrl, { ...other, signature: dujiaokaSign(other, conn.key) });
    assert.equal(refused.status_code, 400);
    assert.match(String(refused.message), /another amount/);

    // BEpusdt's own status path (its Python SDK's query_order) and the WooCommerce plugin's answer alike, before and after payment.
    const pollAt = async (path: string) => {
      const res = await fetch(`${local(w, conn.apiUrl)}${path}${data.trade_id as string}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      return (await res.json()) as Json;
    };
    const poll = async () => {
      const [bepusdt, woo] = [await pollAt('/pay/check-status/'), await pollAt('/api/v1/order/check-status/')];
      assert.deepEqual(bepusdt, woo);
      return woo;
    };
    assert.deepEqual(await poll(), { trade_id: data.trade_id, trade_hash: '', status: 1, return_url: '' });
    assert.equal(data.fiat, 'USDT', "without fiat the order is in the connection's currency, and says so");

    w.standIn.reply = (hit) => {
      const body = JSON.parse(hit.body) as Json;
      return dujiaokaSign(body, conn.key) === body.signature && whmcsSign(body, conn.key) === body.signature
        ? { status: 200, body: 'ok' }
        : { status: 200, body: 'fail' };
    };
    const { payable } = await payThroughCheckout(w, String(data.payment_url));
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 1);
    const hit = w.standIn.hits[0]!;
    assert.equal(hit.method, 'POST');
    const body = JSON.parse(hit.body) as Json;
    assert.equal(body.status, 2);
    assert.equal(body.amount, 12.5, "the shop's own amount, as a JSON number");
    assert.equal(body.actual_amount, Number(payable));
    assert.equal(body.order_id, 'DJK-1');
    assert.equal(body.trade_id, data.trade_id);
    assert.match(String(body.block_transaction_id), /^[0-9a-f]{64}$/);
    assert.ok(!hit.body.includes('"amount":12.50'), 'numbers are written as PHP prints them');
    const row = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.status, 'delivered', row.last_error ?? '');

    const paid = await poll();
    assert.equal(paid.status, 2);
    assert.equal(paid.trade_hash, body.block_transaction_id);
    const back = await fetch(local(w, String(paid.return_url)), { redirect: 'manual' });
    assert.equal(back.headers.get('location'), 'https://shop.example/epusdt-return?order_id=DJK-1');
    t.clock.advance(24 * 60 * MINUTE);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 1, 'acknowledged once: never resent');
  } finally {
    await w.close();
  }
});

test('epusdt: the WooCommerce plugin (fiat, trade_type, name, timeout; "success" as its answer), wrong signatures, an unknown trade id, and the usual retry schedule', async () => {
  const w = await startShopWorld();
  try {
    const { t } = w.h;
    const conn = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
    const woo: Json = {
      order_id: '42-usdt-trc20-1767000000',
      name: 'WooCommerce Order #42',
      amount: 20,
      fiat: 'USDT',
      trade_type: 'usdt.trc20',
      notify_url: w.standIn.url('/?wc-api=bepusdt_wc_notify'),
      redirect_url: 'https://woo.example/checkout/order-received/42/?key=wc_order_x',
      timeout: 1200,
    };
    const created = await create(w, conn.apiUrl, { ...woo, signature: dujiaokaSign(woo, conn.key) });
    assert.equal(created.status_code, 200, JSON.stringify(created));
    const inv = (await w.merchant.client.get(`/invoices/${(created.data as Json).trade_id as string}`)).body.invoice;
    assert.equal(inv.description, 'WooCommerce Order #42');
    assert.equal(Date.parse(inv.expires_at) - Date.parse(inv.created_at), 20 * MINUTE, 'timeout (seconds) sets the payment window');

    // Every field received is signed: dropping `timeout` from the signature is refused; so is a wrong token.
    const { timeout: _t, ...withoutTimeout } = woo;
    for (const signature of [dujiaokaSign(withoutTimeout, conn.key), dujiaokaSign(woo, 'wrong-token'), 'x']) {
      const res = await create(w, conn.apiUrl, { ...woo, order_id: 'other', signature });
      assert.deepEqual(Object.keys(res).sort(), ['message', 'request_id', 'status_code']);
      assert.equal(res.status_code, 401);
      assert.equal(res.message, 'signature verification failed');
    }
    // A currency pricing does not know is refused clearly; a known one without a trustworthy rate too (nothing is created).
    const xyz: Json = { ...woo, order_id: 'xyz', fiat: 'XYZ' };
    const unknownFiat = await create(w, conn.apiUrl, { ...xyz, signature: dujiaokaSign(xyz, conn.key) });
    assert.equal(unknownFiat.status_code, 400);
    assert.match(String(unknownFiat.message), /currency XYZ is not configured/);
    const eur: Json = { ...woo, order_id: 'eur', fiat: 'EUR' };
    const noRate = await create(w, conn.apiUrl, { ...eur, signature: dujiaokaSign(eur, conn.key) });
    assert.equal(noRate.status_code, 400);
    assert.match(String(noRate.message), /no exchange rate for EUR/);
    assert.equal((await w.merchant.client.get('/invoices')).body.invoices.length, 1);
    // Not JSON at all: Epusdt's shape still.
    const junk = await fetch(`${local(w, conn.apiUrl)}/api/v1/order/create-transaction`, { method: 'POST', body: 'pid=1' });
    assert.equal(((await junk.json()) as Json).status_code, 400);
    const huge = await fetch(`${local(w, conn.apiUrl)}/api/v1/order/create-transaction`, {
      method: 'POST',
      body: JSON.stringify({ pad: 'x'.repeat(70 * 1024) }),
    });
    assert.deepEqual(((await huge.json()) as Json).message, 'request too large');
    for (const path of ['/api/v1/order/check-status/', '/pay/check-status/']) {
      const unknown = (await (await fetch(`${local(w, conn.apiUrl)}${path}inv_nope`)).json()) as Json;
      assert.deepEqual([unknown.status_code, unknown.message], [400, 'order not found']);
    }

    let calls = 0;
    w.standIn.reply = () => (++calls < 3 ? { status: 502, body: 'Bad Gateway' } : { status: 200, body: 'success' });
    await payThroughCheckout(w, String((created.data as Json).payment_url));
    await sendCallbacks(w);
    let row = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.attempts, 1);
    const wait = row.next_attempt_at! - t.clock.now();
    assert.ok(wait >= 0.8 * MINUTE && wait <= 1.2 * MINUTE, `the webhooks' first retry after about a minute (${wait} ms)`);
    t.clock.advance(wait);
    await sendCallbacks(w);
    row = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    t.clock.advance(row.next_attempt_at! - t.clock.now());
    await sendCallbacks(w);
    row = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.status, 'delivered');
    assert.equal(w.standIn.hits.length, 3);
  } finally {
    await w.close();
  }
});
