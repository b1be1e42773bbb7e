/**
 * The storage layer's front door (docs/architecture.md, Storage layer): opens embedded SQLite (the
 * default, src/db/sqlite.ts) or PostgreSQL (database.url = "postgres://…", src/db/postgres.ts) and
 * hands features the same three things either way: Kysely (`Db`), write transactions, and the
 * connection handle (`Conn`, `Tx`) the compiled queries of src/db/compiled.ts run on. What differs
 * between the engines (transactions, locking, the handle) is decided here, once.
 */
import { Kysely, SqliteDialect, sql, type Transaction } from 'kysely';
import type pg from 'pg';
import { LOCK_KEYS, isPostgresUrl, isStale, openPostgres, pgClientConn, pgConnOf, redactUrl, type PgConn, type PgPoolOptions } from './postgres.js';
import type { Database } from './schema.js';
import { ensureDatabaseFile, openSqlite, type Sqlite, type StatementCache } from './sqlite.js';

export { ensureDatabaseFile, openSqlite, STATEMENT_CACHE_SIZE, type Sqlite, type StatementCache } from './sqlite.js';
export type { PgConn } from './postgres.js';
export { INSTANCE_NAME } from './postgres.js';

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
export type Dialect = 'sqlite' | 'postgres';

/**
 * What compiled queries run on: the better-sqlite3 handle (synchronous) or a pinned PostgreSQL
 * connection (asynchronous). Feature code awaits either and never looks inside.
 */
export type Conn = Sqlite | PgConn;

declare const openTransaction: unique symbol;
/**
 * A Conn while a write transaction is open on it. Only writeTransaction and the invoices' group
 * commit hand one out, so a function that takes a Tx (the outbox's insertEvent, an invoice
 * creation) can only be called inside a transaction: the rule shows at its signature.
 */
export type Tx = Conn & { readonly [openTransaction]: true };
/** The name Tx had while SQLite was the only engine (branches written before PostgreSQL). */
export type TxSqlite = Tx;

export function isPgConn(conn: Conn): conn is PgConn {
  return (conn as PgConn).dialect === 'postgres';
}

interface Engine {
  dialect: Dialect;
  sqlite?: Sqlite;
  url?: string;
  /** PostgreSQL: the pool Kysely uses too, and whether compiled queries run as named prepared statements. */
  pool?: () => Promise<pg.Pool>;
  prepare?: boolean;
}
/** The engine under each Kysely instance openDatabase made. */
const engineOf = new WeakMap<Db, Engine>();

export interface OpenedDatabase {
  db: Db;
  dialect: Dialect;
  /** The better-sqlite3 handle; reading it on PostgreSQL throws (SQLite-only tools and tests). */
  readonly sqlite: Sqlite & StatementCache;
  /** The pool, on PostgreSQL only (made, and `pg` loaded, on first use). */
  pool?: () => Promise<pg.Pool>;
  /** The file path (SQLite) or the URL with its password hidden (PostgreSQL), for messages. */
  path: string;
  /** The postgres:// URL, on PostgreSQL only. */
  url?: string;
  close(): Promise<void>;
}

export interface DatabaseTarget {
  path: string;
  /** A postgres:// URL selects PostgreSQL; empty keeps the SQLite file at path. */
  url?: string;
  /** PostgreSQL: compiled queries as named prepared statements (database.prepared_statements; default true). */
  prepared_statements?: boolean;
}

/** Opens the database a config's `database` section names (a path keeps the old call working). */
export function openDatabase(target: string | DatabaseTarget, options: PgPoolOptions = {}): OpenedDatabase {
  const { path, url } = typeof target === 'string' ? { path: target, url: '' } : target;
  if (url && isPostgresUrl(url)) {
    const { db, pool, close } = openPostgres(url, options);
    const prepare = typeof target === 'string' ? true : (target.prepared_statements ?? true);
    engineOf.set(db, { dialect: 'postgres', url, pool, prepare });
    return {
      db,
      dialect: 'postgres',
      get sqlite(): Sqlite & StatementCache {
        throw new Error('this database is PostgreSQL: there is no SQLite handle');
      },
      pool,
      path: redactUrl(url),
      url,
      close,
    };
  }
  ensureDatabaseFile(path);
  const sqlite = openSqlite(path);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  engineOf.set(db, { dialect: 'sqlite', sqlite });
  // Kysely's destroy() closes the better-sqlite3 handle; a WAL checkpoint happens on close.
  return { db, dialect: 'sqlite', sqlite, path, close: () => db.destroy() };
}

