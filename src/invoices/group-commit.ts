/**
 * Group commit (docs/architecture.md, Transactions): units of work that arrive while a transaction is running
 * wait in a queue and are then run together in one BEGIN IMMEDIATE transaction, one fsync for the
 * whole batch instead of one per request. Each unit runs in its own savepoint, so a unit that
 * throws (a 409, a constraint) is rolled back alone and the rest of the batch commits. A caller's
 * promise settles only after COMMIT: an answered 201 is on disk. Before each batch the queue waits
 * `windowMs` (1 ms, small beside one fsync) so concurrent requests still being parsed and
 * authenticated can join, instead of each starting a transaction of one.
 *
 * SQLite: units run compiled queries on the better-sqlite3 handle, so a whole batch runs from BEGIN
 * IMMEDIATE to COMMIT within one turn of the event loop (awaits of settled values only) while
 * holding Kysely's connection, and no other query can land inside it; maxBatch bounds how long that
 * blocks the event loop. PostgreSQL: the same batch on one pooled connection, first without savepoints
 * and with its units running at once (runPgWhole: a batch with a failing unit is rolled back whole
 * and run again unit by unit, with a savepoint per unit),
 * up to `parallel` batches at once on separate connections; a unit that lost a deadlock is run
 * again in the next batch, and once in a fresh savepoint after a unique-key violation (the key was taken by another
 * instance's transaction meanwhile: run again, the unit sees it, e.g. an idempotent replay). Which path runs is the storage layer's business (dialectOf).
 */
import { dialectOf, onConnection, isPgConn, type Db, type PgConn, type Sqlite, type Tx } from '../db/database.js';
import { isRetryable, isStaleStatement, isUniqueViolation } from '../db/postgres.js';

interface Pending<T> {
  work: (tx: Tx) => T | Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
  /** Deadlocks this unit lost so far (PostgreSQL): each time it is run again in the next batch. */
  deadlocks?: number;
  /** Batches this unit met on a connection whose prepared statements the server forgot (PostgreSQL). */
  stale?: number;
}

/**
 * again: the unit lost a deadlock or met a forgotten prepared statement; it is queued again for the
 * next batch (a fresh transaction).
 */
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown; again?: true };

/** Deadlocks one unit may lose before its request gets the error. */
const DEADLOCKS_AT_MOST = 5;

/**
 * Reruns after a forgotten prepared statement (isStaleStatement) before a unit's request gets the
 * error. The connection that met it, and every other of the pool opened before, is dropped (isStale),
 * so the next batch runs on a connection opened afterwards, which prepares its statements afresh: one
 * rerun is enough after a DISCARD ALL or a migration. The bound keeps a unit from running for ever
 * where they are forgotten again and again (a pooler that cannot keep them: docs/operations.md).
 */
const STALE_AT_MOST = 3;

/** The bound of each count of a unit's runs again in a next batch (Pending). */
const AGAIN_AT_MOST = { deadlocks: DEADLOCKS_AT_MOST, stale: STALE_AT_MOST } as const;

/** PostgreSQL: batches run with a savepoint per unit after one without them met a failing unit. */
const CAREFUL_BATCHES = 8;

export interface GroupCommitOptions {
  /** Caps how long one transaction holds the single connection and blocks the event loop. */
  maxBatch?: number;
  windowMs?: number;
  /** Batches in flight at once on PostgreSQL (default 1: concurrent batches on one pool deadlock, see BENCHMARKS.md); SQLite has one connection, so one. */
  parallel?: number;
  /** Called after each committed batch: its size and the milliseconds from BEGIN to COMMIT done. */
  onBatch?: (units: number, ms: number) => void;
}

export class GroupCommit {
  private queue: Array<Pending<unknown>> = [];
  private draining = 0;
  /**
   * Batches committed and units run, for the benchmark and tests; reruns: units run again on
   * PostgreSQL (a unique key taken meanwhile, a deadlock lost, a forgotten prepared statement); wholeBatches: PostgreSQL batches that
   * ran without savepoints, and redone: those that met a failing unit and ran again with them.
   */
  readonly stats = { batches: 0, units: 0, largestBatch: 0, reruns: 0, wholeBatches: 0, redone: 0 };
  /** PostgreSQL: batches still to run with a savepoint per unit since one without them met a failing unit. */
  private careful = 0;

  private readonly maxBatch: number;
  private readonly windowMs: number;
  private readonly onBatch: (units: number, ms: number) => void;
  private readonly parallel: number;

  constructor(
    private readonly db: Db,
    options: GroupCommitOptions = {},
  ) {
    this.parallel = dialectOf(db) === 'postgres' ? (options.parallel ?? 1) : 1;
    this.maxBatch = options.maxBatch ?? 64;
    this.windowMs = options.windowMs ?? 1;
    this.onBatch = options.onBatch ?? (() => undefined);
  }

