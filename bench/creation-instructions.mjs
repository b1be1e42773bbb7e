#!/usr/bin/env node
// Instructions per invoice creation on SQLite, counted by callgrind, for comparing trees (BENCHMARKS.md,
// "SQLite speed before and after PostgreSQL landed"). Each tree is a checkout with dist/ built (npm ci && npm run build):
//   node bench/creation-instructions.mjs --callgrind [--runs 3] [--from 0] [--creations 1000] [--jobs 1] <tree> [<tree> ...]
// For each tree, `runs` times: `valgrind --tool=callgrind node --single-threaded --predictable <this file> <tree> N`
// and the same with `from` creations (0: start-up and migrations only); prints (with N - with from) / (N - from) per
// run, their mean and spread, and each tree's mean against the first tree's. `--from 1000 --creations 9000` leaves
// the first thousand (code still being compiled) out: the warm cost. The V8 flags make the count repeatable: --single-threaded runs the
// compilers and the garbage collector on the main thread only, --predictable fixes their schedule, so two runs of one
// tree agree within about 0.3 % (without them, 25 %: the background threads' work landed at different moments).
// The figure is load-independent: run it on a busy machine; --jobs 2 runs two valgrinds at once.
//
// Inner mode (what valgrind runs): `node bench/creation-instructions.mjs <tree> <n>`: n creations by POST
// /api/v1/invoices through app.fetch, an API key, rate limits on, 16 at a time. Works on trees before PostgreSQL too.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

if (process.argv[2] === '--callgrind') {
  await compareTrees(process.argv.slice(3));
  process.exit(0);
}
const [root, nText] = process.argv.slice(2);
const N = Number(nText);
const m = (p) => import(join(root, 'dist/src', p));
const { openDatabase } = await m('db/database.js');
const { migrate } = await m('db/migrator.js');
const { buildConfig } = await m('config.js');
const { createDeps } = await m('deps.js');
const { createApp } = await m('app.js');
const { insertMerchant } = await m('accounts/merchants.repo.js');
const { insertKey } = await m('api-keys/api-keys.repo.js');
const { registerWallet } = await m('wallets/wallets.repo.js');
const { createLogger } = await m('lib/log.js');
const dir = mkdtempSync(join(tmpdir(), 'inst-cg-'));
const config = buildConfig({
  database: { path: join(dir, 'g.db') },
  log: { level: 'silent' },
  rate_limits: { api_per_key: 1_000_000, invoices_per_merchant: 1_000_000 },
});
const database = openDatabase(config.database.path);
migrate(database.sqlite, Date.now());
const deps = createDeps({ config, database, log: createLogger('silent') });
const app = createApp(deps);
const now = Date.now();
const merchant = await insertMerchant(database.db, { email: 'cg@example.test', name: 'CG', passwordHash: null, emailVerifiedAt: now }, now);
const { secret } = await insertKey(
  database.db,
  merchant.id,
  { name: 's', scopes: ['invoices:read', 'invoices:write', 'ledger:read'], expiresInDays: null },
  now,
);
const { wallet } = await registerWallet(database.db, config.network.id, merchant.id, 'Main', 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', now);
let ok = 0;
for (let i = 0; i < N; i += 16) {
  const rs = await Promise.all(
    Array.from({ length: Math.min(16, N - i) }, (_, j) =>
      app.fetch(
        new Request('http://127.0.0.1/api/v1/invoices', {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': `k-${i + j}` },
          body: JSON.stringify({ merchant_order_id: `o-${i + j}`, amount: '25', wallet_id: wallet.id, expires_in_minutes: 20 }),
        }),
      ),
    ),
  );
  ok += rs.filter((r) => r.status === 201).length;
}
if (ok !== N) throw new Error(`created ${ok} of ${N}`);
await database.close();
rmSync(dir, { recursive: true, force: true });
console.log(`created ${N}`);

/** Runs the inner mode under callgrind for each tree; prints instructions per creation. */
async function compareTrees(args) {
  const option = (name, fallback, least = 1) => {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    const value = Number(args[i + 1]);
    args.splice(i, 2);
    if (!Number.isInteger(value) || value < least) throw new Error(`${name} takes a whole number of at least ${least}`);
    return value;
  };
  const runs = option('--runs', 3);
  const creations = option('--creations', 1000);
  const from = option('--from', 0, 0);
  const jobs = option('--jobs', 1);
  const trees = args.map((tree) => resolve(tree));
  if (trees.length === 0 || from >= creations) {
    throw new Error(
      'usage: creation-instructions.mjs --callgrind [--runs 3] [--from 0] [--creations 1000] [--jobs 1] <tree> [<tree> ...] (from below creations)',
    );
  }
  const self = fileURLToPath(import.meta.url);
  const scratch = mkdtempSync(join(tmpdir(), 'inst-cg-out-'));
  let made = 0;
  // Instructions of one run: callgrind's total over all threads.
  const count = (tree, n) =>
    new Promise((done, fail) => {
      const out = join(scratch, `callgrind.${++made}`);
      const args = ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath, '--single-threaded', '--predictable', self, tree, String(n)];
      const child = spawn('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('error', fail);
      child.on('close', (code) => {
        const totals = code === 0 ? /^(?:totals|summary): (\d+)/m.exec(readFileSync(out, 'utf8')) : null;
        rmSync(out, { force: true });
        if (totals) done(Number(totals[1]));
        else fail(new Error(`valgrind on ${tree} (${n}) exited ${code}:\n${stderr.slice(-2000)}`));
      });
    });
  const tasks = trees.flatMap((tree) => Array.from({ length: runs }, () => [from, creations].map((n) => ({ tree, n, result: 0 }))).flat());
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++];
      task.result = await count(task.tree, task.n);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, worker));
  rmSync(scratch, { recursive: true, force: true });
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const M = (x) => (x / 1e6).toFixed(4);
  let first;
  console.log(`callgrind, node ${process.version} --single-threaded --predictable: creations ${from + 1} to ${creations}, runs: ${runs} a tree`);
  for (const tree of trees) {
    const mine = tasks.filter((task) => task.tree === tree);
    const before = mine.filter((task) => task.n === from).map((task) => task.result);
    const withN = mine.filter((task) => task.n === creations).map((task) => task.result);
    const perCreation = withN.map((total) => (total - mean(before)) / (creations - from));
    const average = mean(perCreation);
    first ??= average;
    const spread = ((Math.max(...perCreation) - Math.min(...perCreation)) / average) * 100;
    const commit = spawnSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || '?';
    console.log(
      `${tree} (${commit}): with ${from} ${M(mean(before))} M, with ${creations} ${M(mean(withN))} M; per creation ${perCreation.map(M).join(', ')} M: ` +
        `mean ${M(average)} M (spread ${spread.toFixed(2)} %)${average === first ? '' : `, ${(((average - first) / first) * 100).toFixed(2)} % against the first tree`}`,
    );
  }
}
