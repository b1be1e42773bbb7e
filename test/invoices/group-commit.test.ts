import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { GroupCommit } from '../../src/invoices/group-commit.js';
import { compileQuery, type Param } from '../../src/db/compiled.js';

const insertTokenQuery = compileQuery((db, p: Param<{ hash: string }>) => db.insertInto('captcha_tokens').values({ token_hash: p('hash'), used_at: 1 }));

test('group commit: units queued together share one transaction; a failing unit is rolled back alone', async () => {
  const t = await startTestApp();
  try {
    const gc = new GroupCommit(t.deps.db);
    const insert = (id: string, fail = false) =>
      gc.run(async (tx) => {
        await insertTokenQuery.run(tx, { hash: id });
        if (fail) throw new Error(`unit ${id} failed`);
        return id;
      });
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
    // Queued in the same tick: one transaction, one commit.
    assert.deepEqual(gc.stats, { batches: 1, units: 5, largestBatch: 5 });
    // A batch is capped: 5 units with a cap of 2 make 3 commits.
    const small = new GroupCommit(t.deps.db, { maxBatch: 2 });
    await Promise.all(['e', 'f', 'g', 'h', 'i'].map((id) => small.run((tx) => insertTokenQuery.run(tx, { hash: id }))));
    assert.deepEqual(small.stats, { batches: 3, units: 5, largestBatch: 2 });
  } finally {
    await t.close();
  }
});
