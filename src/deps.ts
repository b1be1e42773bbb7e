/** Builds the dependency bag every handler, service and worker receives. */
import type { Config } from './config.js';
import type { OpenedDatabase } from './db/database.js';
import type { AppDeps } from './http/context.js';
import { RateLimiter } from './http/rate-limit.js';
import { systemClock, type Clock } from './lib/clock.js';
import type { Log } from './lib/log.js';
import { createMailer, type Mailer } from './email/mailer.js';
import { createChainRuntime } from './chain/chain.worker.js';
import { registerChainMetrics } from './chain/chain.health.js';
import { createMetrics, registerCoreGauges } from './ops/metrics.js';
import { VERSION } from './version.js';
import { systemLookup } from './webhooks/url-policy.js';

export function createDeps(opts: { config: Config; database: OpenedDatabase; log: Log; clock?: Clock; mailer?: Mailer }): AppDeps {
  const clock = opts.clock ?? systemClock;
  const deps: AppDeps = {
    db: opts.database.db,
    sqlite: opts.database.sqlite,
    config: opts.config,
    clock,
    log: opts.log,
    rateLimiter: new RateLimiter(clock),
    hooks: { deliveriesQueued: () => undefined },
    watcherStatus: { state: 'stopped', lagSeconds: null },
    chain: createChainRuntime(opts.config),
    mailer: opts.mailer ?? createMailer(opts.config, opts.log),
    metrics: createMetrics({ version: VERSION, log: opts.log }),
    dnsLookup: systemLookup,
  };
  registerCoreGauges(deps.metrics, deps);
  registerChainMetrics(deps.metrics, deps);
  return deps;
}
