/** Builds the dependency bag (its type is src/app-deps.ts): the one place that does. */
import { createWatcherStatus } from './system/live-payments.js';
import type { Config } from './config.js';
import type { OpenedDatabase } from './db/database.js';
import type { AppDeps } from './app-deps.js';
import { RateLimiter } from './http/rate-limit.js';
import { systemClock, type Clock } from './lib/clock.js';
import type { Log } from './lib/log.js';
import { Notifier } from './lib/notifier.js';
import { createMailer, type Mailer } from './email/mailer.js';
import { createChainRuntime } from './chain/chain.worker.js';
import type { Watches } from './watches.js';
import { registerChainMetrics } from './chain/chain.health.js';
import { registerNetworkMetrics } from './system/networks.metrics.js';
import { disabledMetrics, registerCoreGauges, type Metrics } from './ops/metrics.js';
import { systemLookup } from './webhooks/url-policy.js';
import { RateBook } from './pricing/rate-book.js';
import { registerPricingMetrics } from './pricing/pricing.metrics.js';
import { createTelegramRuntime } from './telegram/telegram.runtime.js';

/**
 * `metrics`: prom-client's (src/ops/prometheus.ts), which the caller loads when it will serve or read
 * them (`serve` with metrics.enabled; the tests); without it, the stand-ins that keep nothing.
 */
export function createDeps(opts: {
  config: Config;
  database: OpenedDatabase;
  log: Log;
  clock?: Clock;
  mailer?: Mailer;
  metrics?: Metrics;
  /** The watchers of the networks beside TRON (src/watches.ts, loadWatches); needed when any is configured. */
  watches?: Pick<Watches, 'evm' | 'accounts'>;
}): AppDeps {
  const clock = opts.clock ?? systemClock;
  if (opts.config.metrics.enabled && !opts.metrics) throw new Error('createDeps: metrics.enabled needs the Prometheus metrics (createPrometheusMetrics)');
  const beside = opts.config.evmNetworks.length + opts.config.solanaNetworks.length + opts.config.tonNetworks.length;
  if (beside > 0 && !opts.watches) throw new Error('createDeps: networks beside TRON need their watchers (loadWatches)');
  const deps: AppDeps = {
    db: opts.database.db,
    get sqlite() {
      return opts.database.sqlite;
    },
    config: opts.config,
    clock,
    log: opts.log,
    // Shared buckets in the database on PostgreSQL (several instances), in memory on SQLite.
    rateLimiter: new RateLimiter(clock, opts.database.dialect === 'postgres' ? opts.database.db : undefined),
    deliveriesQueued: new Notifier(),
    watcherStatus: createWatcherStatus(clock),
    chain: createChainRuntime(opts.config),
    evm: opts.watches?.evm ?? new Map(),
    accounts: opts.watches?.accounts ?? new Map(),
    mailer: opts.mailer ?? createMailer(opts.config, opts.log),
    metrics: opts.metrics ?? disabledMetrics(),
    dnsLookup: systemLookup,
    rates: new RateBook(opts.config.pricing),
    telegram: opts.config.notify.telegram_bot_token
      ? createTelegramRuntime(opts.config.notify.telegram_bot_token, opts.config.notify.telegram_api_url)
      : undefined,
  };
  registerCoreGauges(deps.metrics, deps);
  registerChainMetrics(deps.metrics, deps);
  registerNetworkMetrics(deps.metrics, deps);
  registerPricingMetrics(deps.metrics, deps);
  return deps;
}

/** Kept for code that names the type through the builder's module; new code imports src/app-deps.ts. */
export type { AppDeps } from './app-deps.js';