  /**
   * Runs work in the next batch's transaction (in a savepoint of its own); settles after COMMIT. On
   * PostgreSQL work may run more than once (its transaction rolled back in between): it must change
   * nothing outside the transaction it is given. On PostgreSQL the units of a batch also run at once
   * (runPgWhole): work must not rely on seeing what another unit writes (unitsRunAtOnce says when;
   * throwing there has the batch run again unit by unit), and must await every query it sends.
   */
  run<T>(work: (tx: Tx) => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve, reject } as Pending<unknown>);
      if (this.draining < this.parallel) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining += 1;
    try {
      while (this.queue.length > 0) {
        // Let requests that are already in flight (parsing, authenticating) reach the queue: without
        // this pause the next transaction starts with one unit and blocks them all for its fsync.
        if (this.queue.length < this.maxBatch) await new Promise((resolve) => setTimeout(resolve, this.windowMs));
        let batch: Array<Pending<unknown>> = [];
        let outcomes: Outcome[] = [];
        const started = performance.now();
        try {
          // Taken once the connection is ours: everything that queued while we waited joins.
          outcomes = await onConnection(this.db, (conn) => {
            batch = this.queue.splice(0, this.maxBatch);
            return batch.length === 0 ? [] : isPgConn(conn) ? this.runPg(conn, batch) : this.runBatch(conn, batch);
          });
        } catch (error) {
          // BEGIN or COMMIT failed: nothing of this batch is on disk.
          for (const unit of batch) unit.reject(error);
          continue;
        }
        if (batch.length === 0) continue;
        this.onBatch(batch.length, performance.now() - started);
        this.stats.batches += 1;
        this.stats.units += batch.length;
        this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
        const again: Array<Pending<unknown>> = [];
        batch.forEach((unit, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) unit.resolve(outcome.value);
          else if (outcome.again) again.push(unit);
          else unit.reject(outcome.error);
        });
        // First in the next batch: the locks that beat them were waiting on this one's, now released.
        this.queue.unshift(...again);
      }
    } finally {
      this.draining -= 1;
    }
  }

  /** One transaction, one savepoint per unit; throws only when BEGIN or COMMIT fails (then rolled back). */
  private async runBatch(sqlite: Sqlite, batch: Array<Pending<unknown>>): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    sqlite.prepare('BEGIN IMMEDIATE').run();
    try {
      for (const unit of batch) {
        sqlite.prepare('SAVEPOINT unit').run();
        try {
          const value = await unit.work(sqlite as Tx);
          sqlite.prepare('RELEASE unit').run();
          outcomes.push({ ok: true, value });
        } catch (error) {
          sqlite.prepare('ROLLBACK TO unit').run();
          sqlite.prepare('RELEASE unit').run();
          outcomes.push({ ok: false, error });
        }
      }
      sqlite.prepare('COMMIT').run();
    } catch (error) {
      if (sqlite.inTransaction) sqlite.prepare('ROLLBACK').run();
      throw error;
    }
    return outcomes;
  }

  /**
   * PostgreSQL: the batch first runs as one plain transaction, no savepoint per unit: a savepoint is
   * a round trip per unit and a subtransaction on the server, about a fifth of a creation's time
   * (BENCHMARKS.md, "PostgreSQL"). Most units succeed (a replay is an answer); a unit fails on a
   * duplicate order id, a reused key, an unknown or archived wallet, the pool share, a rate limit or
   * a database error. When one does, the whole transaction is rolled back, nothing of it is kept, and
   * the same batch runs again with a savepoint per unit (runPgBatch), as do the next CAREFUL_BATCHES
   * batches: a client sending failing requests costs at most one batch run twice in that many.
   */
  private async runPg(conn: PgConn, batch: Array<Pending<unknown>>): Promise<Outcome[]> {
    if (this.careful > 0) {
      this.careful -= 1;
      return this.runPgBatch(conn, batch);
    }
    const outcomes = await this.runPgWhole(conn, batch);
    if (outcomes) return outcomes;
    this.stats.redone += 1;
    this.careful = CAREFUL_BATCHES;
    return this.runPgBatch(conn, batch);
  }

  /**
   * The batch in one transaction without savepoints, its units all at once; undefined when a unit
   * failed (then all of it is rolled back).
   *
   * Each unit is started in batch order and runs until it awaits its first query; the connection
   * sends the queries one at a time in the order asked (pgClientConn), so while the server executes
   * one unit's statement, Node runs another's JavaScript, instead of each waiting for the other.
   * Measured: one instance's creations 1.2-1.4 times as fast (BENCHMARKS.md, "PostgreSQL"). The
   * statements of the units interleave: a unit does not see what another of the batch has not yet
   * written. The creation's allocation knows (unitsRunAtOnce); a duplicate key between two units
   * (one Idempotency-Key sent twice at once) fails the batch, which then runs again unit by unit.
   */
  private async runPgWhole(conn: PgConn, batch: Array<Pending<unknown>>): Promise<Outcome[] | undefined> {
    this.stats.wholeBatches += 1;
    await conn.query('BEGIN', []);
    try {
      const tx = { ...conn } as Tx;
      // A unit alone sees everything: it runs as before (no RunAlone for it).
      if (batch.length > 1) atOnce.add(tx);
      const settled = await Promise.allSettled(batch.map(async (unit) => unit.work(tx)));
      if (settled.some((s) => s.status === 'rejected')) {
        await conn.query('ROLLBACK', []);
        return undefined;
      }
      await commit(conn, 'COMMIT');
      return settled.map((s) => ({ ok: true, value: (s as PromiseFulfilledResult<unknown>).value }));
    } catch (error) {
      await conn.query('ROLLBACK', []).catch(() => undefined);
      throw error;
    }
  }

  /**
   * The same on PostgreSQL. A unit that lost a deadlock is rolled back to its savepoint and queued
   * for the next batch: run again in this transaction it would wait again on the same locks, held
   * by the other transaction that waits on this one's earlier units (two instances' batches taking
   * invoice_stats rows of two merchants in opposite orders, or the scanner's confirmation). A unit
   * that met a unique key taken meanwhile runs again at once (it then sees the row: a replay).
   *
   * Round trips: what ends one unit and starts the next goes as one simple-protocol query string
   * ("BEGIN; SAVEPOINT unit" first, then "RELEASE SAVEPOINT unit; SAVEPOINT unit" after a unit that
   * succeeded, or "ROLLBACK TO SAVEPOINT unit" after one that failed, which keeps the savepoint for
   * the next; COMMIT last, after "ROLLBACK TO SAVEPOINT unit" when the last unit failed): a batch of
   * n units costs n + 1 of them besides the units' own queries, not 2n + 2. A unit's failure is
   * rolled back before anything else runs in the transaction; a failure of such a string (the
   * connection) fails the whole batch, as a failed BEGIN or COMMIT does.
   */
  private async runPgBatch(conn: PgConn, batch: Array<Pending<unknown>>): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    let next = 'BEGIN; SAVEPOINT unit';
    try {
      for (const unit of batch) {
        for (let attempt = 1; ; attempt++) {
          await conn.query(next, []);
          try {
            const value = await unit.work(conn as Tx);
            next = 'RELEASE SAVEPOINT unit; SAVEPOINT unit';
            outcomes.push({ ok: true, value });
            break;
          } catch (error) {
            next = 'ROLLBACK TO SAVEPOINT unit';
            if (attempt === 1 && isUniqueViolation(error)) {
              this.stats.reruns += 1;
              continue;
            }
            // A deadlock lost, or a prepared statement the server forgot (every unit would fail
            // alike on this connection, which is dropped: isStale): run again in the next batch.
            const count = isRetryable(error) ? 'deadlocks' : isStaleStatement(error) ? 'stale' : undefined;
            const again = count !== undefined && (unit[count] ?? 0) < AGAIN_AT_MOST[count];
            if (again) {
              this.stats.reruns += 1;
              unit[count] = (unit[count] ?? 0) + 1;
            }
            outcomes.push(again ? { ok: false, error, again } : { ok: false, error });
            break;
          }
        }
      }
      await commit(conn, next.startsWith('ROLLBACK') ? `${next}; COMMIT` : 'COMMIT');
    } catch (error) {
      await conn.query('ROLLBACK', []).catch(() => undefined);
      throw error;
    }
    return outcomes;
  }
}

/** The transactions whose units run at once (runPgWhole): each batch's own handle. */
const atOnce = new WeakSet<Tx>();

/**
 * Whether `tx` is a group-commit transaction whose units run at the same time: a unit's reads may
 * not see what another unit of it is about to write.
 */
export function unitsRunAtOnce(tx: Tx): boolean {
  return atOnce.has(tx);
}

/**
 * COMMIT that refuses a rolled-back transaction: PostgreSQL answers COMMIT on a transaction a failed
 * statement aborted with a ROLLBACK, not an error. A unit that caught a database error itself and
 * returned would otherwise leave every unit of the batch answered while nothing was stored.
 */
async function commit(conn: PgConn, text: string): Promise<void> {
  const done = await conn.query(text, []);
  if (done.command === 'ROLLBACK') throw new Error('PostgreSQL rolled the batch back at COMMIT: a statement in it had failed');
}
