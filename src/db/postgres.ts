/**
 * The PostgreSQL side of the storage layer (src/db/database.ts chooses it when database.url is a
 * postgres:// URL): the pool, the type parsers that make rows read like SQLite's, the connection
 * handle compiled queries run on, and the advisory-lock keys.
 *
 * Rows read the same on both engines: BIGINT (times in ms, micro-USDT) and NUMERIC (sums) come back
 * as JS numbers, as SQLite's INTEGER does; every value we store is below 2^53.
 *
 * The `pg` driver itself is loaded on first use (loadPg): a gateway on SQLite never loads it (about
 * 1.2 MB of heap and 30 modules at start-up, issue 32).
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import { CompiledQuery, Kysely, PostgresDialect, type DatabaseConnection } from 'kysely';
import type { Database } from './schema.js';

/** A connection compiled queries run on (src/db/compiled.ts): one pinned pool client. */
export interface PgConn {
  readonly dialect: 'postgres';
  /**
   * One statement, one round trip. `name`: prepare it once per connection under that name and only
   * bind values afterwards (PostgreSQL then skips parsing and planning: docs/operations.md,
   * "Prepared statements"); ignored where the connection cannot keep one (a Kysely connection).
   */
  query<R>(text: string, values: readonly unknown[], name?: string): Promise<{ rows: R[]; rowCount: number; command?: string }>;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

const INT8 = 20;
const NUMERIC = 1700;
const parsers: Record<number, (value: string) => unknown> = { [INT8]: Number, [NUMERIC]: Number };

let driver: Promise<typeof pg> | undefined;
/** The `pg` module, imported the first time a PostgreSQL connection is asked for. */
export function loadPg(): Promise<typeof pg> {
  return (driver ??= import('pg').then((m) => m.default));
}

function typesOf(driverModule: typeof pg) {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      parsers[oid] ?? driverModule.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
}

export interface PgPoolOptions {
  /** Connections at most (default 10). */
  max?: number;
}

/**
 * This process's name among the instances, e.g. `gatewayd 4242@web1`. Every connection carries it as
 * its application_name (an application_name in database.url is replaced), so pg_stat_activity shows
 * which instance holds a leader lease, and an instance is alive exactly while it has a connection
 * (each keeps its lease and LISTEN connections open): a webhook delivery an instance claimed
 * (deliveries.claimed_by) is sent again at once when its claimer is gone (liveInstances).
 */
export const INSTANCE_NAME = `gatewayd ${process.pid}@${hostname()}`.slice(0, 63);
const APPLICATION_NAME = INSTANCE_NAME;

/** The URL without an application_name parameter (the instance's own name is set instead). */
function ownName(url: string): string {
  try {
    const u = new URL(url);
    u.searchParams.delete('application_name');
    return u.toString();
  } catch {
    return url;
  }
}

export async function createPool(url: string, options: PgPoolOptions = {}): Promise<pg.Pool> {
  const driverModule = await loadPg();
  const pool = new driverModule.Pool({
    connectionString: ownName(url),
    max: options.max ?? 10,
    types: typesOf(driverModule),
    connectionTimeoutMillis: 10_000,
    application_name: APPLICATION_NAME,
  });
  // An idle client whose server went away (a PostgreSQL restart) errors on the pool, not on a query:
  // log-free here, the next query gets a fresh connection.
  pool.on('error', () => undefined);
  // A client checked out of the pool has no error listener of the pool's: a connection cut while a
  // transaction or Kysely holds it between two queries emitted an unhandled 'error' and ended the
  // process (found by the two-instance reliability run's database restart). The error still reaches
  // the query in flight or the next one, and the pool drops the dead client when it is released.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    born.set(client, { pool, serial: ++connections });
  });
  return pool;
}

/**
 * Kysely over a pool made on the first query (so `pg` loads then). `pool()` hands out the same pool
 * (doctor's raw checks); `close()` ends it whether or not Kysely ever used it.
 */
export function openPostgres(url: string, options: PgPoolOptions = {}): { db: Kysely<Database>; pool: () => Promise<pg.Pool>; close: () => Promise<void> } {
  let made: Promise<pg.Pool> | undefined;
  const pool = () => (made ??= createPool(url, options));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const close = async () => {
    await db.destroy();
    // Kysely ended the pool if it made its connection; a pool only doctor used is ended here.
    if (made) await (await made).end().catch(() => undefined);
  };
  return { db, pool, close };
}

/** The PgConn over a connection Kysely pinned (db.connection().execute). */
export function pgConnOf(connection: { executeQuery: DatabaseConnection['executeQuery'] } | Kysely<Database>): PgConn {
  const exec = connection as Kysely<Database>;
  return {
    dialect: 'postgres',
    async query<R>(text: string, values: readonly unknown[]) {
      const result = await exec.executeQuery<R>(CompiledQuery.raw(text, values as unknown[]));
      return { rows: result.rows, rowCount: Number(result.numAffectedRows ?? 0) };
    },
  };
}

/**
 * The PgConn over a client checked out of the pool directly (onConnection): the compiled queries'
 * own path, without Kysely's layers, and the only one that prepares named statements (`name`) when
 * `prepare` is on. The client keeps what it prepared for as long as it lives.
 */
