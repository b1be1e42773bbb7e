/**
 * PostgreSQL's named prepared statements (database.prepared_statements, src/db/compiled.ts): the hot
 * path's queries are parsed and planned once per connection, and an upgrade's migration run by
 * another instance (a column added) does not break the statements this one prepared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { onConnection, type Conn, type PgConn } from '../../src/db/database.js';
import { compileQuery, preparable, type Param } from '../../src/db/compiled.js';
import { InvoiceCreator } from '../../src/invoices/invoices.service.js';
import { registerWallet } from '../../src/wallets/wallets.repo.js';

const skip = onPostgres ? false : 'needs TEST_DATABASE_URL (prepared statements are PostgreSQL’s)';

/** A select * (not prepared: its shape follows the table) and a select of named columns (prepared). */
const everyColumn = compileQuery((db, p: Param<{ from: number }>) => db.selectFrom('captcha_tokens').selectAll().where('used_at', '>=', p('from')));
const namedColumns = compileQuery((db, p: Param<{ from: number }>) =>
  db.selectFrom('captcha_tokens').select(['token_hash', 'used_at']).where('used_at', '>=', p('from')),
);

async function preparedNames(conn: Conn): Promise<string[]> {
  const { rows } = await (conn as PgConn).query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name', []);
  return rows.map((r) => r.name);
}

