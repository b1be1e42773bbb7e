/**
 * Seeds a fresh gatewayd database for the benchmarks: one merchant with an API key (all scopes)
 * and wallets made through the real repositories, then N historical invoices written directly with
 * prepared statements in large transactions (synchronous=OFF while seeding only: the file is thrown
 * away after the run). Every invoice gets the amount reservation and the allocation cursor a real
 * creation would have left, so the unique-amount machinery sees a realistic table.
 */
import { randomBytes } from 'node:crypto';
import { insertMerchant } from '../../src/accounts/merchants.repo.js';
import { createSession } from '../../src/accounts/sessions.repo.js';
import { insertKey } from '../../src/api-keys/api-keys.repo.js';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { SCOPES } from '../../src/http/context.js';
import { registerWallet } from '../../src/wallets/wallets.repo.js';
import { NETWORK, randomAddress, USDT_CONTRACT } from '../../test/helpers/tron-samples.js';

export const BENCH_ADDRESS = 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre';
const DAY = 86_400_000;

export interface Seeded {
  merchantId: string;
  apiKey: string;
  /** The owner's session cookie value (for GET /me). */
  sessionToken: string;
  walletId: string;
  address: string;
  /** Wallets on further addresses (for the chain figures), in creation order. */
  extraWallets: Array<{ id: string; address: string }>;
  /** A checkout token of a seeded invoice (middle of the table), or undefined with no invoices. */
  sampleCheckoutToken?: string;
}

export interface SeedOptions {
  invoices: number;
  /** Distinct base prices the historical invoices spread over (each gets invoices/prices adjustments). */
  prices?: number;
  extraWallets?: number;
}

export async function seedDatabase(path: string, options: SeedOptions): Promise<Seeded> {
  const database = openDatabase(path);
  const now = Date.now();
  migrate(database.sqlite, now);
  const merchant = await insertMerchant(database.db, { email: 'bench@example.test', name: 'Bench', passwordHash: null, emailVerifiedAt: now }, now);
  const { secret } = await insertKey(database.db, merchant.id, { name: 'bench', scopes: SCOPES, expiresInDays: null }, now);
  const { wallet } = await registerWallet(database.db, NETWORK, merchant.id, 'Bench', BENCH_ADDRESS, now);
  const extraWallets: Array<{ id: string; address: string }> = [];
  for (let i = 0; i < (options.extraWallets ?? 0); i++) {
    const { wallet: w } = await registerWallet(database.db, NETWORK, merchant.id, `W${i}`, randomAddress(), now);
    extraWallets.push({ id: w.id, address: w.address });
  }
  const { token: sessionToken } = await createSession(database.db, merchant.id, now);
  const sampleCheckoutToken = bulkInvoices(database.sqlite, merchant.id, wallet.id, options.invoices, options.prices ?? 1000, now);
  await database.close();
  return { merchantId: merchant.id, apiKey: secret, sessionToken, walletId: wallet.id, address: BENCH_ADDRESS, extraWallets, sampleCheckoutToken };
}

/**
 * n invoices over the last 90 days (oldest first, distinct created_at), prices 1..`prices` USDT,
 * adjustments 0.000001, 0.000002, ... per price as consecutive creations would give them; mostly
 * expired, one in ten confirmed with a tx hash. Returns the checkout token of invoice n/2.
 */
function bulkInvoices(
  sqlite: ReturnType<typeof openDatabase>['sqlite'],
  merchantId: string,
  walletId: string,
  n: number,
  prices: number,
  now: number,
): string | undefined {
  if (n === 0) return undefined;
  sqlite.pragma('synchronous = OFF');
  const inv = sqlite.prepare(
    `INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address, merchant_order_id, idempotency_key,
       request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token, tx_hash, confirmed_at, created_at, expires_at, reserved_until)
     VALUES (?, ?, ?, ?, 'USDT', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const res = sqlite.prepare('INSERT INTO amount_reservations VALUES (?, ?, ?, ?, ?, ?, ?)');
  const cursor = sqlite.prepare(
    `INSERT INTO amount_cursors (network, token_contract, address, base_amount, next_adjustment) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT DO UPDATE SET next_adjustment = excluded.next_adjustment`,
  );
  const start = now - 90 * DAY;
  const step = Math.max(1, Math.floor((90 * DAY) / n));
  const fingerprint = randomBytes(32).toString('hex');
  let sample: string | undefined;
  const batch = sqlite.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const id = `inv_seed${String(i).padStart(8, '0')}`;
      const base = (1 + (i % prices)) * 1_000_000;
      const adjustment = 1 + Math.floor(i / prices);
      const createdAt = start + i * step;
      const confirmed = i % 10 === 0;
      const token = randomBytes(18).toString('base64url');
      if (i === Math.floor(n / 2)) sample = token;
      inv.run(
        id,
        merchantId,
        walletId,
        NETWORK,
        USDT_CONTRACT,
        BENCH_ADDRESS,
        `order-${i}`,
        `idem-${i}`,
        fingerprint,
        base,
        adjustment,
        base + adjustment,
        confirmed ? 'confirmed' : 'expired',
        token,
        confirmed ? randomBytes(32).toString('hex') : null,
        confirmed ? createdAt + 60_000 : null,
        createdAt,
        createdAt + 20 * 60_000,
        createdAt + 90 * DAY,
      );
      res.run(NETWORK, USDT_CONTRACT, BENCH_ADDRESS, base + adjustment, id, createdAt, createdAt + 90 * DAY);
    }
  });
  for (let from = 0; from < n; from += 50_000) batch(from, Math.min(n, from + 50_000));
  sqlite.transaction(() => {
    for (let p = 0; p < Math.min(prices, n); p++) {
      const used = Math.floor((n - 1 - p) / prices) + 1;
      cursor.run(NETWORK, USDT_CONTRACT, BENCH_ADDRESS, (1 + p) * 1_000_000, used + 1);
    }
  })();
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  return sample;
}