function engine(db: Db): Engine {
  const found = engineOf.get(db);
  if (!found) throw new Error('the storage layer needs a database opened by openDatabase');
  return found;
}

export function dialectOf(db: Db): Dialect {
  return engine(db).dialect;
}

/** The postgres:// URL a PostgreSQL database was opened with (for the dedicated lease and LISTEN connections). */
export function postgresUrlOf(db: Db): string | undefined {
  return engine(db).url;
}

/**
 * Runs fn in one write transaction. SQLite: BEGIN IMMEDIATE on the single connection (the write
 * lock taken up front, so a read-then-write never fails half-way on a lock upgrade). PostgreSQL:
 * BEGIN on a pooled connection, then one transaction-level advisory lock that serializes these
 * transactions across every instance as BEGIN IMMEDIATE does in one process (the invoice-creation
 * path does not take it: it locks its allocation cursor's row instead). fn gets the transaction
 * twice: as Kysely's Trx, and as the Tx the compiled queries run on. fn must not await the network.
 */
export async function writeTransaction<T>(db: Db, fn: (trx: Trx, tx: Tx) => Promise<T>): Promise<T> {
  const { dialect, sqlite } = engine(db);
  return db.connection().execute(async (conn) => {
    if (dialect === 'sqlite') await sql`BEGIN IMMEDIATE`.execute(conn);
    else {
      await sql`BEGIN`.execute(conn);
      await sql`SELECT pg_advisory_xact_lock(${LOCK_KEYS.WRITE})`.execute(conn).catch(async (err) => {
        await sql`ROLLBACK`.execute(conn).catch(() => undefined);
        throw err;
      });
    }
    try {
      const tx = (dialect === 'sqlite' ? sqlite! : pgConnOf(conn)) as Tx;
      const result = await fn(conn as unknown as Trx, tx);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}

/**
 * Runs compiled queries (src/db/compiled.ts) on one connection outside a transaction. SQLite: while
 * holding the one connection, as Kysely's own queries do (an open Kysely transaction elsewhere is
 * between two of its statements, and work run then would land inside it); fn should stay
 * synchronous there. PostgreSQL: on one pooled connection, in autocommit.
 */
export function onConnection<T>(db: Db, fn: (conn: Conn) => T | Promise<T>): Promise<T> {
  const { dialect, sqlite, pool, prepare } = engine(db);
  if (dialect === 'sqlite') return db.connection().execute(async () => fn(sqlite!));
  return onPooledClient(pool!, (client) => fn(pgClientConn(client, prepare ?? true)));
}

/**
 * fn on a client of the pool, checked out directly: compiled queries need no Kysely there (one
 * promise a query instead of several), and only such a client keeps named prepared statements. A
 * client whose fn failed other than by a server's error (the connection itself), or whose prepared
 * statements the server may no longer match (isStale), is dropped: at release, or at checkout when it
 * turned stale while idle.
 */
async function onPooledClient<T>(pool: () => Promise<pg.Pool>, fn: (client: pg.PoolClient) => T | Promise<T>): Promise<T> {
  const clients = await pool();
  let client = await clients.connect();
  // Opened before another client met a forgotten statement (isStale): dropped for a fresh one. Each
  // turn ends one such client, and the pool opens at most its size of them.
  while (isStale(client)) {
    client.release(new Error('prepared statements out of step with the server'));
    client = await clients.connect();
  }
  let broken: Error | undefined;
  try {
    return await fn(client);
  } catch (error) {
    if ((error as { severity?: string }).severity === undefined) broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(broken ?? (isStale(client) ? new Error('prepared statements out of step with the server') : undefined));
  }
}
