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
 *
 * On PostgreSQL each statement is a round trip, which costs more than its work on the server; on
 * SQLite a statement is a function call. So statements that do not depend on each other can be sent
 * together (`readTogether`, `runTogether`, below): one statement on PostgreSQL, the same statements
 * one by one on SQLite. Feature code writes them once for both.
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
import { isPgConn, type Conn, type Dialect, type PgConn, type Sqlite, type Tx } from './database.js';
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

/** Numbers each compiled query (the key of the combined texts of readTogether and runTogether). */
let compiledQueries = 0;

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
  /** This query with its values, to send with others: runTogether's writes and read. */
  with(params: P): BoundQuery<R>;
  /** A read with its values and what its rows mean (`rows => rows[0]`, …): one part of readTogether. */
  lookup<T>(params: P, map: (rows: R[]) => T): Lookup<T>;
}

/** A compiled query and its values (CompiledQuery.with). */
export interface BoundQuery<R> {
  all(conn: Conn): Awaitable<R[]>;
  run(conn: Conn): Awaitable<number>;
  /** Which compiled query (the key of the combined texts' cache). */
  readonly queryId: number;
  /** Its PostgreSQL text, and its values in the order of that text's placeholders. */
  pgSql(): string;
  pgValues(): unknown[];
}

/** A read and the meaning of its rows (CompiledQuery.lookup). `on(conn)` runs it alone. */
export interface Lookup<T> extends BoundQuery<unknown> {
  map(rows: unknown[]): T;
  on(conn: Conn): Awaitable<T>;
}

/** Lets a query differ by engine where the engines differ (a row lock: `.forUpdate()` on PostgreSQL only). */
export type BuildContext = { dialect: Dialect };

/** A query's SQL text for one engine, and where each bound value comes from. */
interface CompiledText {
  sql: string;
  slots: Slot[];
}

/**
 * `compileQuery((db, p: Param<{ id: string }>) => db.selectFrom('invoices').selectAll().where('id', '=', p('id')))`
 * Parameters must be plain values (string, number, bigint, null, Buffer); lists (`in`) are not supported.
 */
export function compileQuery<P, R>(build: (db: Kysely<Database>, p: Param<P>, context: BuildContext) => Compilable<R>): CompiledQuery<P, R> {
  return new Compiled<P, R>(build);
}

/**
 * One compiled query. A class, its methods on the prototype: a creation runs a dozen of these
 * calls on SQLite, and closures made per query or per bound value cost measurably more there
 * (BENCHMARKS.md, "SQLite after PostgreSQL").
 */
class Compiled<P, R> implements CompiledQuery<P, R> {
  /** The key of the combined texts of readTogether and runTogether. */
  readonly id = ++compiledQueries;
  private sqlite: CompiledText | undefined;
  private postgres: CompiledText | undefined;

  constructor(private readonly build: (db: Kysely<Database>, p: Param<P>, context: BuildContext) => Compilable<R>) {}

  get sql(): string {
    return this.text('sqlite').sql;
  }

  sqlFor(dialect: Dialect): string {
    return this.text(dialect).sql;
  }

  text(dialect: Dialect): CompiledText {
    const done = dialect === 'sqlite' ? this.sqlite : this.postgres;
    if (done) return done;
    const marker = ((name: string) => `${MARKER}${name}`) as Param<P>;
    const query = this.build(compileOnly[dialect], marker, { dialect }).compile();
    if (query.sql.includes(MARKER)) throw new Error(`compileQuery: a parameter was inlined into the SQL text: ${query.sql}`);
    const slots = query.parameters.map((value): Slot =>
      typeof value === 'string' && value.startsWith(MARKER) ? { name: value.slice(MARKER.length) } : { value },
    );
    const compiled = { sql: query.sql, slots };
    if (dialect === 'sqlite') this.sqlite = compiled;
    else this.postgres = compiled;
    return compiled;
  }

  /** The values in the order of the dialect's placeholders. */
  values(params: P, dialect: Dialect): unknown[] {
    const { slots } = this.text(dialect);
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
  }

  /** The prepared statement on SQLite (the handle caches it by text). */
  private statement(sqlite: Sqlite) {
    return sqlite.prepare(this.text('sqlite').sql);
  }

