#!/usr/bin/env node
// Server CPU time per 1 000 invoice creations, for one or more built trees side by side (BENCHMARKS.md,
// "Footprint, third pass"): `node bench/creation-cpu.mjs [rounds] <tree with dist/> [<tree> ...]`.
// Each tree's `bin/gatewayd serve` runs on a fresh database seeded by that tree's own bench code
// (dist/bench/lib/seed.js: its migrations are the ones its gatewayd expects), with metrics on (as
// figure 1), takes 2 000 creations to warm up, then 8 000 (CREATIONS) from autocannon with 64
// connections; the figure is the CPU time the server process used for them, which the machine's load
// moves less than the req/s printed beside it (one tree's rounds still spread by about 15 % on a
// shared machine: too much to show a 2 % change; bench/creation-instructions.mjs counts instructions).
// Trees are alternated round by round. Build this tree first (npm run build): the load driver is its own.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startBenchGateway } from '../dist/bench/lib/gateway.js';
import { cpuMs } from '../dist/bench/lib/measure.js';
import { freePort } from '../dist/test/helpers/process.js';
import { startTronGrid } from '../dist/test/helpers/trongrid.js';

const args = process.argv.slice(2);
const rounds = /^\d+$/.test(args[0] ?? '') ? Number(args.shift()) : 3;
const trees = args.map((t) => resolve(t));
if (trees.length === 0) {
  console.error('usage: node bench/creation-cpu.mjs [rounds] <tree> [<tree> ...]');
  process.exit(2);
}
const CREATIONS = Number(process.env.CREATIONS ?? 8000);
const driver = join(import.meta.dirname, '../dist/bench/load-driver.js');

/** `amount` creations through the load driver; the number answered 201. */
function create(gw, seeded, amount, tag) {
  const options = {
    url: `${gw.api}/invoices`,
    method: 'POST',
    headers: { authorization: `Bearer ${seeded.apiKey}`, 'content-type': 'application/json', 'idempotency-key': `${tag}-[<id>]` },
    body: JSON.stringify({ merchant_order_id: `${tag}-[<id>]`, amount: '25', wallet_id: seeded.walletId }),
    connections: 64,
    amount,
    idReplacement: true,
  };
  return JSON.parse(execFileSync(process.execPath, [driver, JSON.stringify(options)], { maxBuffer: 1 << 26 }).toString())['2xx'];
}

const tron = await startTronGrid({ now: () => Date.now() + 57_000 });
const results = new Map(trees.map((t) => [t, []]));
for (let round = 0; round < rounds; round++) {
  for (const tree of trees) {
    const dir = mkdtempSync(join(tmpdir(), 'gatewayd-creation-cpu-'));
    const { seedDatabase } = await import(pathToFileURL(join(tree, 'dist/bench/lib/seed.js')).href);
    const seeded = await seedDatabase(join(dir, 'gateway.db'), { invoices: 0 });
    const metrics = { enabled: true, listen: `127.0.0.1:${await freePort()}` };
    const gw = await startBenchGateway(dir, { tron: { api_url: tron.url, poll_interval_seconds: 5 }, metrics }, join(tree, 'bin/gatewayd'));
    try {
      create(gw, seeded, 2000, 'warm');
      const load = loadavg()[0];
      const cpu0 = cpuMs(gw.pid);
      const started = performance.now();
      const ok = create(gw, seeded, CREATIONS, 'run');
      const seconds = (performance.now() - started) / 1000;
      results.get(tree).push({ cpuPer1000: ((cpuMs(gw.pid) - cpu0) / ok) * 1000, rps: ok / seconds, ok, load });
    } finally {
      await gw.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
for (const [tree, runs] of results) {
  const each = runs.map((r) => `${r.cpuPer1000.toFixed(0)} ms (${r.rps.toFixed(0)} req/s, load ${r.load.toFixed(1)})`).join(', ');
  console.log(`${tree}: CPU per 1 000 creations ${each}`);
}
tron.close?.();
process.exit(0);
