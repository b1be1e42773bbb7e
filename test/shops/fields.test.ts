/**
 * What a shop's signed request may carry: protocol text fields without control characters, bidi
 * controls or surrounding spaces (they reach consoles, mails and callbacks), refused in the
 * protocol's own error shape on both engines; and a replay of an order number is the same order only
 * in the same amount AND currency.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchRates, pricingConfig, startRateSources } from '../helpers/rates.js';
import { connect, local, shopSign as sign, startShopWorld, type ShopWorld } from './support.js';

type Json = Record<string, unknown>;

async function mapi(w: ShopWorld, apiUrl: string, fields: Record<string, string>, key: string): Promise<Json> {
  const res = await fetch(`${local(w, apiUrl)}mapi.php`, {
    method: 'POST',
    body: new URLSearchParams({ ...fields, sign: sign(fields, key), sign_type: 'MD5' }),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as Json;
}

async function create(w: ShopWorld, body: Record<string, string | number>, key: string): Promise<Json> {
  const res = await fetch(`${w.h.t.baseUrl}/api/v1/order/create-transaction`, {
    method: 'POST',
    body: JSON.stringify({ ...body, signature: sign(body, key) }),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as Json;
}

/**
 * Values no protocol text field may hold: a newline, NUL, a bidi override and isolate, the bidi marks
 * (LRM, RLM, ALM: Unicode's Bidi_Control like the others), surrounding spaces, a C1 control.
 */
const UNSAFE = ['\u0000B', '\nB', '\u202e1-2', '\u2066B\u2069', '\u200fB', '\u200eB', '\u061cB', ' ', '\u0085B', '\u2028B', '\tB'];

/** The field's good value spoiled by one of them: a leading and a trailing space, or the characters inside. */
function spoiled(value: string, unsafe: string): string[] {
  return unsafe === ' ' ? [` ${value}`, `${value} `, `${value}\u00a0`] : [`${value.slice(0, 1)}${unsafe}${value.slice(1)}`];
}

const refusal = (field: string) => `${field} must not contain control or bidi characters, nor begin or end with a space`;

/** Each named field of a good request, spoiled in every way, sent alone: the answer is the refusal naming that field. */
async function refusesEverySpoiled<T extends Record<string, string | number>>(
  good: T,
  fields: Array<keyof T & string>,
  send: (body: T) => Promise<unknown>,
  refused: (field: string) => unknown,
): Promise<void> {
  for (const field of fields) {
    for (const value of UNSAFE.flatMap((unsafe) => spoiled(String(good[field]), unsafe))) {
      assert.deepEqual(await send({ ...good, [field]: value }), refused(field), `${field} = ${JSON.stringify(value)}`);
    }
  }
}