  private pg(conn: PgConn, params: P) {
    const { sql } = this.text('postgres');
    return conn.query<R>(sql, this.values(params, 'postgres'), preparable(sql) ? `gw_q${this.id}` : undefined);
  }

  all(sqlite: Sqlite, params: P): R[];
  all(conn: Conn, params: P): Awaitable<R[]>;
  all(conn: Conn, params: P): Awaitable<R[]> {
    if (isPgConn(conn)) return this.pg(conn, params).then(rowsOf);
    return this.statement(conn).all(this.values(params, 'sqlite')) as R[];
  }

  first(sqlite: Sqlite, params: P): R | undefined;
  first(conn: Conn, params: P): Awaitable<R | undefined>;
  first(conn: Conn, params: P): Awaitable<R | undefined> {
    if (isPgConn(conn)) return this.pg(conn, params).then(firstRowOf);
    return this.statement(conn).get(this.values(params, 'sqlite')) as R | undefined;
  }

  run(sqlite: Sqlite, params: P): number;
  run(conn: Conn, params: P): Awaitable<number>;
  run(conn: Conn, params: P): Awaitable<number> {
    if (isPgConn(conn)) return this.pg(conn, params).then(rowCountOf);
    return this.statement(conn).run(this.values(params, 'sqlite')).changes;
  }

  with(params: P): BoundQuery<R> {
    return new Bound(this, params);
  }

  lookup<T>(params: P, map: (rows: R[]) => T): Lookup<T> {
    return new BoundLookup(this, params, map);
  }
}

const rowsOf = <R>(result: { rows: R[] }): R[] => result.rows;
const firstRowOf = <R>(result: { rows: R[] }): R | undefined => result.rows[0];
const rowCountOf = (result: { rowCount: number }): number => result.rowCount;

/** A compiled query and its values (CompiledQuery.with). */
class Bound<P, R> implements BoundQuery<R> {
  constructor(
    protected readonly query: Compiled<P, R>,
    protected readonly params: P,
  ) {}

  all(conn: Conn): Awaitable<R[]> {
    return this.query.all(conn, this.params);
  }

  run(conn: Conn): Awaitable<number> {
    return this.query.run(conn, this.params);
  }

  get queryId(): number {
    return this.query.id;
  }

  pgSql(): string {
    return this.query.text('postgres').sql;
  }

  pgValues(): unknown[] {
    return this.query.values(this.params, 'postgres');
  }
}

/** A read with its values and what its rows mean (CompiledQuery.lookup). */
class BoundLookup<P, R, T> extends Bound<P, R> implements Lookup<T> {
  constructor(
    query: Compiled<P, R>,
    params: P,
    private readonly meaning: (rows: R[]) => T,
  ) {
    super(query, params);
  }

  map(rows: unknown[]): T {
    return this.meaning(rows as R[]);
  }

  on(conn: Conn): Awaitable<T> {
    return settle(this.all(conn), this.meaning);
  }
}

/** f of a value now (SQLite) or later (PostgreSQL). */
export function settle<A, B>(value: Awaitable<A>, f: (a: A) => B): Awaitable<B> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/**
 * Whether a PostgreSQL text may run as a named prepared statement: not when it returns `*` (select
 * or returning). A prepared statement keeps the row shape it was planned with; once another instance
 * migrates a table (a column added in an upgrade), PostgreSQL refuses to run it again on that
 * connection ("cached plan must not change result type"). Columns named one by one keep their shape.
 */
export function preparable(sql: string): boolean {
  return !sql.replace(/count\(\*\)/gi, '').includes('*');
}

