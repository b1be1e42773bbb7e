/**
 * The Epay V1 facade, driven the way Epay shops drive it, with clients written from the protocol's
 * documentation: sort the fields by name, leave out empty ones and sign/sign_type, join them as
 * k=v&..., append the key, lower-case MD5. The shop stand-in checks the notification the way
 * V2Board and Xboard do (every field received, empty ones included).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE } from '../../src/lib/clock.js';
import { connect, local, mapi, md5, payThroughCheckout, sendCallbacks, shopSign, signed, smallOrder, startShopWorld, type ShopHit } from './support.js';

/** V2Board's notify(): every received field but sign/sign_type, empty ones included, sorted and joined. */
function v2boardAccepts(hit: ShopHit, key: string): boolean {
  const fields = Object.fromEntries([...hit.query].filter(([k]) => k !== 'sign' && k !== 'sign_type'));
  const text = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('&');
  return md5(text + key) === hit.query.get('sign');
}

test('epay: a V2Board-style shop signs, submits by GET to a base URL ending in "/", the payer pays at the checkout, the shop gets one verified notify and queries the order', async () => {
  const w = await startShopWorld();
  try {
    const { t } = w.h;
    const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
    assert.equal(conn.apiUrl, `${t.config.server.public_url}/epay/`);
    assert.match(String(conn.pid), /^[0-9]{6}$/);
    assert.match(conn.key, /^[A-Za-z0-9]{32}$/);

    // V2Board: money is total_amount / 100 printed by PHP ("10"), no type, return_url with a "#".
    const fields = {
      money: '10',
      name: 'V2B-1001',
      notify_url: w.standIn.url('/api/v1/guest/payment/notify/EPay/abc'),
      return_url: 'https://panel.example/#/order/V2B-1001',
      out_trade_no: 'V2B-1001',
      pid: String(conn.pid),
    };
    const submitUrl = `${local(w, conn.apiUrl)}/submit.php?${new URLSearchParams(signed(fields, conn.key))}`;
    assert.ok(submitUrl.includes('/epay//submit.php'));
    const first = await fetch(submitUrl, { redirect: 'manual' });
    assert.equal(first.status, 302, await first.text());
    const paymentUrl = first.headers.get('location')!;
    assert.match(paymentUrl, /\/pay\//);
    // A reload (same order, same amount, written differently) is the same invoice.
    const reload = await fetch(`${local(w, conn.apiUrl)}submit.php?${new URLSearchParams(signed({ ...fields, money: '10.00' }, conn.key))}`, {
      redirect: 'manual',
    });
    assert.equal(reload.headers.get('location'), paymentUrl);
    // Another amount for the same order is refused, in a page that says why.
    const other = await fetch(`${local(w, conn.apiUrl)}submit.php?${new URLSearchParams(signed({ ...fields, money: '11' }, conn.key))}`, {
      redirect: 'manual',
    });
    assert.equal(other.status, 400);
    assert.match(await other.text(), /already created with another amount/);

    w.standIn.reply = () => ({ status: 200, body: 'success' });
    const { invoiceId } = await payThroughCheckout(w, paymentUrl);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 1, 'one notify');
    const hit = w.standIn.hits[0]!;
    assert.equal(hit.method, 'GET');
    assert.ok(hit.path.startsWith('/api/v1/guest/payment/notify/EPay/abc?'));
    assert.ok(v2boardAccepts(hit, conn.key), 'V2Board accepts the signature');
    assert.deepEqual(Object.fromEntries([...hit.query].filter(([k]) => k !== 'sign')), {
      pid: String(conn.pid),
      trade_no: invoiceId,
      out_trade_no: 'V2B-1001',
      name: 'V2B-1001',
      money: '10',
      trade_status: 'TRADE_SUCCESS',
      sign_type: 'MD5',
    });
    for (const [, v] of hit.query) assert.notEqual(v, '', 'no empty value');

    // The invoice is an ordinary one whose metadata names the connection.
    const inv = (await w.merchant.client.get(`/invoices/${invoiceId}`)).body.invoice;
    assert.equal(inv.status, 'confirmed');
    assert.equal(inv.merchant_order_id, 'V2B-1001');
    assert.equal(inv.base_amount, '10.000000');
    assert.equal(inv.metadata.shop_connection_id, conn.id);
    assert.equal(inv.metadata.shop_protocol, 'epay');

    // The order query (api.php?act=order, pid and key).
    const q = await fetch(
      `${local(w, conn.apiUrl)}api.php?${new URLSearchParams({ act: 'order', pid: String(conn.pid), key: conn.key, out_trade_no: 'V2B-1001' })}`,
    );
    const order = (await q.json()) as Record<string, unknown>;
    assert.equal(order.code, 1);
    assert.equal(order.status, 1);
    assert.equal(order.trade_no, invoiceId);
    assert.equal(order.money, '10');
    assert.ok(!JSON.stringify(order).includes(conn.key), 'the key is never echoed');

    // The way back: a return_url with "#" is left as it is (a query after it would reach no server).
    const back = await fetch(local(w, inv.redirect_url), { redirect: 'manual' });
    assert.equal(back.status, 302);
    assert.equal(back.headers.get('location'), 'https://panel.example/#/order/V2B-1001');

    // Acknowledged once: nothing more is ever sent.
    t.clock.advance(2 * 60 * MINUTE);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 1);
  } finally {
    await w.close();
  }
});

