import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { openDatabase, openSqlite, STATEMENT_CACHE_SIZE, writeTransaction } from '../../src/db/database.js';
import { tempDir } from '../helpers/app.js';

test('a handle prepares each SQL text once and reuses it; the cache is a bounded LRU by SQL text', () => {
  const sqlite = openSqlite(join(tempDir(), 'cache.db'));
  const a = sqlite.prepare('SELECT 1 AS v');
  assert.equal(sqlite.prepare('SELECT 1 AS v'), a);
  const b = sqlite.prepare('SELECT 2 AS v');
  assert.notEqual(b, a);
  // Fill the cache to its bound, using `a` now and then: `b` becomes the least recently used.
  for (let i = 0; sqlite.cachedStatements < STATEMENT_CACHE_SIZE; i++) {
    sqlite.prepare(`SELECT ${i} AS n`);
    if (i % 100 === 0) assert.equal(sqlite.prepare('SELECT 1 AS v'), a);
  }
  assert.equal(sqlite.prepare('SELECT 2 AS v'), b, 'still cached at the bound');
  sqlite.prepare('SELECT 1 AS v');
  for (let i = 0; i < 10; i++) sqlite.prepare(`SELECT 'new' AS n${i}`);
  assert.equal(sqlite.cachedStatements, STATEMENT_CACHE_SIZE, 'never above the bound');
  assert.equal(sqlite.prepare('SELECT 1 AS v'), a, 'recently used: kept');
  const again = sqlite.prepare('SELECT 0 AS n');
  assert.equal((again.get() as { n: number }).n, 0, 'an evicted text is prepared anew and works');
  // The pragmas openSqlite sets.
  assert.equal(sqlite.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(sqlite.pragma('synchronous', { simple: true }), 2, 'FULL');
  assert.equal(sqlite.pragma('foreign_keys', { simple: true }), 1);
  assert.equal(sqlite.pragma('busy_timeout', { simple: true }), 5000);
  assert.equal(sqlite.pragma('temp_store', { simple: true }), 2, 'MEMORY');
  assert.equal(sqlite.pragma('cache_size', { simple: true }), -8192);
  sqlite.close();
  assert.equal(sqlite.open, false);
});

/** Files this process holds open that were deleted (SQLite's temp files are unlinked at once). */
function openDeletedFiles(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.endsWith('(deleted)') ? [target] : [];
    } catch {
      return [];
    }
  });
}

test('savepoints inside a long transaction keep their statement journal in memory (no temp file)', { skip: process.platform !== 'linux' }, () => {
  const sqlite = openSqlite(join(tempDir(), 'subjournal.db'));
  sqlite.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE, v TEXT NOT NULL)');
  const insert = sqlite.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
  sqlite.transaction(() => {
    for (let i = 0; i < 4000; i++) insert.run(`${i}-${'k'.repeat(40)}`, 'v'.repeat(300));
  })();
  const before = openDeletedFiles();
  // As a group-commit batch does: one transaction, one savepoint per unit, each unit changing pages
  // that existed when its savepoint opened (as inserts into random-key indexes do). SQLite copies
  // each such page into the statement journal: ~350 pages here, far past the 64 KiB at which it
  // would spill the journal to a temp file by default.
  const update = sqlite.prepare('UPDATE t SET v = ? WHERE id = ?');
  sqlite.prepare('BEGIN IMMEDIATE').run();
  for (let unit = 0; unit < 5; unit++) {
    sqlite.prepare('SAVEPOINT unit').run();
    for (let id = 1 + unit; id <= 4000; id += 11) update.run(`${unit}${'w'.repeat(299)}`, id);
    sqlite.prepare('RELEASE unit').run();
  }
  const during = openDeletedFiles();
  sqlite.prepare('COMMIT').run();
  assert.equal((sqlite.prepare('SELECT count(*) AS n FROM t WHERE v LIKE ?').get('4w%') as { n: number }).n, 364);
  assert.deepEqual(during, before, 'no temp file was opened for the statement journal');
  sqlite.close();
});