/** The PostgreSQL texts of `parts` with their placeholders renumbered in one sequence, and all their values. */
const combinedTexts = new Map<string, { sql: string; name: string | undefined }>();
function combine(
  kind: string,
  parts: ReadonlyArray<BoundQuery<unknown>>,
  join: (texts: string[]) => string,
): { sql: string; name: string | undefined; values: unknown[] } {
  const key = `${kind}:${parts.map((part) => part.queryId).join(',')}`;
  const known = combinedTexts.get(key);
  const partValues = parts.map((part) => part.pgValues());
  const values = partValues.flat();
  if (known) return { ...known, values };
  let offset = 0;
  const texts = parts.map((part, i) => {
    const count = partValues[i]!.length;
    let seen = 0;
    // Kysely numbers a statement's placeholders $1..$n in order, and every value is bound (no literal
    // text carries a "$"): checked, so a text this cannot renumber fails here, at its first use.
    const text = part.pgSql().replace(/\$(\d+)/g, (_, n: string) => {
      if (Number(n) !== ++seen) throw new Error(`combine: unexpected placeholder $${n} in ${part.pgSql()}`);
      return `$${Number(n) + offset}`;
    });
    if (seen !== count) throw new Error(`combine: ${seen} placeholders for ${count} values in ${part.pgSql()}`);
    offset += count;
    return text;
  });
  const sql = join(texts);
  // A read's columns come back inside JSON: its outer shape never changes. runTogether's rows are its read's.
  const shaped = kind === 'read' || preparable(parts[parts.length - 1]!.pgSql());
  const combined = { sql, name: shaped ? `gw_c${combinedTexts.size + 1}` : undefined };
  combinedTexts.set(key, combined);
  return { ...combined, values };
}

/**
 * Reads that do not depend on each other, each result asked for when needed: `const r =
 * readTogether(tx, { a: lookupA, b: lookupB }); const a = await r.a(); … const b = await r.b();`.
 * SQLite: each read runs on its own when first asked for (exactly the statements of calling them one
 * by one, and none for a result never asked for). PostgreSQL: the first result asked for fetches all
 * of them in one statement, one round trip, all from one snapshot. Each read's rows come back as a
 * JSON array, which reads the same as the pool's own type parsers for every column type the schema
 * uses (TEXT: strings; BIGINT, NUMERIC, DOUBLE PRECISION: numbers; NULL: null); a BYTEA or
 * timestamp column would not (a hex string, a date string).
 */
export function readTogether<L extends Record<string, Lookup<unknown>>>(
  conn: Conn,
  lookups: L,
): { [K in keyof L]: () => Awaitable<L[K] extends Lookup<infer T> ? T : never> } {
  const names = Object.keys(lookups);
  const results = {} as Record<string, () => Awaitable<unknown>>;
  if (!isPgConn(conn)) {
    for (const name of names) results[name] = () => lookups[name]!.on(conn);
    return results as never;
  }
  let fetched: Promise<Record<string, unknown[]>> | undefined;
  const fetchAll = () => {
    const { sql, name, values } = combine(
      'read',
      names.map((name) => lookups[name]!),
      (texts) => `select ${texts.map((text, i) => `(select coalesce(json_agg(r), '[]'::json) from (${text}) as r) as r${i}`).join(', ')}`,
    );
    return conn.query<Record<string, unknown[]>>(sql, values, name).then((r) => r.rows[0]!);
  };
  names.forEach((name, i) => {
    results[name] = () => (fetched ??= fetchAll()).then((row) => lookups[name]!.map(row[`r${i}`]!));
  });
  return results as never;
}

/**
 * Writes, then a read that does not depend on them, in one round trip on PostgreSQL: one statement,
 * each write a data-modifying WITH part (each run to completion, in an order PostgreSQL chooses, and
 * all undone when one fails; foreign keys and AFTER triggers are checked at the statement's end, so
 * a row may refer to a row another part inserts), the read its main query. The read sees the
 * database as it was before the writes (one snapshot), so it must not read what they write. SQLite:
 * each write, then the read, as separate statements. Inside a write transaction only (a Tx): a
 * failure part-way is the caller's to roll back, as for any of its statements. Returns the read's
 * rows.
 */
export function runTogether<R>(tx: Tx, writes: ReadonlyArray<BoundQuery<unknown>>, read: BoundQuery<R>): Awaitable<R[]> {
  if (!isPgConn(tx)) {
    for (const write of writes) write.run(tx);
    return read.all(tx);
  }
  if (writes.length === 0) return read.all(tx);
  const { sql, name, values } = combine('run', [...writes, read as BoundQuery<unknown>], (texts) => {
    const last = texts.length - 1;
    return `with ${texts
      .slice(0, last)
      .map((text, i) => `w${i} as (${text})`)
      .join(', ')} ${texts[last]}`;
  });
  return tx.query<R>(sql, values, name).then(rowsOf);
}
