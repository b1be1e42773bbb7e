import type { Config } from '../config.js';
import type { Db, Sqlite } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import type { Mailer } from '../email/mailer.js';
import type { RateLimiter } from './rate-limit.js';
import type { ChainRuntime } from '../chain/chain.worker.js';
import type { Metrics } from '../ops/metrics.js';
import type { HostLookup } from '../webhooks/url-policy.js';

/** Who is calling: an owner session or an API key. Set by the auth middleware. */
export type Auth =
  | { kind: 'session'; merchantId: string; sessionHash: string }
  | { kind: 'key'; merchantId: string; keyId: string; scopes: readonly Scope[] };

export const SCOPES = ['invoices:read', 'invoices:write', 'ledger:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** Signals between the HTTP side and the background workers (no-ops until serve wires them). */
export interface Hooks {
  /** New deliveries were queued: the delivery worker should look now. */
  deliveriesQueued(): void;
}

/**
 * Everything a handler, service or worker may use. Passed explicitly (no module state):
 * features add their own dependencies here.
 */
/** The chain watcher's state as /health shows it; the watcher updates it in place. */
export interface WatcherStatus {
  state: 'stopped' | 'idle' | 'running' | 'degraded';
  /** Seconds between now and the newest moment every watched address is covered up to; null when nothing is watched. */
  lagSeconds: number | null;
  /** When the current condition (ok, behind, down) began; kept by the status object itself (src/system/live-payments.ts). */
  readonly since?: number | null;
}

export interface AppDeps {
  db: Db;
  sqlite: Sqlite;
  config: Config;
  clock: Clock;
  log: Log;
  rateLimiter: RateLimiter;
  hooks: Hooks;
  watcherStatus: WatcherStatus;
  /** The chain watcher's TRON client and retry state. */
  chain: ChainRuntime;
  mailer: Mailer;
  /** Prometheus registry and helpers (src/ops/metrics.ts); features may add their own metrics. */
  metrics: Metrics;
  /** Name resolution for webhook targets (the system resolver; tests inject their own DNS). */
  dnsLookup: HostLookup;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    auth: Auth;
  };
}