export function pgClientConn(client: pg.PoolClient, prepare: boolean): PgConn {
  // Queries go to the server one at a time, in the order asked: the group commit's units run at once
  // on one connection (pg deprecates calling query on a client that is still busy).
  let previous: Promise<unknown> = Promise.resolve();
  return {
    dialect: 'postgres',
    query<R>(text: string, values: readonly unknown[], name?: string) {
      const named = prepare && name !== undefined;
      const config: pg.QueryConfig = named ? { name, text, values: values as unknown[] } : { text, values: values as unknown[] };
      const sent = previous.then(() => client.query(config));
      previous = sent.then(ignore, ignore);
      return sent.then(
        (answer) => {
          if (named) ranOn(client).add(name);
          // A string of several statements (simple protocol) answers each: the last one says how it ended.
          const result = Array.isArray(answer) ? (answer[answer.length - 1] as pg.QueryResult) : answer;
          return { rows: result.rows as R[], rowCount: result.rowCount ?? 0, command: result.command };
        },
        (error: unknown) => {
          if (named && isForgotten(client, name, error)) turnedStale(client, error);
          throw error;
        },
      );
    },
  };
}

const ignore = (): void => undefined;

/**
 * 26000: the server connection does not know a statement this client prepared (a pooler handed the
 * call to another one, or DISCARD ALL); 0A000 on a named statement that ran on this client before:
 * its result type changed (a column's type altered by a migration; 0A000 is feature_not_supported in
 * general, so a statement's first call that meets it is an error like any other). pg keeps believing
 * the statement is prepared on the client, so every later call of it would fail the same way. A
 * migration's change reaches every connection that prepared the statement, and the pool hands out its
 * last released client first: so every client of the pool opened before the error is stale too, and
 * each is dropped at its next checkout or release (isStale; onPooledClient in database.ts), while
 * clients opened after it are trusted.
 */
const ranBefore = new WeakMap<pg.PoolClient, Set<string>>();

function ranOn(client: pg.PoolClient): Set<string> {
  let names = ranBefore.get(client);
  if (!names) ranBefore.set(client, (names = new Set()));
  return names;
}

function isForgotten(client: pg.PoolClient, name: string, error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === '26000' || (code === '0A000' && ranOn(client).has(name));
}

/**
 * Each pooled client's pool and the order it was opened in (createPool's 'connect' handler, which
 * runs before connect() hands the client out: every client pgClientConn is given has one).
 */
const born = new WeakMap<pg.PoolClient, { pool: pg.Pool; serial: number }>();
let connections = 0;
/** By pool: clients opened up to this serial are stale. */
const staleUpTo = new WeakMap<pg.Pool, number>();
const staleErrors = new WeakSet<object>();

/** The client, and every other of its pool opened before it turned stale. */
function turnedStale(client: pg.PoolClient, error: unknown): void {
  if (typeof error === 'object' && error !== null) staleErrors.add(error);
  const mine = born.get(client);
  if (mine) staleUpTo.set(mine.pool, connections);
}

/**
 * Whether an error is a named statement the server no longer matches: the work that met it can run
 * again on a client opened after it (the group commit does, STALE_AT_MOST times).
 */
export function isStaleStatement(error: unknown): boolean {
  return typeof error === 'object' && error !== null && staleErrors.has(error);
}

/** Whether a client's prepared statements cannot be trusted any more (drop it, do not reuse it). */
export function isStale(client: pg.PoolClient): boolean {
  const mine = born.get(client);
  return mine !== undefined && mine.serial <= (staleUpTo.get(mine.pool) ?? 0);
}

/**
 * Advisory-lock keys (pg_advisory_*). WRITE serializes the general write transactions across every
 * instance as SQLite's BEGIN IMMEDIATE does in one process; MIGRATE lets one instance migrate a new
 * database; SCANNER is the chain scanner's leader lease; MAIL the payment-notice mailer's;
 * TELEGRAM_UPDATES and TELEGRAM_OUTBOX the Telegram bot's update reader and notice sender.
 */
export const LOCK_KEYS = {
  WRITE: 0x67770001,
  MIGRATE: 0x67770002,
  SCANNER: 0x67770003,
  MAIL: 0x67770004,
  TELEGRAM_UPDATES: 0x67770005,
  TELEGRAM_OUTBOX: 0x67770006,
} as const;

/** SQLSTATEs a unit of work may be retried after (deadlock detected, serialization failure). */
export function isRetryable(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '40P01' || code === '40001';
}

/**
 * 23505, a unique key taken by a transaction that committed while this one waited (two instances
 * creating with the same Idempotency-Key): run again, the unit now sees the row and answers as a replay.
 */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

/**
 * 22021 / 22P05: PostgreSQL's TEXT cannot hold U+0000, which SQLite stores. A client that sends it
 * gets a 400 validation_error (src/app.ts), never a 500.
 */
export function isUnstorableText(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '22021' || code === '22P05';
}

/** The database name and the URL of the same server's `postgres` database (to create or drop one). */
export function serverUrl(url: string, database = 'postgres'): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

/** Runs fn on one short-lived client (for admin commands: create or drop a database). */
export async function createClient(url: string): Promise<pg.Client> {
  const driverModule = await loadPg();
  // Keepalives: a lease held by a machine that vanished is released once the server notices.
  return new driverModule.Client({
    connectionString: ownName(url),
    types: typesOf(driverModule),
    keepAlive: true,
    keepAliveInitialDelayMillis: 5000,
    connectionTimeoutMillis: 10_000,
    application_name: APPLICATION_NAME,
  });
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await createClient(url);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A URL with its password hidden, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