test('epay: a new-api-style POST form and mapi.php; every field received is signed; a shop answering 500 then "success" is retried on the Epay schedule', async () => {
  const w = await startShopWorld();
  try {
    const { t } = w.h;
    const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const base = {
      pid: String(conn.pid),
      type: 'alipay',
      out_trade_no: 'NA-1',
      notify_url: w.standIn.url('/api/user/epay/notify?from=gw'),
      return_url: 'https://newapi.example/console/topup',
      name: 'TUC100',
      money: '19.99',
      device: 'pc',
      clientip: '203.0.113.9',
    };
    // A field sent but left out of the signature is refused: the signature covers every non-empty field.
    const { device: _device, ...unsignedDevice } = base;
    const partial = { ...base, sign: shopSign(unsignedDevice, conn.key), sign_type: 'MD5' };
    const refused = await mapi(w, conn.apiUrl, partial);
    assert.deepEqual(refused, { code: -1, msg: 'signature verification failed' });

    const made = await mapi(w, conn.apiUrl, signed(base, conn.key));
    assert.equal(made.code, 1, JSON.stringify(made));
    const inv = (await w.merchant.client.get(`/invoices/${made.trade_no as string}`)).body.invoice;
    assert.equal(made.payurl, inv.checkout_url);
    assert.equal(made.qrcode, inv.wallet_address);
    // The browser POST form of new-api's submit.php reaches the same invoice.
    const form = await fetch(`${local(w, conn.apiUrl)}submit.php`, { method: 'POST', body: new URLSearchParams(signed(base, conn.key)), redirect: 'manual' });
    assert.equal(form.status, 302);
    assert.equal(form.headers.get('location'), inv.checkout_url);

    let calls = 0;
    w.standIn.reply = () => (++calls === 1 ? { status: 500, body: 'error' } : { status: 200, body: 'SUCCESS' });
    await payThroughCheckout(w, inv.checkout_url);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 1);
    const hit = w.standIn.hits[0]!;
    assert.ok(hit.path.startsWith('/api/user/epay/notify?from=gw&pid='), 'appended with & to a URL that has a query');
    assert.equal(hit.query.get('type'), 'alipay', 'type echoed as received');
    assert.equal(hit.query.get('money'), '19.99');
    const [pending] = (await w.merchant.client.get('/shop-connections')).body.connections;
    assert.equal(pending.id, conn.id);
    const row = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.status, 'pending');
    assert.equal(row.attempts, 1);
    assert.equal(row.next_attempt_at, t.clock.now() + MINUTE, 'Epay retries after a minute');
    assert.match(row.last_error ?? '', /HTTP 500/);
    t.clock.advance(MINUTE);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 2);
    const after = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    assert.equal(after.status, 'delivered');
    t.clock.advance(60 * MINUTE);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 2, 'never resent once acknowledged');
  } finally {
    await w.close();
  }
});

test('epay: a shop that never acknowledges gets five attempts at about 0, 1, 3, 19 and 55 minutes, then a manual retry from the console API', async () => {
  const w = await startShopWorld();
  try {
    const { t } = w.h;
    const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const made = await smallOrder(w, conn, 'R-1');
    w.standIn.reply = () => ({ status: 200, body: 'fail' });
    const start = t.clock.now();
    await payThroughCheckout(w, made.payurl as string);
    const paidAt = t.clock.now();
    const times: number[] = [];
    for (let minute = 0; minute <= 70; minute++) {
      const before = w.standIn.hits.length;
      await sendCallbacks(w);
      if (w.standIn.hits.length > before) times.push(Math.round((t.clock.now() - paidAt) / MINUTE));
      t.clock.advance(MINUTE);
    }
    assert.ok(paidAt > start);
    assert.deepEqual(times, [0, 1, 3, 19, 55]);
    const row = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.status, 'failed');
    assert.match(row.last_error ?? '', /"fail", not "success"/);
    // The console's retry makes one attempt now.
    w.standIn.reply = () => ({ status: 200, body: 'success' });
    const retried = await w.merchant.client.post(`/shop-connections/notifies/${row.id}/retry`, {});
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.body.notify.status, 'delivered');
    assert.equal(retried.body.notify.merchant_order_id, 'R-1');
    const again = await w.merchant.client.post(`/shop-connections/notifies/${row.id}/retry`, {});
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'delivery_not_retryable');
    const page = await w.merchant.client.get(`${t.baseUrl}/console/shops`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('R-1'));
    assert.ok(!page.text.includes(conn.key), 'the console never shows the key again');
  } finally {
    await w.close();
  }
});

