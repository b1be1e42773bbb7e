/**
 * `gatewayd db copy --to postgres://… [--config FILE]`: copies the SQLite database (database.path)
 * into an empty PostgreSQL database, for the move to several instances (docs/operations.md,
 * "Moving to PostgreSQL"). Refuses a target that holds any table; migrates it with the PostgreSQL
 * twins; copies every table in one transaction (all or nothing), parents before children, with the
 * invoice-stats triggers off so the kept sums are copied as they are; then counts and checksums
 * every table on both sides (SHA-256 over the rows in primary-key order, integers compared exactly).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { openDatabase, openSqlite, type Sqlite } from '../db/database.js';
import { databaseMigrationStatus, isEmpty, migrateDatabase, migrationStatus } from '../db/migrator.js';
import { isPostgresUrl, loadPg, redactUrl } from '../db/postgres.js';
import { UsageError } from './usage.js';

export class CopyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyError';
  }
}

const CHUNK = 500;

interface Table {
  name: string;
  columns: string[];
  /** Primary-key columns in key order (all columns when the table has none). */
  key: string[];
}

/** The tables to copy, parents before children (by their foreign keys). */
export function tablesInOrder(sqlite: Sqlite): Table[] {
  const names = (
    sqlite
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations' ORDER BY name`)
      .all() as Array<{ name: string }>
  ).map((r) => r.name);
  const parents = new Map(
    names.map((n) => [n, (sqlite.prepare(`PRAGMA foreign_key_list("${n}")`).all() as Array<{ table: string }>).map((f) => f.table).filter((t) => t !== n)]),
  );
  const ordered: string[] = [];
  const visit = (n: string, path: string[]) => {
    if (ordered.includes(n)) return;
    if (path.includes(n)) throw new CopyError(`foreign keys form a cycle: ${[...path, n].join(' -> ')}`);
    for (const p of parents.get(n) ?? []) visit(p, [...path, n]);
    ordered.push(n);
  };
  for (const n of names) visit(n, []);
  return ordered.map((name) => {
    const info = sqlite.prepare(`PRAGMA table_info("${name}")`).all() as Array<{ name: string; pk: number }>;
    const key = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    return { name, columns: info.map((c) => c.name), key: key.length > 0 ? key : info.map((c) => c.name) };
  });
}

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

/** SHA-256 of the rows in key order; every value as text (integers exact), NULL distinct from ''. */
function digest(rows: Iterable<unknown[]>): { rows: number; sha256: string } {
  const hash = createHash('sha256');
  let n = 0;
  for (const row of rows) {
    hash.update(
      JSON.stringify(row.map((v) => (v === null || v === undefined ? null : typeof v === 'object' && Buffer.isBuffer(v) ? v.toString('hex') : String(v)))),
    );
    hash.update('\n');
    n++;
  }
  return { rows: n, sha256: hash.digest('hex') };
}

/** --to names a PostgreSQL database: anything else is a usage error, before anything is opened. */
export function checkCopyTarget(to: string): void {
  if (!isPostgresUrl(to)) throw new UsageError('--to needs a postgres:// URL, such as postgres://gatewayd@127.0.0.1:5432/gatewayd');
}

export async function runDbCopy(config: Config, to: string, out: (line: string) => void): Promise<number> {
  checkCopyTarget(to);
  const source = config.database.path;
  if (source === ':memory:' || !existsSync(source)) throw new CopyError(`${source}: no SQLite database to copy`);
  const sqlite = openSqlite(source);
  const target = openDatabase({ path: '', url: to }, { max: 1 });
  const shown = redactUrl(to);
  try {
    const { pending } = migrationStatus(sqlite);
    if (pending.length > 0) throw new CopyError(`${source}: ${pending.length} pending migration(s): run \`gatewayd migrate\` first`);
    if (!(await isEmpty(target))) throw new CopyError(`${shown}: the target database is not empty; copy into a new, empty database`);
    await migrateDatabase(target, Date.now());
    const lite = migrationStatus(sqlite).applied.map((m) => `${m.version}_${m.name}`);
    const twins = new Set((await databaseMigrationStatus(target)).applied.map((m) => `${m.version}_${m.name}`));
    const missing = lite.filter((m) => !twins.has(m));
    if (missing.length > 0) throw new CopyError(`this binary has no PostgreSQL twin of migration(s) ${missing.join(', ')}`);

    const tables = tablesInOrder(sqlite);
    const started = Date.now();
    // A client of its own with pg's default parsers: BIGINT read back as exact text for the checksums.
    const client = new (await loadPg()).Client({ connectionString: to });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE invoices DISABLE TRIGGER USER');
      // Rows a migration wrote into the new database (none on an empty one) give way to the source's.
      for (const t of [...tables].reverse()) await client.query(`DELETE FROM ${quote(t.name)}`);
      for (const t of tables) {
        const select = sqlite
          .prepare(`SELECT ${t.columns.map(quote).join(', ')} FROM ${quote(t.name)}`)
          .raw(true)
          .safeIntegers(true);
        let batch: unknown[][] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          const values: unknown[] = [];
          const tuples = batch.map((row) => `(${row.map((v) => `$${values.push(typeof v === 'bigint' ? v.toString() : v)}`).join(', ')})`);
          await client.query(`INSERT INTO ${quote(t.name)} (${t.columns.map(quote).join(', ')}) VALUES ${tuples.join(', ')}`, values);
          batch = [];
        };
        for (const row of select.iterate() as Iterable<unknown[]>) {
          batch.push(row);
          if (batch.length >= CHUNK) await flush();
        }
        await flush();
      }
      await client.query('ALTER TABLE invoices ENABLE TRIGGER USER');
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new CopyError(`copy failed, nothing was kept in ${shown}: ${(err as Error).message}`);
    }
    let failed = 0;
    try {
      for (const t of tables) {
        const order = t.key.map(quote).join(', ');
        const cols = t.columns.map(quote).join(', ');
        const mine = digest(
          sqlite
            .prepare(`SELECT ${cols} FROM ${quote(t.name)} ORDER BY ${order}`)
            .raw(true)
            .safeIntegers(true)
            .iterate() as Iterable<unknown[]>,
        );
        const res = await client.query({ text: `SELECT ${cols} FROM ${quote(t.name)} ORDER BY ${order}`, rowMode: 'array' });
        const theirs = digest(res.rows as unknown[][]);
        const same = mine.rows === theirs.rows && mine.sha256 === theirs.sha256;
        if (!same) failed++;
        out(
          `${same ? 'ok  ' : 'FAIL'}  ${t.name.padEnd(22)} ${String(mine.rows).padStart(9)} rows  sha256 ${mine.sha256.slice(0, 16)}${same ? '' : ` != ${theirs.rows} rows ${theirs.sha256.slice(0, 16)}`}`,
        );
      }
    } finally {
      await client.end();
    }
    if (failed > 0) {
      out(`${failed} table(s) differ: do not switch to ${shown}; drop it and copy again`);
      return 1;
    }
    out(`copied ${tables.length} tables from ${source} to ${shown} in ${((Date.now() - started) / 1000).toFixed(1)} s; every count and checksum matches`);
    out(`next: set database.url = "${shown}" on every instance (docs/operations.md, "Moving to PostgreSQL")`);
    return 0;
  } finally {
    sqlite.close();
    await target.close();
  }
}
