import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { compileQuery, type Param } from '../../src/db/compiled.js';
import { onConnection, openDatabase, writeTransaction } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { tempDir } from '../helpers/app.js';

test('a compiled query binds named parameters in SQL order, keeps constants, and runs synchronously', async () => {
  const database = openDatabase(join(tempDir(), 'compiled.db'));
  migrate(database.sqlite, Date.now());
  const sqlite = database.sqlite;
  const insert = compileQuery((db, p: Param<{ hash: string; at: number }>) =>
    db.insertInto('captcha_tokens').values({ used_at: p('at'), token_hash: p('hash') }),
  );
  const find = compileQuery((db, p: Param<{ from: number; to: number }>) =>
    db
      .selectFrom('captcha_tokens')
      .select(['token_hash', 'used_at'])
      .where('used_at', '>=', p('from'))
      .where('used_at', '<=', p('to'))
      .where('token_hash', '!=', 'skip')
      .orderBy('used_at')
      .limit(2),
  );
  assert.equal(insert.run(sqlite, { hash: 'a', at: 10 }), 1);
  insert.run(sqlite, { hash: 'skip', at: 11 });
  insert.run(sqlite, { hash: 'b', at: 12 });
  insert.run(sqlite, { hash: 'c', at: 13 });
  // The constant 'skip' and the limit 2 stay in their places between the named values.
  assert.deepEqual(find.all(sqlite, { from: 10, to: 13 }), [
    { token_hash: 'a', used_at: 10 },
    { token_hash: 'b', used_at: 12 },
  ]);
  assert.deepEqual(find.first(sqlite, { from: 12, to: 20 }), { token_hash: 'b', used_at: 12 });
  assert.equal(find.first(sqlite, { from: 20, to: 30 }), undefined);
  assert.match(find.sql, /"used_at" >= \? and "used_at" <= \? and "token_hash" != \?/);
  // The same SQL text every time: one cached statement.
  const cached = sqlite.cachedStatements;
  find.all(sqlite, { from: 0, to: 1 });
  assert.equal(sqlite.cachedStatements, cached);
  // A missing value is an error, not a silent NULL.
  assert.throws(() => find.all(sqlite, { from: 1 } as { from: number; to: number }), /no value for parameter to/);
  // What Kysely read back through its own executor agrees.
  const rows = await database.db.selectFrom('captcha_tokens').select('token_hash').orderBy('token_hash').execute();
  assert.deepEqual(
    rows.map((r) => r.token_hash),
    ['a', 'b', 'c', 'skip'],
  );
  await database.close();
});

test('a parameter that Kysely would write into the SQL text is refused at compile time', () => {
  const database = openDatabase(join(tempDir(), 'inlined.db'));
  migrate(database.sqlite, Date.now());
  const bad = compileQuery((db, p: Param<{ column: string }>) =>
    db
      .selectFrom('captcha_tokens')
      .select('token_hash')
      .orderBy(db.dynamic.ref(p('column'))),
  );
  assert.throws(() => bad.all(database.sqlite, { column: 'used_at' }), /inlined into the SQL text/);
  database.sqlite.close();
});

test('onConnection waits for an open Kysely transaction instead of landing inside it', async () => {
  const database = openDatabase(join(tempDir(), 'onconnection.db'));
  migrate(database.sqlite, Date.now());
  const insert = compileQuery((db, p: Param<{ hash: string }>) => db.insertInto('captcha_tokens').values({ token_hash: p('hash'), used_at: 1 }));
  let queued: Promise<number> | undefined;
  let direct = 0;
  await assert.rejects(
    writeTransaction(database.db, async (trx) => {
      await trx.insertInto('captcha_tokens').values({ token_hash: 'in-tx', used_at: 1 }).execute();
      // Another request runs while this transaction is between two statements.
      queued = onConnection(database.db, () => insert.run(database.sqlite, { hash: 'waited' }));
      direct = database.sqlite.inTransaction ? 1 : 0;
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('roll back');
    }),
    /roll back/,
  );
  assert.equal(direct, 1, 'the transaction was open when the other work was queued');
  assert.equal(await queued, 1);
  const rows = await database.db.selectFrom('captcha_tokens').select('token_hash').execute();
  assert.deepEqual(
    rows.map((r) => r.token_hash),
    ['waited'],
    'the queued insert ran after the rollback, not inside it',
  );
  await database.close();
});
