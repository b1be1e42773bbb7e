import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildConfig } from '../../src/config.js';
import { openSqlite, type Sqlite } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { runBackup } from '../../src/cli/backup.js';
import { tempDir } from '../helpers/app.js';
import { runCli, startGateway } from '../helpers/process.js';

let seq = 0;
/** A merchant and its session in one transaction: a consistent copy always has them in pairs. */
function insertPair(sqlite: Sqlite, padding = ''): void {
  seq += 1;
  const id = `mch_backup${seq}`;
  sqlite
    .transaction(() => {
      sqlite
        .prepare(`INSERT INTO merchants (id, email, name, created_at, updated_at) VALUES (?, ?, ?, 1, 1)`)
        .run(id, `m${seq}@example.test`, `Merchant ${seq}${padding}`);
      sqlite.prepare(`INSERT INTO sessions (token_hash, merchant_id, created_at, last_used_at, expires_at) VALUES (?, ?, 1, 1, 2)`).run(`hash${seq}`, id);
    })
    .immediate();
}

function count(path: string, table: string): number {
  const db = openSqlite(path, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

test('backup of a serving instance: a standalone 0600 copy; refuses to replace a file without --force', async (t) => {
  const gw = await startGateway();
  t.after(() => gw.kill());
  const live = openSqlite(join(gw.dir, 'gateway.db'));
  for (let i = 0; i < 5; i++) insertPair(live);
  const file = join(tempDir('gatewayd-backup-'), 'gateway-backup.db');

  const r = runCli(['backup', file, '--config', gw.configPath]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /integrity ok/);
  assert.match(r.stdout, /restore: stop gatewayd/);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.ok(!existsSync(`${file}-wal`), 'the copy stands alone');
  assert.equal(count(file, 'merchants'), 5);
  assert.ok(count(file, 'schema_migrations') >= 1);
  // Not a terminal: no progress line mixed into the output.
  assert.doesNotMatch(r.stderr, /%/);

  insertPair(live);
  const before = readFileSync(file);
  const again = runCli(['backup', file, '--config', gw.configPath]);
  assert.equal(again.status, 2);
  assert.match(again.stderr, /already exists; pass --force/);
  assert.deepEqual(readFileSync(file), before, 'the existing file is untouched');
  const forced = runCli(['backup', file, '--force', '--config', gw.configPath]);
  assert.equal(forced.status, 0, forced.stderr);
  assert.equal(count(file, 'merchants'), 6);
  live.close();

  // The instance kept serving throughout.
  assert.equal((await fetch(`${gw.baseUrl}/api/v1/health`)).status, 200);
  assert.equal(await gw.stop(), 0);
});

test('backup under concurrent writes is consistent, and shows progress on a terminal', async () => {
  const dir = tempDir('gatewayd-backup-');
  const path = join(dir, 'gateway.db');
  const sqlite = openSqlite(path);
  migrate(sqlite, Date.now());
  // Enough pages that the copy takes many steps.
  for (let i = 0; i < 400; i++) insertPair(sqlite, 'x'.repeat(2000));
  const writer = openSqlite(path);
  const timer = setInterval(() => insertPair(writer), 1);
  const progress: string[] = [];
  const tty = { isTTY: true, write: (s: string) => progress.push(s) } as unknown as NodeJS.WriteStream;
  const out: string[] = [];
  const file = join(dir, 'copy.db');
  try {
    const code = await runBackup(buildConfig({ database: { path } }), { file, force: false, progress: tty }, (l) => out.push(l));
    assert.equal(code, 0);
  } finally {
    clearInterval(timer);
  }
  const merchants = count(file, 'merchants');
  assert.ok(merchants >= 400, `${merchants}`);
  assert.equal(count(file, 'sessions'), merchants, 'no transaction is half in the copy');
  assert.match(progress.join(''), /\rbackup: 100% \(\d+\/\d+ pages\)/);
  assert.ok(progress.length > 2, 'progress is drawn step by step');
  writer.close();
  sqlite.close();
});

test('backup refusals: the live file, a missing folder, no database, no FILE', () => {
  const dir = tempDir('gatewayd-backup-');
  const db = join(dir, 'gateway.db');
  const config = join(dir, 'gatewayd.toml');
  writeFileSync(config, `[server]\nsecret = "s"\n[database]\npath = "${db}"\n`);
  const none = runCli(['backup', join(dir, 'x.db'), '--config', config]);
  assert.equal(none.status, 1);
  assert.match(none.stderr, /no database to back up/);
  assert.equal(runCli(['migrate', '--config', config]).status, 0);
  const self = runCli(['backup', db, '--config', config, '--force']);
  assert.equal(self.status, 2);
  assert.match(self.stderr, /live database/);
  const folder = runCli(['backup', join(dir, 'nope', 'x.db'), '--config', config]);
  assert.equal(folder.status, 2);
  assert.match(folder.stderr, /no such folder/);
  const usage = runCli(['backup', '--config', config]);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /exactly one FILE/);
});
