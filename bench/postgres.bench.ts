/**
 * Invoice creations on PostgreSQL, beside the server's own ceilings measured in the same run:
 *   1. one instance: N concurrent creations through one InvoiceCreator (group commit, its pool),
 *      after 500 creations and an ANALYZE (the statistics a running gateway's autovacuum keeps);
 *   2. two instances: the same N split over two InvoiceCreators with their own pools on the same
 *      database (the database side of two gateways; HTTP is measured by bench:invoices), for one
 *      merchant's wallet and price (their batches take the same row locks: they run in turn), and
 *      with each instance creating for a merchant and wallet of its own (no row shared); then one
 *      and two instances each in a worker thread of its own (its own event loop and heap, as a
 *      gateway process has), which the pools of one thread cannot show once one instance keeps
 *      its thread busy;
 *   3. the ceiling: the same number of invoice rows (with their reservation and event) written by
 *      a bare `pg` loop, 64 per transaction, on one connection (what one instance's group commit
 *      uses: one batch at a time) and on four at once;
 *   4. pgbench's simple-update (-N) figure on the same server, when pgbench is on PATH;
 *   5. the leader fail-over: a process holding the scanner's lease (src/db/leader.ts) is SIGKILLed;
 *      how long until the server releases the lock, and until a follower polling as leaderOnly does
 *      (every 2 s) holds it;
 *   6. the paged list (GET /invoices' query, listInvoicePage) at --big invoices of one merchant
 *      (1 000 000 by default): p50 and p99 of the first page, a page deep in the list (a cursor half
 *      way) and the pending filter, 100 rows each.
 * Two "instances" in 2. are two pools and group commits in this one process (the database side of
 * two gateways); HTTP is measured by bench:invoices. Beside each rate: the queries sent to the
 * server per creation (or per invoice of the ceiling), each one round trip (a query string of
 * several statements is one), counted on the `pg` client, BEGIN and COMMIT included and shared by a
 * batch: the figure that does not depend on the machine's load. And the cores kept busy meanwhile:
 * CPU seconds over wall seconds of this process (every thread) and of the server's processes when
 * it runs on this machine, to read a rate against what the machine had left.
 * `npm run bench:postgres -- [--url postgres://postgres@127.0.0.1:5432/postgres] [--creations 2000] [--big 1000000]`
 * Creates and drops its own databases on that server.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
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
import { createLease } from '../src/db/leader.js';
import { LOCK_KEYS } from '../src/db/postgres.js';
import { findInvoiceCursor, listInvoicePage } from '../src/invoices/invoices.repo.js';
import { cpuMs } from './lib/measure.js';
import { spawn } from 'node:child_process';

const { values } = parseArgs({
  args: isMainThread ? undefined : [],
  options: {
    url: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    creations: { type: 'string', default: '2000' },
    big: { type: 'string', default: '1000000' },
  },
});
const admin = values.url!;
const N = Number(values.creations);
const BIG = Number(values.big);
/** Creations before the measured ones, then ANALYZE (creationRate). */
const WARM = 500;
const ADDRESS = 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre';
/** Receiving addresses of the merchants of creationRate (valid TRON addresses). */
const ADDRESSES = [ADDRESS, 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE'];

/** An instance's configuration on the bench's database (creationRate, instanceWorker). */
function instanceConfig(url: string, prepared: boolean) {
  return buildConfig({
    database: { path: '/nonexistent', url, prepared_statements: prepared },
    log: { level: 'error' },
    rate_limits: { invoices_per_merchant: 0 },
  });
}

/** `count` creations at once, the i-th by the creator and for the owner `by(i)` gives. */
function creations(tag: string, count: number, by: (i: number) => [InvoiceCreator, { merchantId: string; walletId: string }]) {
  return Promise.all(
    Array.from({ length: count }, (_, i) => {
      const [creator, owner] = by(i);
      return creator.create({
        merchantId: owner.merchantId,
        idempotencyKey: `${tag}-${i}`,
        body: { merchant_order_id: `${tag}-${i}`, amount: '25', wallet_id: owner.walletId, expires_in_minutes: 20 },
      });
    }),
  );
}

async function scratch(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gwbench_${randomBytes(4).toString('hex')}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE ${name}`));
  return { url: serverUrl(admin, name), drop: () => withClient(admin, (c) => c.query(`DROP DATABASE ${name} WITH (FORCE)`)).then(() => undefined) };
}

/**
 * N creations split over `instances` creators. `merchants` 1: one merchant, one wallet, one price,
 * so every batch of every instance takes the same two row locks (the pool's allocation cursor and
 * the merchant's invoice_stats row) until its COMMIT, and the instances' batches run one after
 * another. `merchants` = instances: instance i creates for merchant i on a wallet of its own, so
 * their transactions share no row.
 */
async function creationRate(instances: number, merchants = 1, prepared = true, threads = false): Promise<string> {
  const db = await scratch();
  const config = instanceConfig(db.url, prepared);
  const log = createLogger('error');
  const opened = Array.from({ length: instances }, () => openDatabase(config.database));
  try {
    await migrateDatabase(opened[0]!, Date.now());
    await claimNetwork(opened[0]!, db.url, configuredClaim(config), Date.now());
    const owners: Array<{ merchantId: string; walletId: string }> = [];
    for (let m = 0; m < merchants; m++) {
      const merchant = await insertMerchant(
        opened[0]!.db,
        { email: `bench${m}@example.test`, name: 'Bench', passwordHash: null, emailVerifiedAt: 1 },
        Date.now(),
      );
      const { wallet } = await registerWallet(opened[0]!.db, config.network.id, merchant.id, 'Main', ADDRESSES[m]!, Date.now());
      owners.push({ merchantId: merchant.id, walletId: wallet.id });
    }
    const creators = opened.map((database) => new InvoiceCreator(createDeps({ config, database, log })));
    const createAll = (tag: string, count: number) => creations(tag, count, (i) => [creators[i % instances]!, owners[i % merchants]!]);
    // A running gateway's tables have statistics: autovacuum analyzes a table within a minute of its
    // first 50 changes, and every prepared statement is planned again then. Before that, on tables
    // created empty a moment ago, PostgreSQL's generic plan for the lookups may walk all of a
    // merchant's invoices (it costs two indexes alike on a table it believes tiny): docs/operations.md.
    // Threads warm up their own instance (inWorkers): their JavaScript is compiled there.
    const analyze = async () => void (await (await opened[0]!.pool!()).query('ANALYZE'));
    if (!threads) {
      await createAll('warm', WARM);
      await analyze();
    }
    const total = (stat: 'batches' | 'reruns') => creators.map((c) => c.committer.stats[stat]).reduce((a, b) => a + b, 0);
    const before = { batches: total('batches'), reruns: total('reruns') };
    let roundTrips: number;
    let threaded = { batches: 0, reruns: 0 };
    let busy: Busy;
    if (threads) {
      ({ roundTrips, busy, ...threaded } = await inWorkers(
        owners.map((o, i) => ({ url: db.url, prepared, ...o, tag: `t${i}`, warm: WARM / instances, count: N / instances })),
        analyze,
      ));
    } else {
      const watch = busyWatch();
      roundTrips = await countRoundTrips(() => createAll('k', N));
      busy = watch();
    }
    const { seconds } = busy;
    const { rows } = await (
      await opened[0]!.pool!()
    ).query<{ n: number; amounts: number }>(`SELECT count(*) AS n, count(DISTINCT (wallet_address, payable_amount)) AS amounts FROM invoices`);
    if (rows[0]!.n !== N + WARM || rows[0]!.amounts !== N + WARM) {
      throw new Error(`expected ${N + WARM} invoices with distinct amounts, got ${JSON.stringify(rows[0])}`);
    }
    const batches = total('batches') - before.batches + threaded.batches;
    const reruns = total('reruns') - before.reruns + threaded.reruns;
    return `${(N / seconds).toFixed(0)} creations/s (${batches} commits, ${N} distinct amounts, ${reruns} units run again; ${(roundTrips / N).toFixed(2)} round trips a creation; ${busyText(busy, N)})`;
  } finally {
    for (const d of opened) await d.close();
    await db.drop();
  }
}

/**
 * The same three rows per invoice written by a bare pg loop, 64 invoices per transaction, `connections`
 * at once; `prepared`: each insert a named prepared statement (parsed and planned once per connection).
 */
async function bareCeiling(connections: number, prepared = false): Promise<string> {
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
  // pg sends a text with a name as a named statement: Parse once per connection, then Bind and Execute.
  const statement = (name: string, text: string): pg.QueryConfig | string => (prepared ? { name, text } : text);
  const started = performance.now();
  const roundTrips = await countRoundTrips(() =>
    Promise.all(
      clients.map(async (c) => {
        while (next < N) {
          const from = next;
          next = Math.min(N, next + 64);
          // This chunk alone: `next` moves on while this connection awaits.
          const to = next;
          // Two transactions creating the merchant's first invoice_stats row at once may deadlock: run again.
          for (;;) {
            try {
              await c.query('BEGIN');
              for (let i = from; i < to; i++) {
                const now = Date.now();
                await c.query(
                  statement(
                    'ceiling_invoice',
                    `INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address, merchant_order_id, idempotency_key, request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token, created_at, expires_at, reserved_until)
                 VALUES ($1, 'm', 'w', 'tron-mainnet', 'USDT', 'c', $2, $3, $3, 'f', 25000000, $4, $5, 'pending', $1, $6, $6, $6)`,
                  ),
                  [`inv_${i}`, ADDRESS, `o-${i}`, i + 1, 25_000_000 + i + 1, now],
                );
                await c.query(statement('ceiling_reservation', `INSERT INTO amount_reservations VALUES ('tron-mainnet', 'c', $1, $2, $3, $4, $4)`), [
                  ADDRESS,
                  25_000_000 + i + 1,
                  `inv_${i}`,
                  now,
                ]);
                await c.query(
                  statement(
                    'ceiling_event',
                    `INSERT INTO events (id, merchant_id, type, invoice_id, data, created_at) VALUES ($1, 'm', 'invoice.created', $2, '{}', $3)`,
                  ),
                  [`evt_${i}`, `inv_${i}`, now],
                );
              }
              await c.query('COMMIT');
              break;
            } catch (err) {
              await c.query('ROLLBACK');
              if ((err as { code?: string }).code !== '40P01') throw err;
            }
          }
        }
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const c of clients) await c.end();
  await db.drop();
  return `${(N / seconds).toFixed(0)} invoices/s (3 inserts each${prepared ? ', named prepared statements' : ''}, 64 per transaction; ${(roundTrips / N).toFixed(2)} round trips an invoice)`;
}

/** The queries (round trips) every `pg` client of this process sent while fn ran: the product's pools and the bare loop alike. */
/** Wall seconds of a run, and the CPU seconds this process (every thread) and the PostgreSQL server's processes used in it. */
interface Busy {
  seconds: number;
  gateway: number;
  server: number;
}

/** Starts a Busy measure; call the answer when the run is done. The server's CPU is read when it runs on this machine. */
function busyWatch(): () => Busy {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const server = serverCpuMs();
  return () => {
    const used = process.cpuUsage(cpu);
    return { seconds: (performance.now() - started) / 1000, gateway: (used.user + used.system) / 1e6, server: (serverCpuMs() - server) / 1000 };
  };
}

/** CPU time used so far by the processes named postgres on this machine (Linux /proc), in ms; 0 when none. */
function serverCpuMs(): number {
  let sum = 0;
  for (const pid of existsSync('/proc') ? readdirSync('/proc') : []) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') sum += cpuMs(Number(pid));
    } catch {
      // Gone meanwhile.
    }
  }
  return sum;
}

/**
 * Cores kept busy (the gateway's threads and the server's processes, each CPU seconds over wall
 * seconds), and the CPU a creation took in each: when two instances take no more a creation than
 * one, they do not contend, and on a machine with cores to spare their rate is twice one's.
 */
const busyText = (b: Busy, creations: number) => {
  const perCreation = (s: number) => ((s / creations) * 1000).toFixed(2);
  const server = b.server > 0;
  return (
    `cores busy: gateway ${(b.gateway / b.seconds).toFixed(2)}, PostgreSQL ${server ? (b.server / b.seconds).toFixed(2) : 'not on this machine'}; ` +
    `CPU a creation: gateway ${perCreation(b.gateway)} ms${server ? `, PostgreSQL ${perCreation(b.server)} ms` : ''}`
  );
};

interface InstanceJob {
  url: string;
  prepared: boolean;
  merchantId: string;
  walletId: string;
  tag: string;
  /** Creations before the measured ones (then the main thread runs ANALYZE), and measured. */
  warm: number;
  count: number;
}

/**
 * Each job an instance of its own: a worker thread (its own event loop and JavaScript heap, as a
 * gateway process has) with its own pool and InvoiceCreator. Each warms up (its JavaScript is
 * compiled in its own isolate), then `warmed` runs (ANALYZE), then all create `count` invoices at
 * once. Busy: from the start signal until the last worker is done.
 */
async function inWorkers(jobs: InstanceJob[], warmed: () => Promise<void>): Promise<{ busy: Busy; roundTrips: number; batches: number; reruns: number }> {
  const workers = jobs.map((job) => new Worker(new URL(import.meta.url), { workerData: job }));
  type Done = { roundTrips: number; batches: number; reruns: number };
  const next = (w: Worker) =>
    new Promise<unknown>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
  try {
    await Promise.all(workers.map(next));
    await warmed();
    const watch = busyWatch();
    const done = workers.map(next);
    for (const w of workers) w.postMessage('go');
    const results = (await Promise.all(done)) as Done[];
    const busy = watch();
    // Closed only now: the server's processes of their connections were counted while alive.
    const closed = workers.map(next);
    for (const w of workers) w.postMessage('close');
    await Promise.all(closed);
    return {
      busy,
      roundTrips: results.reduce((a, r) => a + r.roundTrips, 0),
      batches: results.reduce((a, r) => a + r.batches, 0),
      reruns: results.reduce((a, r) => a + r.reruns, 0),
    };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** A worker of inWorkers: warms up, says so, waits for 'go', creates, answers with its counts, closes when told. */
async function instanceWorker(job: InstanceJob): Promise<void> {
  const config = instanceConfig(job.url, job.prepared);
  const database = openDatabase(config.database);
  const creator = new InvoiceCreator(createDeps({ config, database, log: createLogger('error') }));
  const port = parentPort!;
  const message = () => new Promise((resolve) => port.once('message', resolve));
  const createAll = (tag: string, count: number) => creations(tag, count, () => [creator, job]);
  await createAll(`${job.tag}w`, job.warm);
  const { batches, reruns } = creator.committer.stats;
  const go = message();
  port.postMessage('warm');
  await go;
  const roundTrips = await countRoundTrips(() => createAll(job.tag, job.count));
  const close = message();
  port.postMessage({ roundTrips, batches: creator.committer.stats.batches - batches, reruns: creator.committer.stats.reruns - reruns });
  await close;
  await database.close();
  port.postMessage('closed');
}

async function countRoundTrips(fn: () => Promise<unknown>): Promise<number> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  let queries = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    queries += 1;
    return query.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = query;
  }
  return queries;
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

if (!isMainThread) {
  await instanceWorker(workerData as InstanceJob);
} else {
  await main();
}

async function main(): Promise<void> {
  console.log(`gatewayd PostgreSQL benchmark, Node ${process.version}, ${N} creations, server ${serverUrl(admin)}`);
  console.log(`  one instance  (group commit): ${await creationRate(1)}`);
  console.log(`  one instance, prepared_statements = false:         ${await creationRate(1, 1, false)}`);
  console.log(`  two instances (two pools and group commits):       ${await creationRate(2)}`);
  console.log(`  two instances, each its own merchant and wallet:    ${await creationRate(2, 2)}`);
  console.log(`  one instance in a worker thread:                    ${await creationRate(1, 1, true, true)}`);
  console.log(`  two instances, each its own thread and merchant:    ${await creationRate(2, 2, true, true)}`);
  console.log(`  ceiling: bare pg loop, the same rows, 1 connection: ${await bareCeiling(1)}`);
  console.log(`  ceiling: the same, named prepared statements:       ${await bareCeiling(1, true)}`);
  console.log(`  ceiling: bare pg loop, the same rows, 4 connections: ${await bareCeiling(4)}`);
  console.log(`  pgbench on the same server:                         ${pgbench()}`);
  console.log(`  leader fail-over (SIGKILL of the lease holder):     ${await failover(5)}`);
  console.log(`  paged list at ${BIG.toLocaleString('en-US')} invoices (100 rows a page):`);
  for (const line of await pagedList()) console.log(`    ${line}`);
}

/**
 * A child process takes the scanner's lease (a session advisory lock, as leaderOnly does) and is
 * SIGKILLed; a follower's lease (createLease) polls acquire() every 2 s, as leaderOnly does, from a
 * random phase. Measured: until the server has released the lock (polled every 5 ms on another
 * connection), and until the follower holds it.
 */
async function failover(rounds: number): Promise<string> {
  const db = await scratch();
  const database = openDatabase({ path: '', url: db.url });
  const log = createLogger('error');
  const released: number[] = [];
  const taken: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const child = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import pg from 'pg'; const c = new pg.Client(${JSON.stringify(db.url)}); await c.connect(); await c.query('SELECT pg_advisory_lock(${LOCK_KEYS.SCANNER})'); console.log('held'); setInterval(() => {}, 1000);`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() },
      );
      await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
      const follower = createLease(database.db, LOCK_KEYS.SCANNER, 'bench-follower', log);
      if (await follower.acquire()) throw new Error('the follower took a lease that is held');
      // The follower's next poll comes at a random point of its 2 s period.
      const phase = Math.random() * 2000;
      await new Promise((r) => setTimeout(r, phase));
      const killedAt = performance.now();
      child.kill('SIGKILL');
      const probe = new pg.Client({ connectionString: db.url });
      await probe.connect();
      let takenAt: number | undefined;
      const watchRelease = (async () => {
        for (;;) {
          const { rows } = await probe.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid::bigint = $1 AND granted`,
            [LOCK_KEYS.SCANNER],
          );
          if (rows[0]!.n === 0) return performance.now() - killedAt;
          // The follower polled between two probes and holds it now: released before that.
          if (takenAt !== undefined) return takenAt;
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      let wait = 2000 - phase;
      for (;;) {
        await new Promise((r) => setTimeout(r, wait));
        if (await follower.acquire()) break;
        wait = 2000;
      }
      takenAt = performance.now() - killedAt;
      taken.push(takenAt);
      released.push(await watchRelease);
      await probe.end();
      await follower.release();
    }
  } finally {
    await database.close();
    await db.drop();
  }
  const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
  return `lock released by the server: ${fmt(released)}; follower holds it (2 s polls): ${fmt(taken)} (${rounds} kills)`;
}

/** BIG invoices of one merchant (one created by the creator, the rest copied by SQL), then pages of 100. */
async function pagedList(): Promise<string[]> {
  const db = await scratch();
  const config = buildConfig({ database: { path: '/nonexistent', url: db.url }, log: { level: 'error' }, rate_limits: { invoices_per_merchant: 0 } });
  const database = openDatabase(config.database);
  try {
    await migrateDatabase(database, Date.now());
    await claimNetwork(database, db.url, configuredClaim(config), Date.now());
    const merchant = await insertMerchant(database.db, { email: 'list@example.test', name: 'List', passwordHash: null, emailVerifiedAt: 1 }, Date.now());
    const { wallet } = await registerWallet(database.db, config.network.id, merchant.id, 'Main', ADDRESS, Date.now());
    const creator = new InvoiceCreator(createDeps({ config, database, log: createLogger('error') }));
    await creator.create({
      merchantId: merchant.id,
      idempotencyKey: 'seed',
      body: { merchant_order_id: 'seed', amount: '25', wallet_id: wallet.id, expires_in_minutes: 20 },
    });
    const pool = await database.pool!();
    const { rows: cols } = await pool.query<{ c: string }>(
      `SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'invoices' AND table_schema = current_schema() ORDER BY ordinal_position`,
    );
    // Every 200th stays pending, the rest expired; times one second apart going back from now.
    const now = Date.now();
    const set: Record<string, string> = {
      id: `'inv_b' || g`,
      merchant_order_id: `'b-' || g`,
      idempotency_key: `'b-' || g`,
      checkout_token: `'tok_b' || g`,
      payable_amount: `25000000 + g`,
      adjustment: `g`,
      status: `CASE WHEN g % 200 = 0 THEN 'pending' ELSE 'expired' END`,
      created_at: `${now} - g * 1000`,
    };
    const list = cols.map((r) => r.c);
    const seedStarted = performance.now();
    for (let from = 1; from < BIG; from += 100_000) {
      const to = Math.min(BIG - 1, from + 99_999);
      await pool.query(
        `INSERT INTO invoices (${list.join(', ')}) SELECT ${list.map((c) => set[c] ?? `i.${c}`).join(', ')} FROM invoices i, generate_series(${from}, ${to}) g WHERE i.merchant_order_id = 'seed'`,
      );
    }
    await pool.query('ANALYZE');
    const seeded = (performance.now() - seedStarted) / 1000;
    const middle = (await findInvoiceCursor(database.db, merchant.id, `inv_b${Math.floor(BIG / 2)}`))!;
    const cases: Array<[string, () => Promise<unknown>]> = [
      ['first page', () => listInvoicePage(database.db, merchant.id, {}, { limit: 100 })],
      ['half way (cursor)', () => listInvoicePage(database.db, merchant.id, {}, { limit: 100, startingAfter: middle })],
      ['pending only', () => listInvoicePage(database.db, merchant.id, { statuses: ['pending'] }, { limit: 100 })],
    ];
    const out = [`seeded in ${seeded.toFixed(0)} s (SQL copies of one created invoice)`];
    for (const [name, run] of cases) {
      const ms: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        await run();
        ms.push(performance.now() - t0);
      }
      ms.sort((a, b) => a - b);
      out.push(`${name}: p50 ${ms[100]!.toFixed(2)} ms, p99 ${ms[197]!.toFixed(2)} ms`);
    }
    return out;
  } finally {
    await database.close();
    await db.drop();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
