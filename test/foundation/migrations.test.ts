import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDatabaseFile, openSqlite } from '../../src/db/database.js';
import { loadMigrations, migrate, migrationStatus, MigrationError } from '../../src/db/migrator.js';
import { tempDir } from '../helpers/app.js';

function freshDb() {
  const path = join(tempDir(), 'data', 'gateway.db');
  ensureDatabaseFile(path);
  return { path, sqlite: openSqlite(path) };
}

test('a fresh database gets every migration, recorded with a checksum; pragmas are set', () => {
  const { path, sqlite } = freshDb();
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(join(path, '..')).mode & 0o777, 0o700);
  const all = loadMigrations();
  assert.ok(all.length >= 1);
  const before = migrationStatus(sqlite);
  assert.equal(before.applied.length, 0);
  assert.equal(before.pending.length, all.length);
  const applied = migrate(sqlite, 1000);
  assert.equal(applied.length, all.length);
  const after = migrationStatus(sqlite);
  assert.equal(after.pending.length, 0);
  assert.deepEqual(
    after.applied.map((m) => m.version),
    all.map((m) => m.version),
  );
  const rows = sqlite.prepare('SELECT checksum FROM schema_migrations ORDER BY version').all() as Array<{ checksum: string }>;
  assert.deepEqual(
    rows.map((r) => r.checksum),
    all.map((m) => m.checksum),
  );
  assert.equal(sqlite.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(sqlite.pragma('synchronous', { simple: true }), 2);
  assert.equal(sqlite.pragma('foreign_keys', { simple: true }), 1);
  assert.equal(migrate(sqlite, 2000).length, 0, 'a second run applies nothing');
  sqlite.close();
});

test('an edited applied migration is refused, naming the file', () => {
  const { sqlite } = freshDb();
  migrate(sqlite, 1000);
  const edited = loadMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'f'.repeat(64), sql: `${m.sql}\n-- edit` } : m));
  assert.throws(
    () => migrationStatus(sqlite, edited),
    (err: unknown) => err instanceof MigrationError && /0001_\w+\.sql was edited/.test(err.message),
  );
  sqlite.close();
});

test('a failing migration is rolled back whole and not recorded', () => {
  const { sqlite } = freshDb();
  const base = loadMigrations();
  const bad = { version: 9999, name: 'broken', sql: 'CREATE TABLE t_ok (x INTEGER); CREATE TABLE t_ok (x INTEGER);', checksum: 'x' };
  assert.throws(() => migrate(sqlite, 1000, [...base, bad]), /9999_broken failed/);
  const s = migrationStatus(sqlite, [...base, bad]);
  assert.deepEqual(
    s.pending.map((m) => m.version),
    [9999],
  );
  const t = sqlite.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 't_ok'`).get() as { n: number };
  assert.equal(t.n, 0);
  sqlite.close();
});
