/**
 * A shop connection's request budget is the shop's own: a stranger who knows a pid (it is in every
 * buyer's submit.php URL) cannot spend it with wrong signatures, nor learn from it whether a pid
 * exists. Failed checks are counted per client address instead, both protocols together, and an
 * unknown pid is refused exactly like a wrong key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUTH_FAILURES_PER_MINUTE, SHOP_REQUESTS_PER_MINUTE } from '../../src/shops/shop-orders.js';
import { connect, local, signed, startShopWorld, type ShopWorld } from './support.js';

/** An Epay call as any client makes it; the raw answer (status and text), so two answers compare byte for byte. */
async function epay(w: ShopWorld, apiUrl: string, file: 'mapi.php' | 'api.php' | 'submit.php', fields: Record<string, string>) {
  const res = await fetch(`${local(w, apiUrl)}${file}`, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
  return { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after'), text: await res.text() };
}

const AUTH = JSON.stringify({ code: -1, msg: 'signature verification failed' });
const LIMITED = JSON.stringify({ code: -1, msg: 'too many requests with a wrong signature or key; retry in a minute' });

test("shop budget: 125 wrong-key Epay requests naming a shop's pid leave its budget whole; an unknown pid answers exactly like a wrong key", async () => {
  const w = await startShopWorld();
  try {
    const { t } = w.h;
    const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const order = (pid: string, no: string) => ({ pid, type: 'alipay', out_trade_no: no, notify_url: w.standIn.url('/n'), name: 'Plan', money: '5' });
    let unknownPid = 100_000;
    while (unknownPid === conn.pid) unknownPid++;

    // The audit's attack: 125 mapi.php requests with the shop's pid and a wrong key, from one address.
    const attack = async (pid: string) => {
      const answers = [];
      for (let i = 0; i < 125; i++) answers.push(await epay(w, conn.apiUrl, 'mapi.php', signed(order(pid, `X-${i}`), 'not-the-key')));
      return answers;
    };
    const wrongKey = await attack(String(conn.pid));

    // The shop's next genuinely signed order, from that same address, succeeds.
    const made = JSON.parse((await epay(w, conn.apiUrl, 'mapi.php', signed(order(String(conn.pid), 'REAL-1'), conn.key))).text);
    assert.equal(made.code, 1, JSON.stringify(made));
    const submitted = await epay(w, conn.apiUrl, 'submit.php', signed(order(String(conn.pid), 'REAL-2'), conn.key));
    assert.equal(submitted.status, 302, submitted.text);
    // The attacker was counted per address, never against the connection.
    assert.deepEqual(
      wrongKey.map((a) => a.text),
      [...Array<string>(AUTH_FAILURES_PER_MINUTE).fill(AUTH), ...Array<string>(125 - AUTH_FAILURES_PER_MINUTE).fill(LIMITED)],
    );

    // An unknown pid, one minute later (the address's counter refilled): the very same answers, in the same order.
    t.clock.advance(60_000);
    const unknown = await attack(String(unknownPid));
    assert.deepEqual(unknown, wrongKey);
    // The same for api.php's key, and for submit.php's page, at the start of a fresh minute.
    t.clock.advance(60_000);
    const query = (pid: string, key: string) => epay(w, conn.apiUrl, 'api.php', { act: 'order', pid, key, out_trade_no: 'REAL-1' });
    assert.deepEqual(await query(String(unknownPid), conn.key), await query(String(conn.pid), 'not-the-key'));
    assert.equal((await query(String(conn.pid), 'not-the-key')).text, AUTH);
    const page = async (pid: string, key: string) => {
      const a = await epay(w, conn.apiUrl, 'submit.php', signed(order(pid, 'P-1'), key));
      return { status: a.status, type: a.type, detail: a.text.includes('signature verification failed') };
    };
    assert.deepEqual(await page(String(unknownPid), conn.key), { status: 400, type: 'text/html; charset=UTF-8', detail: true });
    assert.deepEqual(await page(String(conn.pid), 'not-the-key'), await page(String(unknownPid), conn.key));

    // Both protocols count against one per-address limit: Epusdt's wrong signatures meet the same wall.
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) await query(String(conn.pid), 'not-the-key');
    const epusdt = await fetch(`${t.baseUrl}/api/v1/order/create-transaction`, {
      method: 'POST',
      body: JSON.stringify({ order_id: 'E-1', amount: 5, notify_url: w.standIn.url('/n'), signature: '0'.repeat(32) }),
    });
    const refused = (await epusdt.json()) as { status_code: number; message: string };
    assert.deepEqual([refused.status_code, refused.message], [429, 'too many requests with a wrong signature or key; retry in a minute']);

    // None of it touched the shop's budget: all of it is left for signed requests (the replays of
    // REAL-1 and the order queries count), and only then does the shop hear "too many".
    t.clock.advance(60_000);
    for (let i = 0; i < SHOP_REQUESTS_PER_MINUTE; i++) {
      const answer = JSON.parse((await query(String(conn.pid), conn.key)).text);
      assert.equal(answer.code, 1, `signed query ${i + 1}: ${JSON.stringify(answer)}`);
    }
    assert.match(JSON.parse((await query(String(conn.pid), conn.key)).text).msg, /too many requests for this shop connection/);
  } finally {
    await w.close();
  }
});

test("shop budget: a buyer who replays the signed submit.php form the shop gave them (125 times) leaves the shop's budget whole; the replays count against the buyer's address", async () => {
  const w = await startShopWorld();
  try {
    const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const order = (no: string) => ({ pid: String(conn.pid), type: 'alipay', out_trade_no: no, notify_url: w.standIn.url('/n'), name: 'Plan', money: '5' });
    // What every buyer's browser carries: the shop's signed form for their own order (pid, fields and sign in plain sight).
    const form = signed(order('BUYER-1'), conn.key);
    const first = await epay(w, conn.apiUrl, 'submit.php', form);
    assert.equal(first.status, 302, first.text);
    // The buyer (or anyone who saw the URL) sends it again and again: each one is a correctly signed replay.
    const replays = [];
    for (let i = 0; i < 125; i++) replays.push((await epay(w, conn.apiUrl, 'mapi.php', form)).text);
    assert.equal(JSON.parse(replays[0]!).code, 1, replays[0]);
    assert.match(JSON.parse(replays[124]!).msg, /too many/, 'the replays are limited, per address');
    // The shop's next new order, signed by its server, is taken.
    const made = JSON.parse((await epay(w, conn.apiUrl, 'mapi.php', signed(order('SHOP-2'), conn.key))).text);
    assert.equal(made.code, 1, JSON.stringify(made));
    const query = JSON.parse((await epay(w, conn.apiUrl, 'api.php', { act: 'order', pid: String(conn.pid), key: conn.key, out_trade_no: 'SHOP-2' })).text);
    assert.equal(query.code, 1, JSON.stringify(query));
  } finally {
    await w.close();
  }
});
