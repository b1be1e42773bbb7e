/**
 * Shared pieces of the shop-protocol tests: a test app on the simulated chain with a loopback shop
 * stand-in it may call back, a merchant with a connection, and what the shops themselves do, written
 * from the protocols' documentation (not with the gateway's signer).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShopNotifier, type ShopNotifier } from '../../src/shops/shop-notify.js';
import { runShopNotifies } from '../../src/shops/shop-notify.worker.js';
import { startChainHarness, type ChainHarness } from '../helpers/chain-fixtures.js';
import { micro, shop, type Shop } from '../helpers/shop.js';
import { runOnce as chainPass } from '../../src/chain/chain.worker.js';
import { SECOND } from '../../src/lib/clock.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';

export const md5 = (s: string): string => createHash('md5').update(s, 'utf8').digest('hex');

/** What a shop of either protocol signs: the non-empty fields but the signature, sorted by name, joined k=v&..., the key appended, MD5. */
export function shopSign(fields: Record<string, string | number>, key: string): string {
  const text = Object.keys(fields)
    .filter((k) => !['sign', 'sign_type', 'signature'].includes(k) && fields[k] !== '')
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('&');
  return md5(text + key);
}

/** Epay fields as a shop sends them: with their sign and sign_type. */
export function signed(fields: Record<string, string>, key: string): Record<string, string> {
  return { ...fields, sign: shopSign(fields, key), sign_type: 'MD5' };
}

/** What a shop stand-in received: method, path with query, body. */
export interface ShopHit {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
}

/** What the stand-in answers: a status, a body and, when given, headers (Retry-After). */
export interface ShopReply {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** A plain-http shop on loopback (reached as shop.example.test); answers with what `reply` returns. */
export interface ShopStandIn {
  port: number;
  hits: ShopHit[];
  url(path: string): string;
  reply: (hit: ShopHit) => ShopReply;
  close(): Promise<void>;
}

export async function startShopStandIn(): Promise<ShopStandIn> {
  const hits: ShopHit[] = [];
  const standIn: ShopStandIn = {
    port: 0,
    hits,
    url: (path) => `http://shop.example.test:${standIn.port}${path}`,
    reply: () => ({ status: 200, body: 'success' }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const hit: ShopHit = { method: req.method ?? '', path: req.url ?? '', query: new URL(req.url ?? '/', 'http://x').searchParams, body };
      hits.push(hit);
      const { status, body: out, headers } = standIn.reply(hit);
      res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.port = (server.address() as AddressInfo).port;
  return standIn;
}

export interface ShopWorld {
  h: ChainHarness;
  standIn: ShopStandIn;
  rx: HttpsReceiver;
  merchant: Shop;
  /** The [webhooks] settings the app was given (a second instance takes the same). */
  webhooks: Record<string, unknown>;
  notifier: ShopNotifier;
  close(): Promise<void>;
}

export async function startShopWorld(
  options: { pricing?: Record<string, unknown>; evm?: Record<string, unknown>; solana?: Record<string, unknown>; ton?: Record<string, unknown> } = {},
): Promise<ShopWorld> {
  const standIn = await startShopStandIn();
  const rx = await startHttpsReceiver({ hostnames: ['shop-tls.example.test'] });
  const webhooks = rx.webhookConfig({
    allowed_ports: [443, rx.port, standIn.port],
    resolve: { 'shop.example.test': '127.0.0.1', 'shop-tls.example.test': '127.0.0.1' },
    timeout_seconds: 2,
  });
  const h = await startChainHarness({
    config: {
      webhooks,
      ...(options.pricing ? { pricing: options.pricing } : {}),
      ...(options.evm ? { evm: options.evm } : {}),
      ...(options.solana ? { solana: options.solana } : {}),
      ...(options.ton ? { ton: options.ton } : {}),
    },
  });
  const merchant = await shop(h.t);
  return {
    h,
    standIn,
    rx,
    merchant,
    webhooks,
    notifier: createShopNotifier(h.t.deps),
    async close() {
      await h.close();
      await standIn.close();
      await rx.close();
    },
  };
}

export async function connect(w: ShopWorld, body: Record<string, unknown>): Promise<{ id: string; pid: number; apiUrl: string; key: string }> {
  const res = await w.merchant.client.post('/shop-connections', { name: 'Test shop', wallet_id: w.merchant.walletId, currency: 'USDT', ...body });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.connection.id, pid: res.body.connection.pid, apiUrl: res.body.connection.api_url, key: res.body.key };
}

/** The payer: opens the payment link, reads the exact amount from the checkout, and pays it on the simulated chain. */
export async function payThroughCheckout(w: ShopWorld, paymentUrl: string): Promise<{ invoiceId: string; payable: string }> {
  const page = await fetch(local(w, paymentUrl));
  assert.equal(page.status, 200, 'the payment URL opens the checkout page');
  const token = new URL(page.url).pathname.split('/').pop()!;
  const checkout = await w.merchant.client.get(`/checkout/${token}`);
  assert.equal(checkout.status, 200, checkout.text);
  const inv = checkout.body.invoice ?? checkout.body;
  w.h.tg.pay({ to: inv.wallet_address, amount: micro(inv.payable_amount), blockTimestamp: w.h.t.clock.now() + 10 * SECOND });
  w.h.t.clock.advance(2 * 60 * SECOND);
  while (await chainPass(w.h.t.deps));
  return { invoiceId: inv.id, payable: inv.payable_amount };
}

/** The shop-callback worker, run until nothing is due now. */
export async function sendCallbacks(w: ShopWorld): Promise<void> {
  while (await runShopNotifies(w.h.t.deps, w.notifier));
}

/** A URL the gateway gave out (under server.public_url), as reachable in the test (its loopback port). */
export function local(w: ShopWorld, url: string): string {
  const publicUrl = w.h.t.config.server.public_url.replace(/\/+$/, '');
  assert.ok(url.startsWith(publicUrl), `${url} is under ${publicUrl}`);
  return w.h.t.baseUrl + url.slice(publicUrl.length);
}

export async function mapi(w: ShopWorld, apiUrl: string, fields: Record<string, string>) {
  const res = await fetch(`${local(w, apiUrl)}mapi.php`, { method: 'POST', body: new URLSearchParams(fields) });
  assert.equal(res.status, 200);
  return (await res.json()) as Record<string, unknown>;
}

/** An order of 5 made through mapi.php, notified at the shop stand-in's /n. */
export function smallOrder(w: ShopWorld, conn: { apiUrl: string; pid: number; key: string }, outTradeNo: string) {
  return mapi(w, conn.apiUrl, signed({ pid: String(conn.pid), out_trade_no: outTradeNo, notify_url: w.standIn.url('/n'), name: 'x', money: '5' }, conn.key));
}

/** One Epusdt order, paid: its callback is queued (pending), with the invoice's webhook deliveries. */
export async function paidEpusdtOrder(w: ShopWorld, conn: { apiUrl: string; key: string }, orderId: string): Promise<string> {
  const order = { amount: 10, order_id: orderId, notify_url: w.standIn.url('/notify'), redirect_url: 'https://shop.example/return' };
  const text = Object.entries(order)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const res = await fetch(`${local(w, conn.apiUrl)}/api/v1/order/create-transaction`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...order, signature: md5(text + conn.key) }),
  });
  const created = (await res.json()) as { status_code: number; data: { payment_url: string } };
  assert.equal(created.status_code, 200, JSON.stringify(created));
  return (await payThroughCheckout(w, created.data.payment_url)).invoiceId;
}
