/**
 * Group commit (decisions.md section 2): units of work that arrive while a transaction is running
 * wait in a queue and are then run together in one BEGIN IMMEDIATE transaction, one fsync for the
 * whole batch instead of one per request. Each unit runs in its own savepoint, so a unit that
 * throws (a 409, a constraint) is rolled back alone and the rest of the batch commits. A caller's
 * promise settles only after COMMIT: an answered 201 is on disk. Before each batch the queue waits
 * `windowMs` (1 ms, small beside one fsync) so concurrent requests still being parsed and
 * authenticated can join, instead of each starting a transaction of one.
 */
import { sql } from 'kysely';
import { writeTransaction, type Db, type Trx } from '../db/database.js';

interface Pending<T> {
  work: (trx: Trx) => Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommit {
  private queue: Array<Pending<unknown>> = [];
  private draining = false;
  /** Batches committed and units run, for the benchmark and tests. */
  readonly stats = { batches: 0, units: 0, largestBatch: 0 };

  constructor(
    private readonly db: Db,
    /** Caps how long one transaction holds the single connection (reads wait meanwhile). */
    private readonly maxBatch = 64,
    private readonly windowMs = 1,
  ) {}

  run<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve, reject } as Pending<unknown>);
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        // Let requests that are already in flight (parsing, authenticating) reach the queue: without
        // this pause the next transaction starts with one unit and blocks them all for its fsync.
        if (this.queue.length < this.maxBatch) await new Promise((resolve) => setTimeout(resolve, this.windowMs));
        let batch: Array<Pending<unknown>> = [];
        const outcomes: Outcome[] = [];
        try {
          await writeTransaction(this.db, async (trx) => {
            // Taken once the write lock is held: everything that queued while we waited joins.
            batch = this.queue.splice(0, this.maxBatch);
            for (const unit of batch) {
              await sql`SAVEPOINT unit`.execute(trx);
              try {
                const value = await unit.work(trx);
                await sql`RELEASE unit`.execute(trx);
                outcomes.push({ ok: true, value });
              } catch (error) {
                await sql`ROLLBACK TO unit`.execute(trx);
                await sql`RELEASE unit`.execute(trx);
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          // BEGIN or COMMIT failed: nothing of this batch is on disk.
          for (const unit of batch) unit.reject(error);
          continue;
        }
        this.stats.batches += 1;
        this.stats.units += batch.length;
        this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
        batch.forEach((unit, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) unit.resolve(outcome.value);
          else unit.reject(outcome.error);
        });
      }
    } finally {
      this.draining = false;
    }
  }
}
