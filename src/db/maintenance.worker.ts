/**
 * Keeps SQLite's query-planner statistics fresh: `PRAGMA optimize` (SQLite's advice for long-lived
 * connections) when serve starts and then hourly. It analyzes only the tables that never were or
 * whose size changed a lot since, reading at most analysis_limit rows per index: milliseconds on a
 * small database, ~0.3 s once on 1 000 000 invoices. Without statistics SQLite may walk a full
 * index where a small partial one answers: listing the watched addresses took 0.65 s instead of
 * 0.1 ms at 1 000 000 invoices, blocking the event loop on every watcher pass.
 *
 * On PostgreSQL, autovacuum keeps the statistics; this worker (in every instance) forgets the shared
 * rate-limit buckets untouched for a minute instead (src/db/rate-buckets.ts).
 */
import { HOUR, type Clock } from '../lib/clock.js';
import type { Worker } from '../lib/loop.js';
import { dialectOf, onConnection, type Db, type Sqlite } from './database.js';
import { forgetFullBuckets } from './rate-buckets.js';

type Deps = { db: Db; readonly sqlite: Sqlite; clock: Clock };

export async function runOnce(deps: Pick<Deps, 'db' | 'sqlite' | 'clock'>): Promise<boolean> {
  // PostgreSQL's autovacuum keeps its statistics itself.
  if (dialectOf(deps.db) === 'postgres') {
    await forgetFullBuckets(deps.db, deps.clock.now());
    return false;
  }
  await onConnection(deps.db, () => {
    deps.sqlite.exec('PRAGMA analysis_limit = 400');
    // 0x10000: every table, not only those this connection has used; 0x02: analyze where useful.
    deps.sqlite.exec('PRAGMA optimize = 0x10002');
  });
  return false;
}

export function maintenanceWorker(deps: Deps): Worker {
  return { name: 'db-maintenance', intervalMs: HOUR, runOnce: () => runOnce(deps) };
}
