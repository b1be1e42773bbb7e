/** Shared set-up for the wallets, invoices, API keys, checkout and ledger tests (over real HTTP). */
import assert from 'node:assert/strict';
import { cookieName } from '../../src/http/auth.js';
import { createSession, SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { commitScan } from '../../src/chain/chain.service.js';
import type { TestApp } from './app.js';
import { signedInMerchant, type SignedIn } from './fixtures.js';
import type { HttpClient, HttpResponse } from './http.js';
import { micros, type Micros } from '../../src/lib/amounts.js';

/** Valid mainnet addresses (real base58check addresses with valid checksums). */
export const ADDRESSES = [
  'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre',
  'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx',
  'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi',
  'TJmmqjb1DK9TTZbQXzRQ2AuA94z4gKAPFh',
] as const;

export interface Shop extends SignedIn {
  walletId: string;
  address: string;
}

let orderCounter = 0;

export async function addWallet(client: HttpClient, address: string, label = 'Main'): Promise<string> {
  const res = await client.post('/wallets', { label, address });
  assert.ok(res.status === 201 || res.status === 200, `wallet: ${res.status} ${res.text}`);
  return res.body.wallet.id as string;
}

/** A signed-in merchant with one wallet on `address`. */
export async function shop(t: TestApp, address: string = ADDRESSES[0], name?: string): Promise<Shop> {
  const signed = await signedInMerchant(t, name ? { name } : {});
  return { ...signed, walletId: await addWallet(signed.client, address), address };
}

export async function newKey(client: HttpClient, body: Record<string, unknown> = { name: 'server' }): Promise<{ secret: string; id: string; body: any }> {
  const res = await client.post('/api-keys', body);
  assert.equal(res.status, 201, res.text);
  return { secret: res.body.secret, id: res.body.api_key.id, body: res.body };
}

export function nextOrderId(): string {
  orderCounter += 1;
  return `order-${orderCounter}`;
}

/** POST /invoices with a fresh key and order id unless given. */
export function createInvoice(client: HttpClient, body: Record<string, unknown>, options: { key?: string; bearer?: string } = {}): Promise<HttpResponse> {
  const merged = { merchant_order_id: nextOrderId(), ...body };
  return client.post('/invoices', merged, {
    headers: { 'idempotency-key': options.key ?? `idem-${merged.merchant_order_id as string}` },
    ...(options.bearer ? { bearer: options.bearer } : {}),
  });
}

/** Exact decimal strings to micro-units, for assertions without floating point. */
export function micro(text: string): Micros {
  const [whole, frac = ''] = text.split('.');
  return micros(BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0')));
}

/** A fresh owner session for this shop (sessions last 30 days; tests move the clock by months). */
export async function renewSession(t: TestApp, s: SignedIn): Promise<void> {
  const { token } = await createSession(t.deps.db, s.merchant.id, t.clock.now());
  s.client.cookies.set(cookieName(t.config, SESSION_COOKIE), token);
}

/**
 * Records one verified USDT transfer of `amount` (a six-decimal string) from ADDRESSES[3] to `to`,
 * as the block scanner does (the scan covers no window, so nothing expires); returns what was recorded.
 */
export async function payOnChain(t: TestApp, to: string, amount: string, tx: { txHash: string; blockTimestamp: number }) {
  const { recorded } = await commitScan(t.deps, {
    transfers: [
      {
        txHash: tx.txHash,
        logIndex: 0,
        from: ADDRESSES[3],
        to,
        amount: micro(amount),
        blockNumber: 100,
        tokenContract: t.deps.config.network.usdtContract,
        blockTimestamp: tx.blockTimestamp,
      },
    ],
    unscanned: { scannedUntil: 0, gaps: [] },
  });
  return recorded;
}
