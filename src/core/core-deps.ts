/**
 * The parts every feature may ask for, typed from the layers below the features: the storage, the
 * configuration, the clock, the log, the rate limiter, the delivery wake-up and the metrics. A
 * function names the ones it uses (`Pick<CoreDeps, 'db' | 'clock'>`), plus any feature part it
 * needs by that feature's own type (`{ rates: RateBook }`); only the composition root
 * (src/app-deps.ts, src/deps.ts) holds them all.
 */
import type { Config } from '../config.js';
import type { Db, Sqlite } from '../db/database.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import type { Notifier } from '../lib/notifier.js';
import type { Metrics } from '../ops/metrics.js';

export interface CoreDeps {
  db: Db;
  /** The better-sqlite3 handle (SQLite only; reading it on PostgreSQL throws): SQLite-only tools and tests. */
  readonly sqlite: Sqlite;
  config: Config;
  clock: Clock;
  log: Log;
  rateLimiter: RateLimiter;
  /** New deliveries were queued: the delivery worker (connected by serve) looks now instead of at its next tick. */
  deliveriesQueued: Notifier;
  /** Prometheus registry and helpers (src/ops/metrics.ts); features may add their own metrics. */
  metrics: Metrics;
}
