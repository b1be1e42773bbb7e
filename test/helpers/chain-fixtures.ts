/**
 * Invoices for chain watcher tests, inserted as rows (merchant, wallet, invoice, amount
 * reservation) until the invoices API is merged; the lead may switch these to POST /invoices.
 */
import { randomBytes } from 'node:crypto';
import { insertMerchant } from '../../src/accounts/merchants.repo.js';
import { rowToInvoice, type Invoice } from '../../src/invoices/invoice.model.js';
import { withOptionsOne } from '../../src/invoices/invoice-options.repo.js';
import type { InvoiceStatus } from '../../src/db/schema.js';
import { DAY, HOUR, SECOND } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { TOKEN } from '../../src/lib/tron.js';
import { NETWORK, USDT_CONTRACT } from './tron-samples.js';
import type { TestApp } from './app.js';
import { startTronGrid, type FakeTronGrid } from './trongrid.js';
import { createChainRuntime, runOnce } from '../../src/chain/chain.worker.js';
import type { SimulatedTronOptions } from '../../src/devnet/tron-node.js';
import { startTestApp, type ConfigOverrides } from './app.js';

let counter = 0;

export async function newMerchantId(t: TestApp): Promise<string> {
  counter += 1;
  const m = await insertMerchant(
    t.deps.db,
    { email: `chain${counter}.${t.clock.now()}@example.test`, name: `Shop ${counter}`, passwordHash: null, emailVerifiedAt: t.clock.now() },
    t.clock.now(),
  );
  return m.id;
}

export interface InvoiceInput {
  address: string;
  /** Payable micro-units. */
  amount: bigint;
  merchantId?: string;
  createdAt?: number;
  /** Default: created + 1 hour. */
  expiresAt?: number;
  status?: InvoiceStatus;
  /** Default: the TRON test network's USDT. For an EVM invoice, register its wallet first (registerWallet) with its networks. */
  network?: string;
  token?: string;
  tokenContract?: string;
}

export async function insertInvoice(t: TestApp, input: InvoiceInput): Promise<Invoice> {
  const db = t.deps.db;
  const merchantId = input.merchantId ?? (await newMerchantId(t));
  const createdAt = input.createdAt ?? t.clock.now();
  let wallet = await db.selectFrom('wallets').select('id').where('merchant_id', '=', merchantId).where('address', '=', input.address).executeTakeFirst();
  if (!wallet) {
    wallet = { id: newId('wal') };
    await db
      .insertInto('wallets')
      .values({ id: wallet.id, merchant_id: merchantId, label: 'Main', address: input.address, network: input.network ?? NETWORK, created_at: createdAt })
      .execute();
    await db
      .insertInto('wallet_networks')
      .values({ wallet_id: wallet.id, network: input.network ?? NETWORK, address: input.address })
      .execute();
  }
  const network = input.network ?? NETWORK;
  const tokenContract = input.tokenContract ?? USDT_CONTRACT;
  const id = newId('inv');
  const adjustment = input.amount % 1_000_000n;
  const row = {
    id,
    merchant_id: merchantId,
    wallet_id: wallet.id,
    network,
    token: input.token ?? TOKEN,
    token_contract: tokenContract,
    wallet_address: input.address,
    merchant_order_id: `order-${id}`,
    idempotency_key: `key-${id}`,
    request_fingerprint: 'f'.repeat(64),
    base_amount: Number(input.amount - adjustment),
    adjustment: Number(adjustment),
    payable_amount: Number(input.amount),
    status: input.status ?? 'pending',
    amount_reuse_review: input.status === 'review' ? 1 : 0,
    description: null,
    metadata: '{}',
    checkout_token: randomBytes(24).toString('base64url'),
    tx_hash: null,
    confirmed_at: null,
    created_at: createdAt,
    expires_at: input.expiresAt ?? createdAt + HOUR,
    reserved_until: createdAt + 90 * DAY,
    redirect_url: null,
    cancelled_at: null,
    received_amount: null,
    price_amount: null,
    price_currency: null,
    price_rate: null,
    price_markup_percent: null,
    price_sources: null,
    price_rate_at: null,
    amount_received: 0,
    resolution: null,
  };
  await db.insertInto('invoices').values(row).execute();
  await db
    .insertInto('amount_reservations')
    .values({
      network,
      token_contract: tokenContract,
      address: input.address,
      amount: Number(input.amount),
      invoice_id: id,
      reserved_at: createdAt,
      reserved_until: row.reserved_until,
    })
    .onConflict((oc) =>
      oc
        .columns(['network', 'token_contract', 'address', 'amount'])
        .doUpdateSet({ invoice_id: id, reserved_at: createdAt, reserved_until: row.reserved_until }),
    )
    .execute();
  return rowToInvoice(row, []);
}

export async function getInvoice(t: TestApp, id: string): Promise<Invoice> {
  return (await withOptionsOne(t.deps.db, await t.deps.db.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirstOrThrow()))!;
}

export async function eventsOf(t: TestApp, invoiceId: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const rows = await t.deps.db.selectFrom('events').select(['type', 'data']).where('invoice_id', '=', invoiceId).orderBy('created_at').orderBy('id').execute();
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) as Record<string, unknown> }));
}

export async function transfersOf(t: TestApp) {
  return t.deps.db.selectFrom('chain_transfers').selectAll().orderBy('block_timestamp').orderBy('log_index').execute();
}

export interface ChainHarness {
  t: TestApp;
  tg: FakeTronGrid;
  close(): Promise<void>;
}

/** A test app whose tron.api_url is a fresh stand-in that shares the app's ManualClock. */
export async function startChainHarness(options: { config?: ConfigOverrides; now?: number; node?: SimulatedTronOptions } = {}): Promise<ChainHarness> {
  const config = options.config ?? {};
  let clockNow: () => number = () => options.now ?? Date.UTC(2026, 0, 15, 12, 0, 0);
  const tg = await startTronGrid({ ...options.node, now: () => clockNow() });
  const t = await startTestApp({ now: options.now, config: { ...config, tron: { api_url: tg.url, poll_interval_seconds: 5, ...(config.tron ?? {}) } } });
  clockNow = () => t.clock.now();
  // Unpaced: loopback tests need not stay under TronGrid's rate (pacing has its own test).
  t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0, timeoutMs: 2000 });
  return {
    t,
    tg,
    async close() {
      await t.close();
      await tg.close();
    },
  };
}

/** Moves the clock on and runs the watcher until it has nothing more to do (backfill included). */
export async function pass(h: ChainHarness, ms = 5 * SECOND): Promise<void> {
  h.t.clock.advance(ms);
  while (await runOnce(h.t.deps));
}
