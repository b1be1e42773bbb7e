/**
 * Numbered SQL migrations, each applied in its own transaction and recorded with a SHA-256
 * checksum. An applied migration whose file changed is refused (migrations are frozen).
 * SQLite reads migrations/NNNN_name.sql; PostgreSQL reads its twins, migrations/postgres/NNNN_name.sql
 * (same number and name: docs/architecture.md, Storage layer).
 */
import { createHash } from 'node:crypto';
import { listAssets, readAssetText } from '../lib/assets.js';
import type { Dialect, OpenedDatabase, Sqlite } from './database.js';
import { LOCK_KEYS } from './postgres.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationStatus {
  applied: Array<{ version: number; name: string; applied_at: number }>;
  pending: Migration[];
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

const FILE_RE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Where each engine's migrations live. */
export const MIGRATION_DIRS: Record<Dialect, string> = { sqlite: 'migrations', postgres: 'migrations/postgres' };

export function loadMigrations(dialect: Dialect = 'sqlite'): Migration[] {
  const migrations: Migration[] = [];
  const dir = MIGRATION_DIRS[dialect];
  for (const file of listAssets(dir)) {
    const m = FILE_RE.exec(file);
    if (!m) continue;
    const sql = readAssetText(`${dir}/${file}`);
    migrations.push({
      version: Number(m[1]),
      name: m[2]!,
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version) {
      throw new MigrationError(`two migrations share version ${migrations[i]!.version}`);
    }
  }
  return migrations;
}

function ensureTable(sqlite: Sqlite): void {
  sqlite.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
}

/** True when the database has no table at all (a brand-new file). */
export function isEmptyDatabase(sqlite: Sqlite): boolean {
  const row = sqlite.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'`).get() as { n: number };
  return row.n === 0;
}

type AppliedRow = { version: number; name: string; checksum: string; applied_at: number };

export function migrationStatus(sqlite: Sqlite, migrations = loadMigrations()): MigrationStatus {
  ensureTable(sqlite);
  const rows = sqlite.prepare('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version').all() as AppliedRow[];
  return compare(rows, migrations);
}

function compare(rows: AppliedRow[], migrations: Migration[], dir = 'migrations'): MigrationStatus {
  const byVersion = new Map(migrations.map((m) => [m.version, m]));
  for (const row of rows) {
    const file = byVersion.get(row.version);
    if (!file) {
      throw new MigrationError(`migration ${pad(row.version)}_${row.name} is applied but its file is missing from ${dir}/`);
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        `${dir}/${pad(row.version)}_${file.name}.sql was edited after it was applied (checksum mismatch); applied migrations are frozen, add a new one`,
      );
    }
  }
  const applied = new Set(rows.map((r) => r.version));
  return {
    applied: rows.map(({ version, name, applied_at }) => ({ version, name, applied_at })),
    pending: migrations.filter((m) => !applied.has(m.version)),
  };
}

/** Applies every pending migration; returns the ones applied. */
export function migrate(sqlite: Sqlite, now: number, migrations = loadMigrations()): Migration[] {
  const { pending } = migrationStatus(sqlite, migrations);
  const record = sqlite.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');
  for (const m of pending) {
    const apply = sqlite.transaction(() => {
      sqlite.exec(m.sql);
      record.run(m.version, m.name, m.checksum, now);
    });
    try {
      apply.immediate();
    } catch (err) {
      throw new MigrationError(`migration ${pad(m.version)}_${m.name} failed: ${(err as Error).message}`);
    }
  }
  return pending;
}

export function pad(version: number): string {
  return String(version).padStart(4, '0');
}

const PG_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version BIGINT PRIMARY KEY,
  name TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`;

/** True when the database has no table of ours at all (a brand-new file or PostgreSQL database). */
export async function isEmpty(database: OpenedDatabase): Promise<boolean> {
  if (database.dialect === 'sqlite') return isEmptyDatabase(database.sqlite);
  const { rows } = await (await database.pool!()).query<{ n: number }>(`SELECT count(*) AS n FROM pg_tables WHERE schemaname = current_schema()`);
  return rows[0]!.n === 0;
}

/** migrationStatus for either engine. */
export async function databaseMigrationStatus(database: OpenedDatabase): Promise<MigrationStatus> {
  if (database.dialect === 'sqlite') return migrationStatus(database.sqlite);
  const client = await (await database.pool!()).connect();
  try {
    await client.query(PG_TABLE);
    const { rows } = await client.query<AppliedRow>('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version');
    return compare(rows, loadMigrations('postgres'), MIGRATION_DIRS.postgres);
  } finally {
    client.release();
  }
}

/**
 * migrate for either engine. On PostgreSQL a session advisory lock lets one instance migrate while
 * another starting at the same time waits and then finds nothing pending.
 */
export async function migrateDatabase(database: OpenedDatabase, now: number): Promise<Migration[]> {
  if (database.dialect === 'sqlite') return migrate(database.sqlite, now);
  const client = await (await database.pool!()).connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEYS.MIGRATE]);
    await client.query(PG_TABLE);
    const { rows } = await client.query<AppliedRow>('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version');
    const { pending } = compare(rows, loadMigrations('postgres'), MIGRATION_DIRS.postgres);
    for (const m of pending) {
      try {
        await client.query('BEGIN');
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, $4)', [m.version, m.name, m.checksum, now]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new MigrationError(`migration ${pad(m.version)}_${m.name} failed: ${(err as Error).message}`);
      }
    }
    return pending;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEYS.MIGRATE]).catch(() => undefined);
    client.release();
  }
}
