/**
 * Which database an instance uses, as `GET /api/v1/health` says it (`database_id`, with `network`):
 * a random id written once with the network claim, so two databases prepared at the same moment for
 * the same network differ, and a restart on the same database keeps it. `/health` answers the same,
 * for monitors set up with the short path. Migration 0033 gives a database claimed before it an id.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ensureDatabaseFile, openDatabase, openSqlite } from '../../src/db/database.js';
import { loadMigrations, migrate, migrateDatabase } from '../../src/db/migrator.js';
import { databaseId } from '../../src/db/network-guard.js';
import { readAssetText } from '../../src/lib/assets.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { onPostgres, scratchDatabase } from '../helpers/database.js';

const ID = /^[0-9a-f]{16}$/;

async function health(baseUrl: string, path: string) {
  const res = await fetch(`${baseUrl}${path}`);
  return { status: res.status, cacheControl: res.headers.get('cache-control'), body: (await res.json()) as Record<string, unknown> };
}

test('health names the network and a random database id: two databases prepared at the same moment differ; /health answers the same', async (t) => {
  const moment = Date.UTC(2026, 4, 12, 9, 30);
  const one = await startTestApp({ now: moment });
  t.after(() => one.close());
  const two = await startTestApp({ now: moment });
  t.after(() => two.close());
  const a = await health(one.baseUrl, '/api/v1/health');
  const b = await health(two.baseUrl, '/api/v1/health');
  assert.equal(a.status, 200);
  assert.equal(a.body.network, 'tron-mainnet');
  assert.match(String(a.body.database_id), ID);
  assert.match(String(b.body.database_id), ID);
  assert.notEqual(a.body.database_id, b.body.database_id, 'same network, same moment, another database: another id');

  const short = await health(one.baseUrl, '/health');
  assert.equal(short.status, 200);
  assert.deepEqual(short.body, a.body, 'the short path gives the same answer');
  assert.equal(short.cacheControl, 'no-store');
  const head = await fetch(`${one.baseUrl}/health`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  const post = await fetch(`${one.baseUrl}/health`, { method: 'POST' });
  assert.equal(post.status, 405);
  assert.match(post.headers.get('allow') ?? '', /GET/);
});

test('a restart on the same database keeps its id; the id is the one stored with the claim', async () => {
  const path = join(tempDir('gatewayd-dbid-'), 'gateway.db');
  const first = await startTestApp({ config: { database: { path } } });
  const before = (await health(first.baseUrl, '/api/v1/health')).body.database_id;
  assert.equal(before, await databaseId(first.deps.db));
  await first.close();
  const again = await startTestApp({ config: { database: { path } }, now: Date.UTC(2027, 0, 1) });
  try {
    assert.equal((await health(again.baseUrl, '/api/v1/health')).body.database_id, before);
  } finally {
    await again.close();
  }
});

test('migration 0033 gives a database claimed before it a random id of its own (SQLite)', () => {
  const all = loadMigrations();
  const ids = [0, 1].map(() => {
    const path = join(tempDir('gatewayd-0033-'), 'gateway.db');
    ensureDatabaseFile(path);
    const sqlite = openSqlite(path);
    try {
      migrate(
        sqlite,
        1000,
        all.filter((m) => m.version < 33),
      );
      sqlite.prepare(`INSERT INTO instance_network (id, network, recorded_at) VALUES (1, 'tron-mainnet', 1000)`).run();
      migrate(sqlite, 2000, all);
      return (sqlite.prepare('SELECT database_id FROM instance_network WHERE id = 1').get() as { database_id: string }).database_id;
    } finally {
      sqlite.close();
    }
  });
  for (const id of ids) assert.match(id, ID);
  assert.notEqual(ids[0], ids[1], 'the same claim (network and moment) in two databases: two ids');
});

test(
  'migration 0033 on PostgreSQL fills a claimed database with an id of the same form',
  { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' },
  async () => {
    const scratch = await scratchDatabase();
    const pg = openDatabase({ path: '', url: scratch.url });
    try {
      await migrateDatabase(pg, 1000);
      const pool = await pg.pool!();
      await pool.query(`INSERT INTO instance_network (id, network, recorded_at) VALUES (1, 'tron-mainnet', 1000)`);
      // The twin's own fill, run on a claim that has none (as one made before 0033 had).
      const fill = readAssetText('migrations/postgres/0033_database_id.sql')
        .split('\n')
        .find((line) => line.startsWith('UPDATE'))!;
      await pool.query(fill);
      assert.match((await databaseId(pg.db)) ?? '', ID);
    } finally {
      await pg.close();
      await scratch.drop();
    }
  },
);
