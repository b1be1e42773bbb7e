import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'kysely';
import { cachingStatements, openDatabase, openSqlite, writeTransaction } from '../../src/db/database.js';
import { tempDir } from '../helpers/app.js';

test('a statement is prepared once per SQL text and reused; the least recently used one goes past the cap', () => {
  const sqlite = openSqlite(join(tempDir(), 'cache.db'));
  const handle = cachingStatements(sqlite, 2);
  const a = handle.prepare('SELECT 1 AS v');
  assert.equal(handle.prepare('SELECT 1 AS v'), a);
  const b = handle.prepare('SELECT 2 AS v');
  assert.notEqual(b, a);
  // Using a again makes b the least recently used.
  assert.equal(handle.prepare('SELECT 1 AS v'), a);
  handle.prepare('SELECT 3 AS v');
  assert.equal(handle.cached, 2);
  assert.equal(handle.prepare('SELECT 1 AS v'), a, 'the recently used statement stayed');
  assert.notEqual(handle.prepare('SELECT 2 AS v'), b, 'the least recently used one was dropped and is prepared anew');
  handle.close();
  assert.equal(sqlite.open, false);
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
