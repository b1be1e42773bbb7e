/**
 * Opens the SQLite database with the pragmas the product relies on (docs/architecture.md, Transactions):
 * WAL, synchronous=FULL (an answered 201 is on disk), foreign keys, a busy timeout, statement
 * journals in memory and an 8 MiB page cache.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
export type Sqlite = SqliteDatabase.Database;

declare const openTransaction: unique symbol;
/**
 * The better-sqlite3 handle while a write transaction is open on it. Only writeTransaction and the
 * invoices' group commit hand one out, so a function that takes a TxSqlite (the outbox's
 * insertEvent, an invoice creation) can only be called inside a transaction: the rule shows at its
 * signature instead of resting on the one connection being held.
 */
export type TxSqlite = Sqlite & { readonly [openTransaction]: true };

/** The handle under each Kysely instance openDatabase made, for the TxSqlite writeTransaction hands out. */
const handleOf = new WeakMap<Db, Sqlite>();

export interface OpenedDatabase {
  db: Db;
  sqlite: Sqlite & StatementCache;
  path: string;
  close(): Promise<void>;
}

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

export function openDatabase(path: string): OpenedDatabase {
  ensureDatabaseFile(path);
  const sqlite = openSqlite(path);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  handleOf.set(db, sqlite);
  return {
    db,
    sqlite,
    path,
    // Kysely's destroy() closes the better-sqlite3 handle; a WAL checkpoint happens on close.
    close: () => db.destroy(),
  };
}

/**
 * Runs fn in one BEGIN IMMEDIATE transaction on the single connection: the write lock is taken
 * up front, so a transaction that reads then writes never fails half-way on a lock upgrade.
 * fn gets the transaction twice: as Kysely's Trx, and as the TxSqlite handle for the synchronous
 * compiled queries (src/db/compiled.ts) that must land in it. fn must not await the network.
 */
export async function writeTransaction<T>(db: Db, fn: (trx: Trx, tx: TxSqlite) => Promise<T>): Promise<T> {
  const sqlite = handleOf.get(db);
  if (!sqlite) throw new Error('writeTransaction needs a database opened by openDatabase');
  return db.connection().execute(async (conn) => {
    await sql`BEGIN IMMEDIATE`.execute(conn);
    try {
      const result = await fn(conn as unknown as Trx, sqlite as TxSqlite);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}

/**
 * Runs synchronous better-sqlite3 work (compiled queries, src/db/compiled.ts) while holding the one
 * connection, as Kysely's own queries do: an open Kysely transaction elsewhere is between two of
 * its statements, not finished, and work run then would land inside it. fn must be synchronous.
 */
export function onConnection<T>(db: Db, fn: () => T): Promise<T> {
  return db.connection().execute(async () => fn());
}