test('statements and handles that become garbage are collected, and collection at any moment never aborts the process', async () => {
  // WiseLibs/better-sqlite3#1515: with better-sqlite3 12 on Node 24.19+, a Statement or Database
  // freed by a collection outside JavaScript (a microtask checkpoint, an idle or background GC, the
  // teardown at exit) aborted the process (SIGABRT, "Assertion failed: (env) != nullptr"). A child
  // process drops thousands of statements (far past the cache's bound) and handles, some never
  // closed, through every kind of collection, and must exit 0 by itself.
  const database = pathToFileURL(join(process.cwd(), 'dist/src/db/database.js')).href;
  const script = `
    import { openSqlite } from ${JSON.stringify(database)};
    const dir = ${JSON.stringify(tempDir())};
    const refs = [];
    for (let h = 0; h < 20; h++) {
      const sqlite = openSqlite(dir + '/gc-' + h + '.db');
      refs.push(new WeakRef(sqlite));
      for (let i = 0; i < 1500; i++) {
        const stmt = sqlite.prepare('SELECT ' + i + ' AS v, ' + h + ' AS h');
        if (i % 100 === 0) refs.push(new WeakRef(stmt));
        stmt.get();
      }
      if (h % 2 === 0) sqlite.close();
    }
    globalThis.gc();
    await globalThis.gc({ type: 'major', execution: 'async' });
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 3; i++) await Promise.resolve().then(() => globalThis.gc({ type: 'minor' }));
    const collected = refs.filter((r) => r.deref() === undefined).length;
    // Left open on purpose: the last handles are freed by the teardown at exit.
    openSqlite(dir + '/open.db').prepare('SELECT 1').get();
    process.stdout.write(JSON.stringify({ refs: refs.length, collected }));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.doesNotMatch(r.stderr, /Assertion failed|RemoveEnvironmentCleanupHook/);
  assert.equal(r.signal, null, r.stderr);
  assert.equal(r.status, 0, r.stderr);
  const { refs, collected } = JSON.parse(r.stdout) as { refs: number; collected: number };
  assert.ok(collected > refs / 2, `${collected} of ${refs} dropped statements and handles were collected`);
});

test('through Kysely, cached statements bind fresh values and see schema changes; a failed statement is not cached', async () => {
  const database = openDatabase(join(tempDir(), 'kysely.db'));
  const db = database.db;
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`.execute(db);
  const insert = (id: number, name: string) => sql`INSERT INTO t (id, name) VALUES (${id}, ${name})`.execute(db);
  const read = async (id: number) => (await sql<{ name: string }>`SELECT * FROM t WHERE id = ${id}`.execute(db)).rows[0];
  await insert(1, 'one');
  await insert(2, 'two');
  assert.deepEqual(await read(1), { id: 1, name: 'one' });
  assert.deepEqual(await read(2), { id: 2, name: 'two' });
  assert.equal(await read(3), undefined);
  // SELECT * through a cached statement picks up a column added since it was prepared.
  await sql`ALTER TABLE t ADD COLUMN note TEXT`.execute(db);
  assert.deepEqual(await read(1), { id: 1, name: 'one', note: null });
  // A constraint failure inside a transaction rolls back and leaves the statement usable.
  await assert.rejects(
    writeTransaction(db, async (trx) => {
      await sql`INSERT INTO t (id, name) VALUES (${3}, ${'three'})`.execute(trx);
      await sql`INSERT INTO t (id, name) VALUES (${1}, ${'dup'})`.execute(trx);
    }),
    /UNIQUE/,
  );
  assert.equal(await read(3), undefined);
  await insert(3, 'three');
  assert.deepEqual(await read(3), { id: 3, name: 'three', note: null });
  await assert.rejects(sql`SELECT nope FROM t`.execute(db), /no such column/);
  await database.close();
});
