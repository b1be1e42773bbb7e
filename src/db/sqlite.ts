/**
 * The SQLite side of the storage layer (src/db/database.ts chooses it when database.url is empty).
 * Opens the SQLite database with the pragmas the product relies on (docs/architecture.md, Transactions):
 * WAL, synchronous=FULL (an answered 201 is on disk), foreign keys, a busy timeout, statement
 * journals in memory and an 8 MiB page cache.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';

export type Sqlite = SqliteDatabase.Database;

/** Creates the data folder (0700) and the database file (0600) when missing. */
export function ensureDatabaseFile(path: string): boolean {
  if (path === ':memory:') return false;
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (existsSync(path)) return false;
  closeSync(openSync(path, 'a', 0o600));
  return true;
}

/** The most prepared statements a handle keeps (see cacheStatements). */
export const STATEMENT_CACHE_SIZE = 500;

export interface StatementCache {
  /** How many prepared statements this handle keeps right now (at most STATEMENT_CACHE_SIZE). */
  readonly cachedStatements: number;
}

export function openSqlite(path: string, options: { readonly?: boolean } = {}): Sqlite & StatementCache {
  const sqlite = cacheStatements(new SqliteDatabase(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false }));
  sqlite.exec('PRAGMA busy_timeout = 5000');
  if (!options.readonly) sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = FULL');
  sqlite.exec('PRAGMA foreign_keys = ON');
  // Statement journals in memory: a group-commit batch runs each creation in a savepoint, and
  // SQLite copies every page a savepoint modifies into a statement journal that spills to a temp
  // file past 64 KiB by default: ~44 pwrite calls per creation, a fifth of its cost (BENCHMARKS.md).
  sqlite.exec('PRAGMA temp_store = MEMORY');
  // 8 MiB of page cache instead of 2 MiB: the indexes a creation touches stay cached (a third fewer
  // page reads under load); filled on demand, so idle memory does not change.
  sqlite.exec('PRAGMA cache_size = -8192');
  return sqlite;
}

function cacheStatements(sqlite: Sqlite): Sqlite & StatementCache {
  // A bounded LRU of prepared statements by SQL text, at most STATEMENT_CACHE_SIZE: Kysely and the
  // compiled queries prepare on every call, and preparing costs more than running our short indexed
  // statements (a creation takes ~4x the CPU without it: BENCHMARKS.md, "Runtime"). Values are always
  // bound, so the product has a few hundred texts in all; SQLite re-prepares a cached statement
  // itself after a schema change. A hit only stamps its entry; the scan for the least recently used
  // runs only when a new text arrives with the cache full.
  const statements = new Map<string, { stmt: SqliteDatabase.Statement; used: number }>();
  let clock = 0;
  const prepareNew = sqlite.prepare.bind(sqlite);
  const prepare = (text: string): SqliteDatabase.Statement => {
    const hit = statements.get(text);
    if (hit) {
      hit.used = ++clock;
      return hit.stmt;
    }
    const stmt = prepareNew(text);
    if (statements.size >= STATEMENT_CACHE_SIZE) {
      let oldest: string | undefined;
      let oldestUse = Infinity;
      for (const [key, entry] of statements) {
        if (entry.used < oldestUse) [oldest, oldestUse] = [key, entry.used];
      }
      statements.delete(oldest!);
    }
    statements.set(text, { stmt, used: ++clock });
    return stmt;
  };
  return Object.defineProperties(sqlite, {
    prepare: { value: prepare },
    cachedStatements: { get: () => statements.size },
  }) as Sqlite & StatementCache;
}