test('epay: bad signatures, unknown or deleted pids and rolled keys all get the same answer; http notify needs the opt-in; the key is never echoed', async () => {
  const w = await startShopWorld();
  try {
    const conn = await connect(w, { protocol: 'epay' });
    const base = { pid: String(conn.pid), out_trade_no: 'S-1', notify_url: w.standIn.url('/n'), name: 'x', money: '5' };
    const auth = { code: -1, msg: 'signature verification failed' };
    assert.deepEqual(await mapi(w, conn.apiUrl, { ...signed(base, conn.key), sign: '0'.repeat(32) }), auth);
    assert.deepEqual(await mapi(w, conn.apiUrl, signed({ ...base, pid: '1' }, conn.key)), auth);
    assert.deepEqual(await mapi(w, conn.apiUrl, signed(base, 'not-the-key')), auth);
    assert.deepEqual(await mapi(w, conn.apiUrl, signed({ ...base, pid: 'abc' }, conn.key)), auth);
    // A body that cannot be read is refused in Epay's shape, never a 500.
    const garbled = await fetch(`${local(w, conn.apiUrl)}mapi.php`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=zz' },
      body: '--zz\r\nbroken',
    });
    assert.equal(garbled.status, 200);
    assert.equal(((await garbled.json()) as { code: number }).code, -1);
    // Plain http without the opt-in: refused, clearly.
    const http = await mapi(w, conn.apiUrl, signed(base, conn.key));
    assert.equal(http.code, -1);
    assert.match(String(http.msg), /notify_url must be https/);
    // https (the TLS stand-in) is fine without it; the shop answers "success".
    w.rx.answer({ status: 200, body: 'success' });
    const ok = await mapi(w, conn.apiUrl, signed({ ...base, notify_url: w.rx.url('/notify', 'shop-tls.example.test') }, conn.key));
    assert.equal(ok.code, 1, JSON.stringify(ok));
    await payThroughCheckout(w, ok.payurl as string);
    await sendCallbacks(w);
    const [tls] = await w.rx.waitFor(1);
    assert.equal(tls!.method, 'GET');
    assert.equal(new URL(tls!.path, 'https://x').searchParams.get('trade_status'), 'TRADE_SUCCESS');

    // A private notify target is refused by the webhook URL policy (no exemption for this name).
    const priv = await mapi(w, conn.apiUrl, signed({ ...base, out_trade_no: 'S-2', notify_url: 'https://10.0.0.1/n' }, conn.key));
    assert.equal(priv.code, -1);
    assert.match(String(priv.msg), /IP address/);

    // A rolled key: the old one stops working at once.
    const rolled = await w.merchant.client.post(`/shop-connections/${conn.id}/roll`, {});
    assert.equal(rolled.status, 200, rolled.text);
    assert.notEqual(rolled.body.key, conn.key);
    assert.deepEqual(await mapi(w, conn.apiUrl, signed({ ...base, out_trade_no: 'S-3', notify_url: w.rx.url('/n', 'shop-tls.example.test') }, conn.key)), auth);
    const fresh = await mapi(w, conn.apiUrl, signed({ ...base, out_trade_no: 'S-3', notify_url: w.rx.url('/n', 'shop-tls.example.test') }, rolled.body.key));
    assert.equal(fresh.code, 1);
    // Deleted: the same answer as a pid that never existed.
    assert.equal((await w.merchant.client.delete(`/shop-connections/${conn.id}`)).status, 200);
    assert.deepEqual(await mapi(w, conn.apiUrl, signed({ ...base, out_trade_no: 'S-4' }, rolled.body.key)), auth);
    const list = (await w.merchant.client.get('/shop-connections')).body;
    assert.equal(list.connections[0].active, false);
    assert.ok(!JSON.stringify(list).includes(rolled.body.key));
    assert.ok(!w.h.t.logText().includes(rolled.body.key) && !w.h.t.logText().includes(conn.key), 'no key in the log');
  } finally {
    await w.close();
  }
});

test('epay: only a reply that is "success" acknowledges; "unsuccessful, bad signature" is a refusal and the callback is retried', async () => {
  const w = await startShopWorld();
  try {
    const { t } = w.h;
    const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const made = await smallOrder(w, conn, 'ACK-1');
    w.standIn.reply = () => ({ status: 200, body: 'unsuccessful, bad signature' });
    await payThroughCheckout(w, made.payurl as string);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 1);
    const refused = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    assert.equal(refused.status, 'pending', 'not delivered: the shop said it refused the notice');
    assert.equal(refused.next_attempt_at, t.clock.now() + MINUTE);
    assert.match(refused.last_error ?? '', /"unsuccessful, bad signature", not "success"/);

    // The word alone, in any case and with the spaces, line ends or byte-order mark a PHP script may
    // print around it, acknowledges (V2Board, Xboard, dujiaoka and new-api answer "success").
    w.standIn.reply = () => ({ status: 200, body: '\uFEFF Success\r\n' });
    t.clock.advance(MINUTE);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits.length, 2);
    const acknowledged = await t.deps.db.selectFrom('shop_notifies').selectAll().executeTakeFirstOrThrow();
    assert.equal(acknowledged.status, 'delivered');
  } finally {
    await w.close();
  }
});
