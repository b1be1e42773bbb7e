/**
 * Numbered SQL migrations from migrations/, each applied in its own transaction and recorded with
 * a SHA-256 checksum. An applied migration whose file changed is refused (migrations are frozen).
 */
import { createHash } from 'node:crypto';
import { listAssets, readAssetText } from '../lib/assets.js';
import type { Sqlite } from './database.js';

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

export function loadMigrations(): Migration[] {
  const migrations: Migration[] = [];
  for (const file of listAssets('migrations')) {
    const m = FILE_RE.exec(file);
    if (!m) continue;
    const sql = readAssetText(`migrations/${file}`);
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

export function migrationStatus(sqlite: Sqlite, migrations = loadMigrations()): MigrationStatus {
  ensureTable(sqlite);
  const rows = sqlite.prepare('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version').all() as Array<{
    version: number;
    name: string;
    checksum: string;
    applied_at: number;
  }>;
  const byVersion = new Map(migrations.map((m) => [m.version, m]));
  for (const row of rows) {
    const file = byVersion.get(row.version);
    if (!file) {
      throw new MigrationError(`migration ${pad(row.version)}_${row.name} is applied but its file is missing from migrations/`);
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        `migrations/${pad(row.version)}_${file.name}.sql was edited after it was applied (checksum mismatch); applied migrations are frozen, add a new one`,
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
