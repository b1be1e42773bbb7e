/** The background jobs `serve` runs. Each feature adds its worker here; tests call runOnce directly. */
import type { AppDeps } from './app-deps.js';
import type { Worker } from './lib/loop.js';
import { accountsWorker } from './accounts/accounts.worker.js';
import { paymentNoticesWorker } from './email/payment-notices.js';
import { chainWorker } from './chain/chain.worker.js';
import { maintenanceWorker } from './db/maintenance.worker.js';
import { resetSendingDeliveries } from './webhooks/webhooks.repo.js';
import { createDeliveryWorker } from './webhooks/webhooks.worker.js';
import { recoverShopNotifies, shopNotifyWorker } from './shops/shop-notify.worker.js';
import { ratesWorker } from './pricing/rates.worker.js';
import { purgeExpiredIdempotencyKeys } from './http/idempotency.js';
import { MINUTE } from './lib/clock.js';
import { telegramWorkers } from './telegram/telegram.worker.js';

export function createWorkers(deps: AppDeps): Worker[] {
  const deliveries = createDeliveryWorker(deps);
  return [
    accountsWorker(deps),
    paymentNoticesWorker(deps),
    maintenanceWorker(deps),
    chainWorker(deps),
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
        deps.deliveriesQueued.connect(() => loop.wake());
      },
      drain: deliveries.idle,
    },
    shopNotifyWorker(deps),
    // Telegram notices, only when notify.telegram_bot_token is set.
    ...telegramWorkers(deps),
  ];
}

/** Repairs left by a crash, run once before the workers start (e.g. deliveries stuck in `sending`). */
export async function recoverAfterCrash(deps: AppDeps): Promise<void> {
  // Nothing is in flight before the workers start: an attempt cut off by the crash may or may not
  // have reached the receiver, so it is sent again (at least once; receivers dedupe by event id).
  const reset = await resetSendingDeliveries(deps.db, deps.clock.now());
  if (reset > 0) deps.log.warn({ deliveries: reset }, 'crash recovery: deliveries left in sending are pending again');
  await recoverShopNotifies(deps);
}
