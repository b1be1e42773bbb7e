/**
 * Opens the SQLite database with the pragmas the product relies on (decisions.md section 2):
 * WAL, synchronous=FULL (an answered 201 is on disk), foreign keys, a busy timeout.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type SqliteDatabase as KyselySqlite, type Transaction } from 'kysely';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
export type Sqlite = SqliteDatabase.Database;

export interface OpenedDatabase {
  db: Db;
  sqlite: Sqlite;
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

export function openSqlite(path: string, options: { readonly?: boolean } = {}): Sqlite {
  const sqlite = new SqliteDatabase(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  sqlite.pragma('busy_timeout = 5000');
  if (!options.readonly) sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  return sqlite;
}

/** Distinct SQL texts kept prepared; the product issues a few hundred, so the cap only bounds misuse. */
export const STATEMENT_CACHE_SIZE = 1000;

/**
 * The handle Kysely sees: prepare() returns a statement kept by its SQL text. Kysely prepares every
 * query anew, and SQLite's parse and plan cost more than running our short indexed statements (the
 * profile of invoice creation showed prepare as the largest single cost). Values are always bound
 * parameters, so the texts repeat; the least recently used statement is dropped past the cap.
 * Reusing a statement is safe here: Kysely runs one query at a time on the single connection, and
 * SQLite re-prepares a cached statement by itself after a schema change.
 */
export function cachingStatements(sqlite: Sqlite, max = STATEMENT_CACHE_SIZE): KyselySqlite & { readonly cached: number } {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    get cached() {
      return cache.size;
    },
    close: () => sqlite.close(),
    prepare(text: string) {
      let stmt = cache.get(text);
      if (stmt) {
        // Map order is insertion order: re-inserting marks the entry most recently used.
        cache.delete(text);
      } else {
        stmt = sqlite.prepare(text);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
      }
      cache.set(text, stmt);
      return stmt;
    },
  };
}

export function openDatabase(path: string): OpenedDatabase {
  ensureDatabaseFile(path);
  const sqlite = openSqlite(path);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(sqlite) }) });
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
 * fn must not await the network.
 */
export async function writeTransaction<T>(db: Db, fn: (trx: Trx) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`BEGIN IMMEDIATE`.execute(conn);
    try {
      const result = await fn(conn as unknown as Trx);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}
