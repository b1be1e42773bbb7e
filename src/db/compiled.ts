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
 * Synchronous on purpose: between BEGIN and COMMIT of a group commit nothing else can run on the
 * single connection. Outside a transaction hold Kysely's connection the same way (`onConnection`)
 * or call them where a statement in autocommit mode is fine (a read, one insert).
 */
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type Compilable } from 'kysely';
import type { Sqlite } from './database.js';
import type { Database } from './schema.js';

/** Builds and compiles only; never connects. */
const compileOnly = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

const MARKER = '\u0000gatewayd-param:';

export type Param<P> = <K extends keyof P & string>(name: K) => P[K];

type Slot = { name: string } | { value: unknown };

export interface CompiledQuery<P, R> {
  /** The SQL text (compiled at the first call). */
  readonly sql: string;
  all(sqlite: Sqlite, params: P): R[];
  first(sqlite: Sqlite, params: P): R | undefined;
  /** Runs a write; the number of rows it changed. */
  run(sqlite: Sqlite, params: P): number;
}

/**
 * `compileQuery((db, p: Param<{ id: string }>) => db.selectFrom('invoices').selectAll().where('id', '=', p('id')))`
 * Parameters must be plain values (string, number, bigint, null, Buffer); lists (`in`) are not supported.
 */
export function compileQuery<P, R>(build: (db: Kysely<Database>, p: Param<P>) => Compilable<R>): CompiledQuery<P, R> {
  let compiled: { sql: string; slots: Slot[] } | undefined;
  const compile = () => {
    if (compiled) return compiled;
    const marker = ((name: string) => `${MARKER}${name}`) as Param<P>;
    const query = build(compileOnly, marker).compile();
    if (query.sql.includes(MARKER)) throw new Error(`compileQuery: a parameter was inlined into the SQL text: ${query.sql}`);
    const slots = query.parameters.map((value): Slot =>
      typeof value === 'string' && value.startsWith(MARKER) ? { name: value.slice(MARKER.length) } : { value },
    );
    compiled = { sql: query.sql, slots };
    return compiled;
  };
  const bind = (params: P): unknown[] => {
    const { slots } = compile();
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
  return {
    get sql() {
      return compile().sql;
    },
    all: (sqlite, params) => sqlite.prepare(compile().sql).all(bind(params)) as R[],
    first: (sqlite, params) => sqlite.prepare(compile().sql).get(bind(params)) as R | undefined,
    run: (sqlite, params) => sqlite.prepare(compile().sql).run(bind(params)).changes,
  };
}
