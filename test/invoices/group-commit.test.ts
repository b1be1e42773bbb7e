import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { GroupCommit } from '../../src/invoices/group-commit.js';
import { compileQuery, type Param } from '../../src/db/compiled.js';

/** The PostgreSQL-only counters: batches run without savepoints, and those run again with them (0 on SQLite). */
const pgOnly = (counts: { wholeBatches: number; redone: number }) => (onPostgres ? counts : { wholeBatches: 0, redone: 0 });

const insertTokenQuery = compileQuery((db, p: Param<{ hash: string }>) => db.insertInto('captcha_tokens').values({ token_hash: p('hash'), used_at: 1 }));

/** A unit that inserts one token, then fails when told to. */
const tokenUnit = (gc: GroupCommit, id: string, fail = false) =>
  gc.run(async (tx) => {
    await insertTokenQuery.run(tx, { hash: id });
    if (fail) throw new Error(`unit ${id} failed`);
    return id;
  });

test('group commit: units queued together share one transaction; a failing unit is rolled back alone', async () => {
  const t = await startTestApp();
  try {
    const gc = new GroupCommit(t.deps.db);
    const insert = (id: string, fail = false) => tokenUnit(gc, id, fail);
    const results = await Promise.allSettled([insert('a'), insert('b'), insert('c', true), insert('d'), insert('b')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected'],
    );
    assert.match(String((results[2] as PromiseRejectedResult).reason), /unit c failed/);
    assert.match(String((results[4] as PromiseRejectedResult).reason), /UNIQUE|duplicate key/);
    const rows = await t.deps.db.selectFrom('captcha_tokens').select('token_hash').orderBy('token_hash').execute();
    assert.deepEqual(
      rows.map((r) => r.token_hash),
      ['a', 'b', 'd'],
    );
    // Queued in the same tick: one transaction, one commit. On PostgreSQL the duplicate ran twice (a
    // unique key taken meanwhile may be another instance's, and then the unit answers as a replay).
    // PostgreSQL ran the batch without savepoints first, met the failures, and ran it again with them.
    assert.deepEqual(gc.stats, { batches: 1, units: 5, largestBatch: 5, reruns: onPostgres ? 1 : 0, ...pgOnly({ wholeBatches: 1, redone: 1 }) });
    // A batch is capped: 5 units with a cap of 2 make 3 commits.
    const small = new GroupCommit(t.deps.db, { maxBatch: 2 });
    await Promise.all(['e', 'f', 'g', 'h', 'i'].map((id) => small.run((tx) => insertTokenQuery.run(tx, { hash: id }))));
    assert.deepEqual(small.stats, { batches: 3, units: 5, largestBatch: 2, reruns: 0, ...pgOnly({ wholeBatches: 3, redone: 0 }) });
  } finally {
    await t.close();
  }
});

test('group commit: failures first, twice in a row and last in a batch, by a thrown error or by the database, are each rolled back alone', async () => {
  // On PostgreSQL one query string ends a unit and starts the next ("RELEASE SAVEPOINT unit;
  // SAVEPOINT unit", or "ROLLBACK TO SAVEPOINT unit" after a failure, kept for the next unit), and a
  // last failed unit is rolled back in the COMMIT's string: a COMMIT sent on a transaction a failed
  // statement aborted would roll the whole batch back instead.
  const t = await startTestApp();
  try {
    const gc = new GroupCommit(t.deps.db);
    const unit = (ids: string[], fail?: 'throw') =>
      gc.run(async (tx) => {
        for (const id of ids) await insertTokenQuery.run(tx, { hash: id });
        if (fail) throw new Error(`unit ${ids.join(',')} failed`);
        return ids;
      });
    const results = await Promise.allSettled([
      unit(['a0'], 'throw'), // first unit: a write, then an error
      unit(['a1']),
      unit(['a2', 'a1']), // a unique key the batch took: the database's error (the transaction is aborted until rolled back)
      unit(['a3'], 'throw'), // a second failure in a row
      unit(['a4']),
      unit(['a5', 'a4']), // last unit: the database's error
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'fulfilled', 'rejected', 'rejected', 'fulfilled', 'rejected'],
    );
    assert.match(String((results[5] as PromiseRejectedResult).reason), /UNIQUE|duplicate key/);
    assert.deepEqual(gc.stats, { batches: 1, units: 6, largestBatch: 6, reruns: onPostgres ? 2 : 0, ...pgOnly({ wholeBatches: 1, redone: 1 }) });
    // The last unit failing after a thrown error, in a batch of its own.
    await assert.rejects(unit(['b0', 'b1'], 'throw'), /unit b0,b1 failed/);
    const rows = await t.deps.db.selectFrom('captcha_tokens').select('token_hash').orderBy('token_hash').execute();
    assert.deepEqual(
      rows.map((r) => r.token_hash),
      ['a1', 'a4'],
    );
  } finally {
    await t.close();
  }
});

test(
  'group commit on PostgreSQL: batches run without savepoints; after a failing unit the next 8 take one per unit, then none again',
  { skip: onPostgres ? false : 'PostgreSQL only (SQLite savepoints are function calls)' },
  async () => {
    const t = await startTestApp();
    try {
      const gc = new GroupCommit(t.deps.db);
      const statements: string[] = [];
      const watched = async (ids: string[], failing?: string) => {
        const pg = await import('pg');
        const proto = pg.default.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
        const query = proto.query;
        proto.query = function (this: unknown, ...args: unknown[]) {
          const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
          if (/SAVEPOINT|BEGIN|COMMIT|ROLLBACK/.test(text)) statements.push(text);
          return query.apply(this, args);
        };
        try {
          return await Promise.allSettled(ids.map((id) => tokenUnit(gc, id, id === failing)));
        } finally {
          proto.query = query;
        }
      };
      await watched(['a', 'b', 'c']);
      assert.deepEqual(statements.splice(0), ['BEGIN', 'COMMIT']);
      const settled = await watched(['d', 'e', 'f'], 'e');
      assert.deepEqual(
        settled.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      // Rolled back whole at the failure, then again with a savepoint per unit.
      assert.deepEqual(statements.splice(0), [
        'BEGIN',
        'ROLLBACK',
        'BEGIN; SAVEPOINT unit',
        'RELEASE SAVEPOINT unit; SAVEPOINT unit',
        'ROLLBACK TO SAVEPOINT unit',
        'COMMIT',
      ]);
      for (let i = 0; i < 8; i++) {
        await watched([`g${i}`]);
        assert.deepEqual(statements.splice(0), ['BEGIN; SAVEPOINT unit', 'COMMIT'], `careful batch ${i + 1}`);
      }
      await watched(['h']);
      assert.deepEqual(statements.splice(0), ['BEGIN', 'COMMIT']);
      const rows = await t.deps.db.selectFrom('captcha_tokens').select('token_hash').orderBy('token_hash').execute();
      assert.deepEqual(
        rows.map((r) => r.token_hash),
        ['a', 'b', 'c', 'd', 'f', 'g0', 'g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'h'],
      );
      assert.deepEqual({ whole: gc.stats.wholeBatches, redone: gc.stats.redone }, { whole: 3, redone: 1 });
    } finally {
      await t.close();
    }
  },
);

test(
  'group commit on PostgreSQL: a batch the server rolled back at COMMIT (a unit swallowed a failed statement) answers no unit as done',
  { skip: onPostgres ? false : 'PostgreSQL only (COMMIT of an aborted transaction)' },
  async () => {
    const t = await startTestApp();
    try {
      const gc = new GroupCommit(t.deps.db);
      const settled = await Promise.allSettled([
        gc.run(async (tx) => {
          await insertTokenQuery.run(tx, { hash: 'kept?' });
          return 'first';
        }),
        // The last unit: its statement fails and it carries on, so nothing runs after it before COMMIT.
        gc.run(async (tx) => {
          await Promise.resolve(insertTokenQuery.run(tx, { hash: 'kept?' })).catch(() => undefined);
          return 'second';
        }),
      ]);
      assert.deepEqual(
        settled.map((r) => r.status),
        ['rejected', 'rejected'],
      );
      assert.match(String((settled[0] as PromiseRejectedResult).reason), /rolled the batch back at COMMIT/);
      assert.deepEqual(await t.deps.db.selectFrom('captcha_tokens').select('token_hash').execute(), []);
    } finally {
      await t.close();
    }
  },
);

test(
  'group commit on PostgreSQL: a unit that lost a deadlock runs again in the next batch, 5 times at most',
  { skip: onPostgres ? false : 'PostgreSQL only (deadlocks between transactions)' },
  async () => {
    const t = await startTestApp();
    try {
      const gc = new GroupCommit(t.deps.db);
      // What PostgreSQL throws at the transaction it picks to end a deadlock.
      const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01', severity: 'ERROR' });
      const runs = { once: 0, always: 0 };
      const settled = await Promise.allSettled([
        // Loses in the batch's run without savepoints and in its run unit by unit, then wins.
        gc.run(async (tx) => {
          runs.once += 1;
          await insertTokenQuery.run(tx, { hash: `once-${runs.once}` });
          if (runs.once <= 2) throw deadlock();
          return 'once';
        }),
        gc.run(async (tx) => {
          runs.always += 1;
          await insertTokenQuery.run(tx, { hash: `always-${runs.always}` });
          throw deadlock();
        }),
      ]);
      assert.equal(settled[0]!.status, 'fulfilled');
      assert.equal((settled[0] as PromiseFulfilledResult<string>).value, 'once');
      assert.equal(settled[1]!.status, 'rejected');
      assert.equal((settled[1] as PromiseRejectedResult).reason.code, '40P01');
      // The first batch without savepoints, then with them; the loser of all: 5 more batches.
      assert.deepEqual(runs, { once: 3, always: 7 });
      const rows = await t.deps.db.selectFrom('captcha_tokens').select('token_hash').execute();
      assert.deepEqual(
        rows.map((r) => r.token_hash),
        ['once-3'],
      );
    } finally {
      await t.close();
    }
  },
);
