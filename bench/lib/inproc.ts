/**
 * The in-process figures: the bare better-sqlite3 ceiling of figure 1 and the allocation cost of
 * figure 2 (the product's own code on a seeded database, no HTTP).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildConfig } from '../../src/config.js';
import { openDatabase, openSqlite, writeTransaction } from '../../src/db/database.js';
import { createDeps } from '../../src/deps.js';
import { chooseAmount, claimCursor, reservationInsert } from '../../src/invoices/allocation.repo.js';
import { createInvoiceOrThrow } from '../../src/invoices/invoices.service.js';
import { createLogger } from '../../src/lib/log.js';
import { newId } from '../../src/lib/ids.js';
import { NETWORK, USDT_CONTRACT } from '../../test/helpers/tron-samples.js';
import { seedDatabase } from './seed.js';
import { micros } from '../../src/lib/amounts.js';

class RollBack extends Error {}

/**
 * What SQLite alone does on this disk: the rows one creation writes (invoice, reservation, cursor,
 * event; random ids and keys as gatewayd draws them) with one BEGIN IMMEDIATE ... COMMIT for each
 * `perCommit` creations (1: one commit each), WAL and synchronous=FULL as gatewayd runs. No
 * savepoints, lookups, allocation or JSON: the storage work alone.
 */
export async function sqliteCeiling(dir: string, seconds: number, perCommit = 1): Promise<{ perSecond: number }> {
  const seeded = await seedDatabase(join(dir, 'gateway.db'), { invoices: 0 });
  const sqlite = openSqlite(join(dir, 'gateway.db'));
  const inv = sqlite.prepare(
    `INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address, merchant_order_id, idempotency_key,
       request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token, created_at, expires_at, reserved_until)
     VALUES (?, ?, ?, ?, 'USDT', ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
  );
  const res = sqlite.prepare('INSERT INTO amount_reservations VALUES (?, ?, ?, ?, ?, ?, ?)');
  const cursor = sqlite.prepare(
    `INSERT INTO amount_cursors (network, token_contract, address, base_amount, next_adjustment) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT DO UPDATE SET next_adjustment = excluded.next_adjustment`,
  );
  const event = sqlite.prepare('INSERT INTO events (id, merchant_id, type, invoice_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const begin = sqlite.prepare('BEGIN IMMEDIATE');
  const commit = sqlite.prepare('COMMIT');
  const base = 25_000_000;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let n = 0;
  while (performance.now() < deadline) {
    n++;
    const id = newId('inv');
    const now = Date.now();
    if ((n - 1) % perCommit === 0) begin.run();
    inv.run(
      id,
      seeded.merchantId,
      seeded.walletId,
      NETWORK,
      USDT_CONTRACT,
      seeded.address,
      `o-${n}`,
      newId('req'),
      'f'.repeat(64),
      base,
      n,
      base + n,
      randomBytes(18).toString('base64url'),
      now,
      now + 1_200_000,
      now + 90 * 86_400_000,
    );
    res.run(NETWORK, USDT_CONTRACT, seeded.address, base + n, id, now, now + 90 * 86_400_000);
    cursor.run(NETWORK, USDT_CONTRACT, seeded.address, base, n + 1);
    event.run(newId('evt'), seeded.merchantId, 'invoice.created', id, JSON.stringify({ invoice: { id, payable_amount: '25.000001' } }), now);
    if (n % perCommit === 0) commit.run();
  }
  if (sqlite.inTransaction) commit.run();
  const perSecond = n / ((performance.now() - started) / 1000);
  sqlite.close();
  return { perSecond };
}

export interface AllocationFigure {
  reservations: number;
  allocationUs: number;
  creationUs: number;
}

/**
 * Time per invoice for one price on one address with `n` earlier reservations of that price:
 * a whole creation with its own durable commit (mean of 300), then the allocation alone (choose +
 * reserve, 2 000 times in one rolled-back transaction).
 */
export async function allocationCost(dir: string, n: number): Promise<AllocationFigure> {
  const path = join(dir, 'gateway.db');
  // One price holds at most 999 999 amounts (max_adjustment <= 0.999999): past 900 000 the
  // reservations are split evenly over the target price and further ones on the same address.
  const seeded = await seedDatabase(path, { invoices: n, prices: Math.max(1, Math.ceil(n / 900_000)) });
  const config = buildConfig({ database: { path }, invoices: { max_adjustment: '0.999999' }, log: { level: 'silent' } });
  const database = openDatabase(path);
  const deps = createDeps({ config, database, log: createLogger('silent') });
  const target = { network: NETWORK, tokenContract: USDT_CONTRACT, address: seeded.address };
  const base = 1_000_000n;
  // Whole creations first (they also give the reservations below an invoice to point at).
  const runs = 300;
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) {
    const req = {
      merchantId: seeded.merchantId,
      idempotencyKey: `alloc-${i}`,
      body: { merchant_order_id: `alloc-${i}`, amount: '1', wallet_id: seeded.walletId, expires_in_minutes: 20 },
    };
    await writeTransaction(deps.db, async (_trx, tx) => createInvoiceOrThrow(tx, deps, req));
  }
  const creationUs = ((performance.now() - t0) / runs) * 1000;
  const holder = (await deps.db.selectFrom('invoices').select('id').where('idempotency_key', '=', 'alloc-0').executeTakeFirstOrThrow()).id;
  let allocMs = 0;
  const allocRuns = 2000;
  await writeTransaction(deps.db, async (_trx, tx) => {
    for (let i = 0; i < allocRuns; i++) {
      const s = performance.now();
      const a = await chooseAmount(tx, await claimCursor(tx, target, micros(base)), micros(999_999n), Date.now());
      allocMs += performance.now() - s;
      if (a.kind !== 'fresh') throw new Error(`unexpected ${a.kind}`);
      await reservationInsert(target, micros(base + a.adjustment), holder, Date.now(), Date.now() + 1).run(tx);
    }
    throw new RollBack();
  }).catch((err) => {
    if (!(err instanceof RollBack)) throw err;
  });
  await database.close();
  return { reservations: n, allocationUs: (allocMs / allocRuns) * 1000, creationUs };
}
