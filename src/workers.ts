/**
 * The background jobs `serve` runs. Each feature adds its worker here; tests call runOnce directly.
 * With several instances on one PostgreSQL database, the chain scanner and the EVM watchers (with the expiry they do), the
 * payment-notice mailer and the Telegram bot's two workers run in one instance at a time, each under a
 * leader lease (src/db/leader.ts);
 * the rest runs everywhere (docs/architecture.md, "Once or everywhere").
 */
import type { AppDeps } from './app-deps.js';
import type { Worker } from './lib/loop.js';
import { accountsWorker } from './accounts/accounts.worker.js';
import { paymentNoticesWorker } from './payments/payment-notices.js';
import { chainWorker } from './chain/chain.worker.js';
import { NO_WATCHES, type Watches } from './watches.js';
import { maintenanceWorker } from './db/maintenance.worker.js';
import { createLease, leaderOnly, liveInstances, whileHeld } from './db/leader.js';
import { LOCK_KEYS } from './db/postgres.js';
import { crossInstanceSignal } from './db/signals.js';
import { dialectOf } from './db/database.js';
import { resetSendingDeliveries } from './webhooks/webhooks.repo.js';
import { createDeliveryWorker } from './webhooks/webhooks.worker.js';
import { recoverShopNotifies, shopNotifyWorker } from './shops/shop-notify.worker.js';
import { ratesWorker } from './pricing/rates.worker.js';
import { purgeExpiredIdempotencyKeys } from './http/idempotency.js';
import { MINUTE } from './lib/clock.js';
import { telegramWatcherWorker, telegramWorkers } from './telegram/telegram.worker.js';

/** The lease of each Telegram worker: getUpdates admits one reader per bot, and each notice is sent once. */
const TELEGRAM_LEASES: Record<string, number> = { 'telegram-updates': LOCK_KEYS.TELEGRAM_UPDATES, 'telegram-outbox': LOCK_KEYS.TELEGRAM_OUTBOX };

export function createWorkers(deps: AppDeps, watches: Pick<Watches, 'workers'> = NO_WATCHES): Worker[] {
  const deliveries = createDeliveryWorker(deps);
  const wakeups = crossInstanceSignal(deps.db, 'gatewayd_deliveries', deps.log);
  const several = dialectOf(deps.db) === 'postgres';
  const scanner = createLease(deps.db, LOCK_KEYS.SCANNER, 'chain-scanner', deps.log);
  return [
    accountsWorker(deps),
    leaderOnly(paymentNoticesWorker(deps), createLease(deps.db, LOCK_KEYS.MAIL, 'payment-notices', deps.log)),
    maintenanceWorker(deps),
    leaderOnly(chainWorker(deps), scanner),
    // Each EVM, Solana and TON network's watcher (loaded only when configured: src/watches.ts), in
    // the instance that holds the scanner's lease (one writer of chain_transfers and of the expiry, as for TRON).
    ...watches.workers(deps).map((w) => whileHeld(w, scanner)),
    // Fiat rates, only when [[pricing.sources]] are configured.
    ...(deps.rates.enabled ? [ratesWorker(deps)] : []),
    {
      // Replayable answers (some hold a secret shown once) live 24 hours, not longer.
      name: 'idempotency-keys',
      intervalMs: 5 * MINUTE,
      runOnce: async () => (await purgeExpiredIdempotencyKeys(deps.db, deps.clock.now())) > 0,
    },
    {
      name: 'webhooks',
      // Due retries are found within a second; new deliveries wake the loop at once.
      intervalMs: 1000,
      runOnce: deliveries.runOnce,
      onStart: (loop) => {
        deps.deliveriesQueued.connect(() => {
          loop.wake();
          wakeups.send();
        });
        void wakeups.listen(() => loop.wake());
      },
      drain: async () => {
        await deliveries.idle();
        await wakeups.close();
      },
    },
    ...(several ? [staleSendingWorker(deps)] : []),
    shopNotifyWorker(deps),
    // Telegram notices, only when notify.telegram_bot_token is set: the bot's update reader and the
    // outbox each in one instance (a lease each), the watcher-down check with the scanner.
    ...telegramWorkers(deps).map((w) => leaderOnly(w, createLease(deps.db, TELEGRAM_LEASES[w.name]!, w.name, deps.log))),
    ...(deps.telegram ? [whileHeld(telegramWatcherWorker(deps), scanner)] : []),
  ];
}

/**
 * Several instances: a webhook delivery or a shop's callback left in `sending` by an instance that
 * died is pending again within 5 s once that instance has no connection to the database
 * (claimed_by, liveInstances), or in any case once it is older than any attempt can take (the
 * receivers' time-out plus a minute).
 */
export function staleSendingWorker(deps: AppDeps): Worker {
  return {
    name: 'webhooks-abandoned',
    intervalMs: 5_000,
    runOnce: async () => {
      const now = deps.clock.now();
      const reset = await resetAbandonedSends(deps, now, now - longestAttemptMs(deps));
      if (reset > 0) deps.log.warn({ deliveries: reset }, 'deliveries left in sending by a stopped instance are pending again');
      return false;
    },
  };
}

/** Longer than any attempt can take (the receivers' time-out plus a minute): a claim older than this is abandoned. */
function longestAttemptMs(deps: AppDeps): number {
  return deps.config.webhooks.timeout_seconds * 1000 + 60_000;
}

/**
 * Webhook deliveries and shops' callbacks in `sending` that no instance can still be sending (all of
 * them without `claimedBefore`; src/db/leader.ts abandonedClaim) are pending again, due `now`. The
 * number of deliveries reset (the callbacks' reset logs itself).
 */
async function resetAbandonedSends(deps: AppDeps, now: number, claimedBefore: number | undefined): Promise<number> {
  const live = await liveInstances(deps.db);
  const reset = await resetSendingDeliveries(deps.db, now, claimedBefore, live);
  await recoverShopNotifies(deps, claimedBefore, live);
  return reset;
}

/** Repairs left by a crash, run once before the workers start (e.g. deliveries stuck in `sending`). */
export async function recoverAfterCrash(deps: AppDeps): Promise<void> {
  // Nothing is in flight before the workers start: an attempt cut off by the crash may or may not
  // have reached the receiver, so it is sent again (at least once; receivers dedupe by event id).
  // On PostgreSQL other instances may be sending right now: only what none of them can still be
  // sending is reset (the rest is the abandoned-deliveries worker's).
  const now = deps.clock.now();
  const olderThan = dialectOf(deps.db) === 'postgres' ? now - longestAttemptMs(deps) : undefined;
  const reset = await resetAbandonedSends(deps, now, olderThan);
  if (reset > 0) deps.log.warn({ deliveries: reset }, 'crash recovery: deliveries left in sending are pending again');
}
