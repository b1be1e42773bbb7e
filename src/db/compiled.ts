/**
 * Queries on the hot path (invoice creation, API-key authentication): written with Kysely like every
 * other query, compiled once, then run synchronously on the better-sqlite3 handle.
 *
 * Why: a creation runs a dozen short indexed statements. Through Kysely's executor each one builds
 * an operation tree, compiles it to SQL and passes several promise hops; that cost more than
 * SQLite's own work (profile in BENCHMARKS.md). Here the SQL text and the order of its parameters
 * are fixed at the first call; later calls only bind values.
 *
 * How: the builder gets `p(name)`, a marker standing for a named parameter. Kysely passes values
 * through untouched as bound parameters, so after compiling, each marker in the parameter list is
 * replaced by the caller's value of that name, and any other parameter (a constant written in the
 * query) keeps its value. A marker found anywhere else (inlined into the SQL text) is refused.
 *
 * Synchronous on SQLite on purpose: between BEGIN and COMMIT of a group commit nothing else can run
 * on the single connection. On PostgreSQL the same query runs on the pinned connection of the
 * transaction (`Tx`), asynchronously; feature code awaits the result either way (awaiting a SQLite
 * result costs one microtask). Outside a transaction hold a connection with `onConnection`.
 */
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type Compilable,
} from 'kysely';
import { isPgConn, type Conn, type Dialect, type Sqlite } from './database.js';
import type { Database } from './schema.js';

/** Builds and compiles only; never connects. One per engine: the SQL text differs ($1 or ?). */
const compileOnly: Record<Dialect, Kysely<Database>> = {
  sqlite: new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
  postgres: new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
};

const MARKER = '\u0000gatewayd-param:';

export type Param<P> = <K extends keyof P & string>(name: K) => P[K];

type Slot = { name: string } | { value: unknown };

/** A value now (SQLite) or later (PostgreSQL): callers await it either way. */
export type Awaitable<T> = T | Promise<T>;

export interface CompiledQuery<P, R> {
  /** The SQLite SQL text (compiled at the first call). */
  readonly sql: string;
  /** The SQL text for one engine. */
  sqlFor(dialect: Dialect): string;
  all(sqlite: Sqlite, params: P): R[];
  all(conn: Conn, params: P): Awaitable<R[]>;
  first(sqlite: Sqlite, params: P): R | undefined;
  first(conn: Conn, params: P): Awaitable<R | undefined>;
  /** Runs a write; the number of rows it changed. */
  run(sqlite: Sqlite, params: P): number;
  run(conn: Conn, params: P): Awaitable<number>;
}

/** Lets a query differ by engine where the engines differ (a row lock: `.forUpdate()` on PostgreSQL only). */
export type BuildContext = { dialect: Dialect };

/**
 * `compileQuery((db, p: Param<{ id: string }>) => db.selectFrom('invoices').selectAll().where('id', '=', p('id')))`
 * Parameters must be plain values (string, number, bigint, null, Buffer); lists (`in`) are not supported.
 */
export function compileQuery<P, R>(build: (db: Kysely<Database>, p: Param<P>, context: BuildContext) => Compilable<R>): CompiledQuery<P, R> {
  const compiledFor: Partial<Record<Dialect, { sql: string; slots: Slot[] }>> = {};
  const compile = (dialect: Dialect = 'sqlite') => {
    const done = compiledFor[dialect];
    if (done) return done;
    const marker = ((name: string) => `${MARKER}${name}`) as Param<P>;
    const query = build(compileOnly[dialect], marker, { dialect }).compile();
    if (query.sql.includes(MARKER)) throw new Error(`compileQuery: a parameter was inlined into the SQL text: ${query.sql}`);
    const slots = query.parameters.map((value): Slot =>
      typeof value === 'string' && value.startsWith(MARKER) ? { name: value.slice(MARKER.length) } : { value },
    );
    const compiled = { sql: query.sql, slots };
    compiledFor[dialect] = compiled;
    return compiled;
  };
  const bind = (params: P, dialect: Dialect = 'sqlite'): unknown[] => {
    const { slots } = compile(dialect);
    const values = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if ('name' in slot) {
        const value = (params as Record<string, unknown>)[slot.name];
        if (value === undefined) throw new Error(`compileQuery: no value for parameter ${slot.name}`);
        values[i] = value;
      } else {
        values[i] = slot.value;
      }
    }
    return values;
  };
  const pg = (conn: Conn, params: P) => (conn as Exclude<Conn, Sqlite>).query<R>(compile('postgres').sql, bind(params, 'postgres'));
  return {
    get sql() {
      return compile().sql;
    },
    sqlFor: (dialect: Dialect) => compile(dialect).sql,
    all: ((conn: Conn, params: P) => (isPgConn(conn) ? pg(conn, params).then((r) => r.rows) : conn.prepare(compile().sql).all(bind(params)))) as CompiledQuery<
      P,
      R
    >['all'],
    first: ((conn: Conn, params: P) =>
      isPgConn(conn) ? pg(conn, params).then((r) => r.rows[0]) : conn.prepare(compile().sql).get(bind(params))) as CompiledQuery<P, R>['first'],
    run: ((conn: Conn, params: P) =>
      isPgConn(conn) ? pg(conn, params).then((r) => r.rowCount) : conn.prepare(compile().sql).run(bind(params)).changes) as CompiledQuery<P, R>['run'],
  };
}
