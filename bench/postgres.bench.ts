/**
 * Invoice creations on PostgreSQL, beside the server's own ceilings measured in the same run:
 *   1. one instance: N concurrent creations through one InvoiceCreator (group commit, its pool);
 *   2. two instances: the same N split over two InvoiceCreators with their own pools on the same
 *      database (the database side of two gateways; HTTP is measured by bench:invoices);
 *   3. the ceiling: the same number of invoice rows (with their reservation and event) written by
 *      a bare `pg` loop, 64 per transaction, on as many connections as the group commit uses;
 *   4. pgbench's simple-update (-N) figure on the same server, when pgbench is on PATH.
 * `npm run bench:postgres -- [--url postgres://postgres@127.0.0.1:5432/postgres] [--creations 2000]`
 * Creates and drops its own databases on that server.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import { migrateDatabase } from '../src/db/migrator.js';
import { claimNetwork, configuredClaim } from '../src/db/network-guard.js';
import { serverUrl, withClient } from '../src/db/postgres.js';
import { buildConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { InvoiceCreator } from '../src/invoices/invoices.service.js';
import { createLogger } from '../src/lib/log.js';
import { insertMerchant } from '../src/accounts/merchants.repo.js';
import { registerWallet } from '../src/wallets/wallets.repo.js';

const { values } = parseArgs({
  options: { url: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' }, creations: { type: 'string', default: '2000' } },
});
const admin = values.url!;
const N = Number(values.creations);
const ADDRESS = 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre';

async function scratch(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gwbench_${randomBytes(4).toString('hex')}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE ${name}`));
  return { url: serverUrl(admin, name), drop: () => withClient(admin, (c) => c.query(`DROP DATABASE ${name} WITH (FORCE)`)).then(() => undefined) };
}

async function creationRate(instances: number): Promise<string> {
  const db = await scratch();
  const config = buildConfig({ database: { path: '/nonexistent', url: db.url }, log: { level: 'error' }, rate_limits: { invoices_per_merchant: 0 } });
  const log = createLogger('error');
  const opened = Array.from({ length: instances }, () => openDatabase(config.database));
  try {
    await migrateDatabase(opened[0]!, Date.now());
    await claimNetwork(opened[0]!, db.url, configuredClaim(config), Date.now());
    const merchant = await insertMerchant(opened[0]!.db, { email: 'bench@example.test', name: 'Bench', passwordHash: null, emailVerifiedAt: 1 }, Date.now());
    const { wallet } = await registerWallet(opened[0]!.db, config.network.id, merchant.id, 'Main', ADDRESS, Date.now());
    const creators = opened.map((database) => new InvoiceCreator(createDeps({ config, database, log })));
    const started = performance.now();
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        creators[i % instances]!.create({
          merchantId: merchant.id,
          idempotencyKey: `k-${i}`,
          body: { merchant_order_id: `o-${i}`, amount: '25', wallet_id: wallet.id, expires_in_minutes: 20 },
        }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const { rows } = await (
      await opened[0]!.pool!()
    ).query<{ n: number; amounts: number }>(`SELECT count(*) AS n, count(DISTINCT payable_amount) AS amounts FROM invoices`);
    if (rows[0]!.n !== N || rows[0]!.amounts !== N) throw new Error(`expected ${N} invoices with distinct amounts, got ${JSON.stringify(rows[0])}`);
    const batches = creators.map((c) => c.committer.stats.batches).reduce((a, b) => a + b, 0);
    return `${(N / seconds).toFixed(0)} creations/s (${batches} commits, ${N} distinct amounts)`;
  } finally {
    for (const d of opened) await d.close();
    await db.drop();
  }
}

/** The same three rows per invoice written by a bare pg loop, 64 invoices per transaction, `connections` at once. */
async function bareCeiling(connections: number): Promise<string> {
  const db = await scratch();
  const database = openDatabase({ path: '', url: db.url });
  await migrateDatabase(database, Date.now());
  await database.db
    .insertInto('merchants')
    .values({
      id: 'm',
      email: 'b@x',
      name: 'b',
      password_hash: null,
      email_verified_at: 1,
      google_sub: null,
      verification_sent_at: null,
      created_at: 1,
      updated_at: 1,
      exists_notice_sent_at: null,
    })
    .execute();
  await database.db
    .insertInto('wallets')
    .values({ id: 'w', merchant_id: 'm', label: 'l', address: ADDRESS, network: 'tron-mainnet', created_at: 1, archived_at: null })
    .execute();
  await database.close();
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      return c;
    }),
  );
  let next = 0;
  const started = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (next < N) {
        const from = next;
        next = Math.min(N, next + 64);
        await c.query('BEGIN');
        for (let i = from; i < next; i++) {
          const now = Date.now();
          await c.query(
            `INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address, merchant_order_id, idempotency_key, request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token, created_at, expires_at, reserved_until)
             VALUES ($1, 'm', 'w', 'tron-mainnet', 'USDT', 'c', $2, $3, $3, 'f', 25000000, $4, $5, 'pending', $1, $6, $6, $6)`,
            [`inv_${i}`, ADDRESS, `o-${i}`, i + 1, 25_000_000 + i + 1, now],
          );
          await c.query(`INSERT INTO amount_reservations VALUES ('tron-mainnet', 'c', $1, $2, $3, $4, $4)`, [ADDRESS, 25_000_000 + i + 1, `inv_${i}`, now]);
          await c.query(`INSERT INTO events (id, merchant_id, type, invoice_id, data, created_at) VALUES ($1, 'm', 'invoice.created', $2, '{}', $3)`, [
            `evt_${i}`,
            `inv_${i}`,
            now,
          ]);
        }
        await c.query('COMMIT');
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const c of clients) await c.end();
  await db.drop();
  return `${(N / seconds).toFixed(0)} invoices/s (3 inserts each, 64 per transaction, ${connections} connections)`;
}

function pgbench(): string {
  const which = spawnSync('pgbench', ['--version'], { encoding: 'utf8' });
  if (which.status !== 0) return 'pgbench not on PATH';
  const u = new URL(admin);
  const args = ['-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres')];
  const name = `gwbench_pgbench_${randomBytes(3).toString('hex')}`;
  spawnSync('createdb', [...args, name]);
  try {
    spawnSync('pgbench', [...args, '-i', '-q', '-s', '4', name], { encoding: 'utf8' });
    const run = spawnSync('pgbench', [...args, '-N', '-c', '4', '-j', '2', '-T', '10', name], { encoding: 'utf8' });
    const tps = /tps = ([\d.]+)/.exec(run.stdout)?.[1];
    return tps ? `${Number(tps).toFixed(0)} transactions/s (simple-update -N, 4 clients, 10 s, scale 4)` : `pgbench failed: ${run.stderr.trim()}`;
  } finally {
    spawnSync('dropdb', [...args, '--force', name]);
  }
}

console.log(`gatewayd PostgreSQL benchmark, Node ${process.version}, ${N} creations, server ${serverUrl(admin)}`);
console.log(`  one instance  (group commit): ${await creationRate(1)}`);
console.log(`  two instances (two pools and group commits):       ${await creationRate(2)}`);
console.log(`  ceiling: bare pg loop, the same rows:               ${await bareCeiling(4)}`);
console.log(`  pgbench on the same server:                         ${pgbench()}`);