test('shop fields: control, bidi and surrounding-space characters in order numbers and other text fields are refused in Epay and Epusdt shape; nothing is created', async () => {
  const w = await startShopWorld();
  try {
    const epay = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const order = {
      pid: String(epay.pid),
      type: 'alipay',
      out_trade_no: 'F-1',
      notify_url: w.standIn.url('/n'),
      return_url: 'https://shop.example/r',
      name: 'Plan',
      money: '5',
      param: 'p',
    };
    await refusesEverySpoiled(
      order,
      ['out_trade_no', 'name', 'param', 'type', 'notify_url', 'return_url'],
      (body) => mapi(w, epay.apiUrl, body, epay.key),
      (field) => ({ code: -1, msg: refusal(field) }),
    );
    // submit.php answers its page; api.php its JSON.
    const page = await fetch(`${local(w, epay.apiUrl)}submit.php`, {
      method: 'POST',
      body: new URLSearchParams({ ...order, out_trade_no: 'A\u0000B', sign: sign({ ...order, out_trade_no: 'A\u0000B' }, epay.key) }),
      redirect: 'manual',
    });
    assert.equal(page.status, 400);
    assert.match(await page.text(), /out_trade_no must not contain/);
    for (const field of ['out_trade_no', 'trade_no']) {
      const query = await fetch(
        `${local(w, epay.apiUrl)}api.php?${new URLSearchParams({ act: 'order', pid: String(epay.pid), key: epay.key, [field]: 'A\u0000B' })}`,
      );
      assert.deepEqual(await query.json(), { code: -1, msg: refusal(field) });
    }

    const epusdt = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
    const tx = {
      order_id: 'E-1',
      amount: 5,
      notify_url: w.standIn.url('/n'),
      redirect_url: 'https://shop.example/r',
      name: 'Plan',
      fiat: 'USDT',
      trade_type: 'usdt.trc20',
    };
    await refusesEverySpoiled(
      tx,
      ['order_id', 'name', 'notify_url', 'redirect_url', 'fiat', 'trade_type'],
      async (body) => {
        const answer = await create(w, body, epusdt.key);
        return [answer.status_code, answer.message];
      },
      (field) => [400, refusal(field)],
    );
    // JSON can carry an unpaired surrogate (a form cannot: it decodes to U+FFFD); neither database can store one as sent.
    for (const field of ['order_id', 'name'] as const) {
      const answer = await create(w, { ...tx, [field]: 'A\ud800B' }, epusdt.key);
      assert.deepEqual([answer.status_code, answer.message], [400, `${field} is not valid Unicode text (an unpaired surrogate)`]);
    }
    for (const path of ['/api/v1/order/check-status/', '/pay/check-status/']) {
      const poll = (await (await fetch(`${w.h.t.baseUrl}${path}inv_%00x`)).json()) as Json;
      assert.deepEqual([poll.status_code, poll.message], [400, 'order not found']);
    }

    assert.equal((await w.merchant.client.get('/invoices')).body.invoices.length, 0, 'nothing was created');
    assert.equal(
      await w.h.t.deps.db
        .selectFrom('shop_orders')
        .select('invoice_id')
        .execute()
        .then((rows) => rows.length),
      0,
    );
    // The same orders with clean fields pass.
    assert.equal((await mapi(w, epay.apiUrl, order, epay.key)).code, 1);
    assert.equal((await create(w, tx, epusdt.key)).status_code, 200);
  } finally {
    await w.close();
  }
});

test('shop replays: the same order number in another currency is refused in the protocol shape, not answered with the first invoice', async () => {
  const rates = await startRateSources({ CNY: '7.115' });
  const w = await startShopWorld({ pricing: pricingConfig(rates) });
  try {
    await fetchRates(w.h.t);
    const epay = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const order = { pid: String(epay.pid), out_trade_no: 'R-1', notify_url: w.standIn.url('/n'), name: 'Plan', money: '10' };
    const first = await mapi(w, epay.apiUrl, order, epay.key);
    assert.equal(first.code, 1, JSON.stringify(first));
    assert.equal(
      (await mapi(w, epay.apiUrl, { ...order, money: '10.00' }, epay.key)).trade_no,
      first.trade_no,
      'the same amount and currency: the same invoice',
    );
    assert.equal((await mapi(w, epay.apiUrl, { ...order, fiat: 'usdt' }, epay.key)).trade_no, first.trade_no, 'USDT named explicitly is the same currency');
    for (const other of [{ fiat: 'CNY' }, { currency: 'CNY' }] as Record<string, string>[]) {
      assert.deepEqual(await mapi(w, epay.apiUrl, { ...order, ...other }, epay.key), {
        code: -1,
        msg: 'order R-1 was already created with another amount or currency (10 USDT); use a new order number',
      });
    }

    // Epusdt: a CNY order replayed without `fiat` (the connection's USDT), or in USDT, is another order.
    const epusdt = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
    const tx = { order_id: 'W-1', amount: 71.15, fiat: 'CNY', notify_url: w.standIn.url('/n') };
    const made = await create(w, tx, epusdt.key);
    assert.equal(made.status_code, 200, JSON.stringify(made));
    assert.equal(((await create(w, tx, epusdt.key)).data as Json).trade_id, (made.data as Json).trade_id);
    const { fiat: _fiat, ...withoutFiat } = tx;
    for (const replay of [withoutFiat, { ...tx, fiat: 'USDT' }]) {
      const refused = await create(w, replay, epusdt.key);
      assert.deepEqual(
        [refused.status_code, refused.message],
        [400, 'order W-1 was already created with another amount or currency (71.15 CNY); use a new order number'],
      );
    }
    assert.equal((await w.merchant.client.get('/invoices')).body.invoices.length, 2);
  } finally {
    await w.close();
    await rates.close();
  }
});
