/** The dependency bag every handler, service and worker receives, and the one place that builds it. */
import { createWatcherStatus } from './system/live-payments.js';
import type { Config } from './config.js';
import type { Db, OpenedDatabase, Sqlite } from './db/database.js';
import { RateLimiter } from './http/rate-limit.js';
import { systemClock, type Clock } from './lib/clock.js';
import type { Log } from './lib/log.js';
import { Notifier } from './lib/notifier.js';
import { createMailer, type Mailer } from './email/mailer.js';
import { createChainRuntime, type ChainRuntime } from './chain/chain.worker.js';
import { registerChainMetrics } from './chain/chain.health.js';
import type { WatcherStatus } from './chain/watcher-status.js';
import { createMetrics, registerCoreGauges, type Metrics } from './ops/metrics.js';
import { VERSION } from './version.js';
import { systemLookup, type HostLookup } from './webhooks/url-policy.js';
import { RateBook } from './pricing/rate-book.js';
import { registerPricingMetrics } from './pricing/pricing.metrics.js';

/**
 * Everything a handler, service or worker may use. Passed explicitly (no module state): features
 * add their own dependencies here.
 */
export interface AppDeps {
  db: Db;
  /** The better-sqlite3 handle (SQLite only; reading it on PostgreSQL throws): SQLite-only tools and tests. */
  readonly sqlite: Sqlite;
  config: Config;
  clock: Clock;
  log: Log;
  rateLimiter: RateLimiter;
  /** New deliveries were queued: the delivery worker (connected by serve) looks now instead of at its next tick. */
  deliveriesQueued: Notifier;
  watcherStatus: WatcherStatus;
  /** The chain watcher's TRON client and retry state. */
  chain: ChainRuntime;
  mailer: Mailer;
  /** Prometheus registry and helpers (src/ops/metrics.ts); features may add their own metrics. */
  metrics: Metrics;
  /** Name resolution for webhook targets (the system resolver; tests inject their own DNS). */
  dnsLookup: HostLookup;
  /** The fiat rates the background fetcher last read (src/pricing/); invoice creation reads them. */
  rates: RateBook;
}

export function createDeps(opts: { config: Config; database: OpenedDatabase; log: Log; clock?: Clock; mailer?: Mailer }): AppDeps {
  const clock = opts.clock ?? systemClock;
  const deps: AppDeps = {
    db: opts.database.db,
    get sqlite() {
      return opts.database.sqlite;
    },
    config: opts.config,
    clock,
    log: opts.log,
    rateLimiter: new RateLimiter(clock),
    deliveriesQueued: new Notifier(),
    watcherStatus: createWatcherStatus(clock),
    chain: createChainRuntime(opts.config),
    mailer: opts.mailer ?? createMailer(opts.config, opts.log),
    metrics: createMetrics({ version: VERSION, log: opts.log }),
    dnsLookup: systemLookup,
    rates: new RateBook(opts.config.pricing),
  };
  registerCoreGauges(deps.metrics, deps);
  registerChainMetrics(deps.metrics, deps);
  registerPricingMetrics(deps.metrics, deps);
  return deps;
}
