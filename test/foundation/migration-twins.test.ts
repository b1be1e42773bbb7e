/**
 * Every SQLite migration has its PostgreSQL twin (migrations/postgres/, same number and name;
 * docs/architecture.md, Storage layer), and on PostgreSQL (TEST_DATABASE_URL) the twins build the
 * same tables with the same columns and nullability as the SQLite files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.js';
import { loadMigrations, migrate, migrateDatabase } from '../../src/db/migrator.js';
import { tempDir } from '../helpers/app.js';
import { onPostgres, scratchDatabase } from '../helpers/database.js';

/** PostgreSQL-only migrations, if ever needed, take numbers from here up (never a SQLite number). */
const POSTGRES_ONLY_FROM = 5000;

test('every SQLite migration has a PostgreSQL twin of the same number and name', () => {
  const sqlite = loadMigrations('sqlite').map((m) => `${m.version}_${m.name}`);
  const postgres = loadMigrations('postgres');
  const twins = new Set(postgres.map((m) => `${m.version}_${m.name}`));
  const missing = sqlite.filter((name) => !twins.has(name));
  assert.deepEqual(missing, [], `write migrations/postgres/NNNN_name.sql for: ${missing.join(', ')}`);
  const extra = postgres.filter((m) => m.version < POSTGRES_ONLY_FROM && !sqlite.includes(`${m.version}_${m.name}`));
  assert.deepEqual(
    extra.map((m) => m.version),
    [],
    `a PostgreSQL-only migration is numbered ${POSTGRES_ONLY_FROM} or above`,
  );
});

test('the twins build the same tables, columns and nullability on both engines', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const dir = tempDir('gatewayd-twins-');
  const lite = openDatabase(join(dir, 'twin.db'));
  const scratch = await scratchDatabase();
  const pg = openDatabase({ path: '', url: scratch.url });
  try {
    migrate(lite.sqlite, 1);
    await migrateDatabase(pg, 1);
    const liteColumns = new Set<string>();
    const tables = lite.sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as Array<{ name: string }>;
    for (const { name } of tables) {
      for (const c of lite.sqlite.prepare(`PRAGMA table_info(${name})`).all() as Array<{ name: string; notnull: number; pk: number }>) {
        liteColumns.add(`${name}.${c.name} ${c.notnull || c.pk ? 'not null' : 'null'}`);
      }
    }
    const { rows } = await (
      await pg.pool!()
    ).query<{ t: string; c: string; nullable: string }>(
      `SELECT table_name AS t, column_name AS c, is_nullable AS nullable FROM information_schema.columns WHERE table_schema = current_schema()`,
    );
    const pgColumns = new Set(rows.map((r) => `${r.t}.${r.c} ${r.nullable === 'NO' ? 'not null' : 'null'}`));
    // SQLite lets a TEXT PRIMARY KEY hold NULL unless declared NOT NULL; compare names alone there.
    const strip = (s: Set<string>) => new Set([...s].map((x) => x.split(' ')[0]!));
    assert.deepEqual([...strip(pgColumns)].sort(), [...strip(liteColumns)].sort());
    const differ = [...pgColumns].filter((x) => !liteColumns.has(x) && !x.endsWith(' not null'));
    assert.deepEqual(differ, [], 'a column PostgreSQL lets be NULL is NOT NULL on SQLite');
  } finally {
    await lite.close();
    await pg.close();
    await scratch.drop();
  }
});
