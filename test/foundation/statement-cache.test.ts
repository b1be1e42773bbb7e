import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { openDatabase, openSqlite, writeTransaction } from '../../src/db/database.js';
import { tempDir } from '../helpers/app.js';

test('a handle prepares each SQL text once and keeps it; pragma() goes through the kept statements', () => {
  const sqlite = openSqlite(join(tempDir(), 'cache.db'));
  const a = sqlite.prepare('SELECT 1 AS v');
  assert.equal(sqlite.prepare('SELECT 1 AS v'), a);
  const b = sqlite.prepare('SELECT 2 AS v');
  assert.notEqual(b, a);
  for (let i = 0; i < 50; i++) sqlite.prepare(`SELECT ${i} AS n`);
  assert.equal(sqlite.keptStatements, 52, 'nothing is dropped');
  assert.equal(sqlite.prepare('SELECT 2 AS v'), b);
  // The pragmas openSqlite sets, read back through kept statements, plucked or not.
  assert.equal(sqlite.pragma('journal_mode', { simple: true }), 'wal');
  assert.deepEqual(sqlite.pragma('journal_mode'), [{ journal_mode: 'wal' }]);
  assert.equal(sqlite.pragma('journal_mode', { simple: true }), 'wal', 'pluck is set on every call');
  assert.equal(sqlite.pragma('synchronous', { simple: true }), 2, 'FULL');
  assert.equal(sqlite.pragma('foreign_keys', { simple: true }), 1);
  assert.equal(sqlite.pragma('busy_timeout', { simple: true }), 5000);
  assert.equal(sqlite.pragma('temp_store', { simple: true }), 2, 'MEMORY');
  assert.equal(sqlite.pragma('cache_size', { simple: true }), -8192);
  // A pragma that returns nothing runs and answers like better-sqlite3's own.
  assert.deepEqual(sqlite.pragma('user_version = 7'), []);
  assert.equal(sqlite.pragma('user_version = 8', { simple: true }), undefined);
  assert.equal(sqlite.pragma('user_version', { simple: true }), 8);
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

test('no Database or Statement ever becomes garbage (Node 24 aborts when better-sqlite3 12 frees one from an idle GC)', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const refs: Array<WeakRef<object>> = [];
  (() => {
    const sqlite = openSqlite(join(tempDir(), 'kept.db'));
    refs.push(new WeakRef(sqlite));
    for (let i = 0; i < 20; i++) refs.push(new WeakRef(sqlite.prepare(`SELECT ${i} AS v`)));
    sqlite.pragma('integrity_check', { simple: true });
    sqlite.close();
  })();
  // Control: an unkept object is collected by the same collections.
  let control: object | undefined = { big: new Array(1000).fill(0) };
  const controlRef = new WeakRef(control);
  control = undefined;
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
  assert.equal(controlRef.deref(), undefined, 'the collections ran');
  assert.equal(refs.filter((r) => r.deref() === undefined).length, 0, 'every handle and statement is still reachable');
});

test('through Kysely, reused statements bind fresh values and see schema changes; a failed statement is not kept', async () => {
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
  await assert.rejects(writeTransaction(db, async (trx) => {
    await sql`INSERT INTO t (id, name) VALUES (${3}, ${'three'})`.execute(trx);
    await sql`INSERT INTO t (id, name) VALUES (${1}, ${'dup'})`.execute(trx);
  }), /UNIQUE/);
  assert.equal(await read(3), undefined);
  await insert(3, 'three');
  assert.deepEqual(await read(3), { id: 3, name: 'three', note: null });
  await assert.rejects(sql`SELECT nope FROM t`.execute(db), /no such column/);
  await database.close();
});
