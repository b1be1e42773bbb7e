/**
 * Never mixing networks: a database records the network it was first used for and refuses any
 * other, with one line naming both; databases made before networks existed are mainnet ones;
 * `gatewayd serve` never loads the simulated node.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { openDatabase } from '../../src/db/database.js';
import { loadMigrations, migrate } from '../../src/db/migrator.js';
import { claimNetwork, NetworkMismatchError, recordedNetwork } from '../../src/db/network-guard.js';
import { buildConfig, ConfigError } from '../../src/config.js';
import { tempDir } from '../helpers/app.js';
import { freePort, runCli, startGateway, writeConfig } from '../helpers/process.js';

test('a Nile database refuses serve on mainnet, and a mainnet one refuses Nile, with one line naming both', async () => {
  const dir = tempDir('gatewayd-guard-');
  const db = join(dir, 'gateway.db');
  const port = await freePort();
  const nile = writeConfig(dir, {
    tron: { network: 'nile', api_url: `http://127.0.0.1:${await freePort()}` },
    database: { path: db },
    server: { listen: `127.0.0.1:${port}` },
  });
  const migrated = runCli(['migrate', '--config', nile]);
  assert.equal(migrated.status, 0, migrated.stderr);
  assert.match(runCli(['migrate', '--status', '--config', nile]).stdout, /^network: tron-nile$/m);

  const mainnetDir = tempDir('gatewayd-guard-');
  const mainnet = writeConfig(mainnetDir, { database: { path: db }, server: { listen: `127.0.0.1:${port}` } });
  const refused = runCli(['serve', '--config', mainnet]);
  assert.equal(refused.status, 2);
  const lines = refused.stderr.trim().split('\n');
  assert.equal(lines.length, 1, refused.stderr);
  assert.match(
    lines[0]!,
    /^gatewayd: \S+gateway\.db: this database belongs to tron-nile, but tron\.network = "mainnet" runs tron-mainnet; a database never changes network: use another database file$/,
  );
  assert.equal(runCli(['merchant', 'create', '--email', 'a@example.com', '--config', mainnet], { input: 'correct-horse-battery\n' }).status, 2);

  // The Nile instance itself starts, and says it is a test network.
  const gw = await startGateway({ config: { tron: { network: 'nile', api_url: `http://127.0.0.1:${await freePort()}` } }, dir: tempDir('gatewayd-guard-') });
  try {
    const page = await (await fetch(`${gw.baseUrl}/login`)).text();
    assert.match(page, /Test network \(tron-nile\): no real money\./);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});

test('migration 0013 records tron-mainnet for a database that already held accounts; a new one records its first network', async () => {
  const dir = tempDir('gatewayd-guard-');
  const all = loadMigrations();
  const before = all.filter((m) => m.version < 13);
  const oldDb = openDatabase(join(dir, 'old.db'));
  const old = oldDb.sqlite;
  migrate(old, 1, before);
  old
    .prepare(
      `INSERT INTO merchants (id, email, name, password_hash, email_verified_at, created_at, updated_at) VALUES ('mch_1', 'a@b.example', 'A', NULL, 1, 1, 1)`,
    )
    .run();
  migrate(old, 2, all);
  assert.equal(await recordedNetwork(oldDb), 'tron-mainnet');
  await assert.rejects(claimNetwork(oldDb, 'old.db', { network: 'tron-devnet', chosenBy: '`gatewayd dev`' }, 3), NetworkMismatchError);
  await oldDb.close();

  const freshDb = openDatabase(join(dir, 'new.db'));
  const fresh = freshDb.sqlite;
  migrate(fresh, 1, all);
  assert.equal(await recordedNetwork(freshDb), undefined, 'nothing to say yet');
  await claimNetwork(freshDb, 'new.db', { network: 'tron-nile', chosenBy: 'tron.network = "nile"' }, 2);
  await claimNetwork(freshDb, 'new.db', { network: 'tron-nile', chosenBy: 'tron.network = "nile"' }, 3);
  assert.equal(await recordedNetwork(freshDb), 'tron-nile');
  await assert.rejects(
    claimNetwork(freshDb, 'new.db', { network: 'tron-mainnet', chosenBy: 'tron.network = "mainnet"' }, 4),
    /belongs to tron-nile, but tron\.network = "mainnet" runs tron-mainnet/,
  );
  assert.throws(() => fresh.prepare(`UPDATE instance_network SET network = 'tron-shasta'`).run(), /CHECK constraint/);
  await freshDb.close();
});

test('configuration: each network brings its USDT contract and provider; devnet has none outside gatewayd dev', () => {
  assert.equal(buildConfig().tron.api_url, 'https://api.trongrid.io');
  assert.equal(buildConfig().network.usdtContract, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  const nile = buildConfig({ tron: { network: 'nile' } });
  assert.deepEqual(
    [nile.tron.api_url, nile.network.id, nile.network.usdtContract, nile.network.test],
    ['https://nile.trongrid.io', 'tron-nile', 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', true],
  );
  assert.equal(buildConfig({ tron: { network: 'nile', api_url: 'http://127.0.0.1:9' } }).tron.api_url, 'http://127.0.0.1:9');
  assert.throws(
    () => buildConfig({ tron: { network: 'devnet' } }),
    (err: unknown) => err instanceof ConfigError && /tron\.api_url: tron\.network = "devnet" has no public provider/.test(err.message),
  );
  assert.throws(() => buildConfig({ tron: { network: 'shasta' } }), /tron\.network: expected one of "mainnet", "nile", "devnet"/);
  assert.equal(buildConfig({ tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' }, dev: { block_interval_ms: 250 } }).network.blockIntervalMs, 250);
  assert.equal(buildConfig().devMode, false, 'only `gatewayd dev` turns dev mode on');
});

test('gatewayd serve never loads the simulated node (no import path from serve reaches src/devnet)', () => {
  const root = resolve(import.meta.dirname ?? dirname(new URL(import.meta.url).pathname), '../../src');
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    // Static imports only: a dynamic import() is loaded on demand (the dev command's).
    for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gm)) visit(resolve(dirname(file), m[1]!));
  };
  visit(join(root, 'serve.js'));
  visit(join(root, 'main.js'));
  assert.ok(seen.size > 40, `the walk found the modules (${seen.size})`);
  const devnet = [...seen].filter((f) => f.includes(`${join(root, 'devnet')}`));
  assert.deepEqual(devnet, [], 'serve and the command-line entry import nothing of src/devnet statically');
});