async function creating(t: TestApp): Promise<(i: number) => Promise<unknown>> {
  const { merchant } = await signedInMerchant(t);
  const { wallet } = await registerWallet(t.deps.db, t.config.network.id, merchant.id, 'Main', 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', t.clock.now());
  const creator = new InvoiceCreator(t.deps);
  return (i) =>
    creator.create({
      merchantId: merchant.id,
      idempotencyKey: `k${i}`,
      body: { merchant_order_id: `o${i}`, amount: '5', wallet_id: wallet.id, expires_in_minutes: 20 },
    });
}

async function invoiceCount(t: TestApp): Promise<number> {
  const { n } = await t.deps.db
    .selectFrom('invoices')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

test('preparable: a text returning * is never prepared, named columns and count(*) are', () => {
  assert.equal(preparable(everyColumn.sqlFor('postgres')), false);
  assert.equal(preparable(namedColumns.sqlFor('postgres')), true);
  assert.equal(preparable('select count(*) as "n" from "invoices"'), true);
  assert.equal(preparable('insert into "events" ("id") values ($1) returning *'), false);
});

test('a creation prepares its statements once per connection, and runs them again after another instance adds a column', { skip }, async () => {
  const t = await startTestApp({ config: { rate_limits: { invoices_per_merchant: 0 } } });
  try {
    const create = await creating(t);
    // One after another: the group commit takes the pool's one idle client each time.
    for (let i = 0; i < 3; i++) await create(i);
    const names = await onConnection(t.deps.db, async (conn) => {
      await namedColumns.all(conn, { from: 0 });
      await everyColumn.all(conn, { from: 0 });
      return preparedNames(conn);
    });
    // The lookups (one combined read), the claim, the probe, the writes with the webhooks' read, and the read above.
    assert.ok(names.filter((n) => n.startsWith('gw_c')).length >= 2, names.join(' '));
    assert.ok(names.includes(`gw_q${(namedColumns as unknown as { id: number }).id}`), names.join(' '));
    assert.ok(!names.includes(`gw_q${(everyColumn as unknown as { id: number }).id}`), 'a select * must not be prepared');

    // Another instance's upgrade adds columns to the tables these statements read and write.
    await t.deps.db.schema.alterTable('invoices').addColumn('upgrade_probe', 'text').execute();
    await t.deps.db.schema.alterTable('captcha_tokens').addColumn('upgrade_probe', 'text').execute();
    await t.deps.db.schema.alterTable('amount_cursors').addColumn('upgrade_probe', 'text').execute();
    for (let i = 3; i < 6; i++) await create(i);
    await onConnection(t.deps.db, async (conn) => {
      assert.deepEqual(await namedColumns.all(conn, { from: 0 }), []);
      assert.deepEqual(await everyColumn.all(conn, { from: 0 }), []);
    });
    assert.equal(await invoiceCount(t), 6);
  } finally {
    await t.close();
  }
});

test('prepared_statements = false: nothing is prepared (a pooler that cannot keep them)', { skip }, async () => {
  const t = await startTestApp({ config: { database: { prepared_statements: false }, rate_limits: { invoices_per_merchant: 0 } } });
  try {
    const create = await creating(t);
    for (let i = 0; i < 3; i++) await create(i);
    const names = await onConnection(t.deps.db, async (conn) => {
      await namedColumns.all(conn, { from: 0 });
      return preparedNames(conn);
    });
    assert.deepEqual(names, []);
  } finally {
    await t.close();
  }
});

test('a connection whose server forgot its prepared statements is dropped, not handed out again', { skip }, async () => {
  const t = await startTestApp();
  try {
    await onConnection(t.deps.db, async (conn) => {
      assert.deepEqual(await namedColumns.all(conn, { from: 0 }), []);
      // What a pooler in transaction mode does: the next call reaches a server connection that never saw the statement.
      await (conn as PgConn).query('DEALLOCATE ALL', []);
      await assert.rejects(Promise.resolve(namedColumns.all(conn, { from: 0 })), /does not exist/);
    });
    // The pool hands out its last released client first: without the drop this would be the same one and fail alike.
    for (let i = 0; i < 3; i++) assert.deepEqual(await onConnection(t.deps.db, (conn) => namedColumns.all(conn, { from: 0 })), []);
  } finally {
    await t.close();
  }
});

test('a creation whose batch meets forgotten prepared statements runs again on a fresh connection, not answered with an error', { skip }, async () => {
  const t = await startTestApp({ config: { rate_limits: { invoices_per_merchant: 0 } } });
  try {
    const create = await creating(t);
    await create(0);
    // The client the group commit just released is the pool's next: its server forgets every statement
    // (a pooler's other server connection, DISCARD ALL), while pg still believes them prepared.
    await onConnection(t.deps.db, (conn) => (conn as PgConn).query('DEALLOCATE ALL', []));
    // Several at once (one batch) and one alone: each must be created, none answered with 26000.
    const created = await Promise.allSettled([1, 2, 3, 4].map((i) => create(i)));
    assert.deepEqual(
      created.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
      [],
    );
    await onConnection(t.deps.db, (conn) => (conn as PgConn).query('DEALLOCATE ALL', []));
    await create(5);
    assert.equal(await invoiceCount(t), 6);
  } finally {
    await t.close();
  }
});

test(
  'a migration that changes a returned column’s type: every connection that prepared the statement is dropped, not only the first that meets it',
  { skip },
  async () => {
    const t = await startTestApp();
    try {
      // Four connections at once, each preparing the statement (the pool keeps them idle afterwards).
      let go!: () => void;
      const barrier = new Promise<void>((resolve) => (go = resolve));
      let ready = 0;
      const held = [1, 2, 3, 4].map(() =>
        onConnection(t.deps.db, async (conn) => {
          await namedColumns.all(conn, { from: 0 });
          if (++ready === 4) go();
          await barrier;
        }),
      );
      await Promise.all(held);
      // Another instance's upgrade changes the type of a column the statement returns.
      await t.deps.db.schema
        .alterTable('captcha_tokens')
        .alterColumn('used_at', (c) => c.setDataType('numeric'))
        .execute();
      // The first connection handed out meets it ("cached plan must not change result type"): one error.
      await assert.rejects(
        onConnection(t.deps.db, (conn) => namedColumns.all(conn, { from: 0 })),
        (error: { code?: string }) => error.code === '0A000',
      );
      // The other three were opened before it: dropped at checkout, so the next calls run on fresh ones.
      for (let i = 0; i < 4; i++) assert.deepEqual(await onConnection(t.deps.db, (conn) => namedColumns.all(conn, { from: 0 })), []);
    } finally {
      await t.close();
    }
  },
);

test('a named statement whose first call meets feature_not_supported (0A000) is an error like another: its connection is kept', { skip }, async () => {
  const t = await startTestApp();
  try {
    const pid = (conn: Conn) => (conn as PgConn).query<{ pid: number }>('SELECT pg_backend_pid() AS pid', []).then((r) => r.rows[0]!.pid);
    const first = await onConnection(t.deps.db, async (conn) => {
      await assert.rejects(
        (conn as PgConn).query('SELECT $1::numeric::int AS x', ['NaN'], 'gw_test_nan'),
        (error: { code?: string }) => error.code === '0A000',
      );
      return pid(conn);
    });
    // The pool hands out its last released client first: the same connection, not dropped as stale.
    assert.equal(await onConnection(t.deps.db, pid), first);
  } finally {
    await t.close();
  }
});
