/**
 * The dependency bag every handler, service and worker receives: the type alone, so that the
 * features can name it without importing the builder (src/deps.ts) and everything it builds from.
 */
import type { Config } from './config.js';
import type { Db, Sqlite } from './db/database.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { Clock } from './lib/clock.js';
import type { Log } from './lib/log.js';
import type { Notifier } from './lib/notifier.js';
import type { Mailer } from './email/mailer.js';
import type { ChainRuntime } from './chain/chain.runtime.js';
import type { WatcherStatus } from './chain/watcher-status.js';
import type { EvmWatches } from './chains/evm/watch.js';
import type { AccountWatches } from './chains/account-watch.js';
import type { Metrics } from './ops/metrics.js';
import type { HostLookup } from './webhooks/url-policy.js';
import type { RateBook } from './pricing/rate-book.js';
import type { TelegramRuntime } from './telegram/telegram.runtime.js';

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
  /** Each enabled EVM network's watcher state: its providers' clients, health and learned range caps, and its figures. */
  evm: EvmWatches;
  /** Each enabled Solana and TON network's watcher state: its providers' readers and health, and its figures. */
  accounts: AccountWatches;
  mailer: Mailer;
  /** Prometheus registry and helpers (src/ops/metrics.ts); features may add their own metrics. */
  metrics: Metrics;
  /** Name resolution for webhook targets (the system resolver; tests inject their own DNS). */
  dnsLookup: HostLookup;
  /** The fiat rates the background fetcher last read (src/pricing/); invoice creation reads them. */
  rates: RateBook;
  /** The Telegram bot (notify.telegram_bot_token), or undefined when none is configured (src/telegram/). */
  telegram: TelegramRuntime | undefined;
}
