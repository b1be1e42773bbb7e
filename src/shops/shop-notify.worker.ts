/**
 * The shops' callback worker: each pass claims the due callbacks (at most CONCURRENCY), makes their
 * attempts side by side outside any transaction, and records the outcomes in one transaction.
 * Callbacks are few (one per paid shop order), so a pass waits for its attempts; each one is bounded
 * by webhooks.timeout_seconds.
 */
import { writeTransaction } from '../db/database.js';
import type { Worker } from '../lib/loop.js';
import { claimNotify, findDueNotifies, resetSendingNotifies } from './shop-notifies.repo.js';
import { createShopNotifier, type NotifyPerformed, type ShopNotifier } from './shop-notify.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { HostLookup } from '../webhooks/url-policy.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { dnsLookup: HostLookup };

export const CONCURRENCY = 8;

/** One pass; true when it sent anything. */
export async function runShopNotifies(deps: Deps, notifier: ShopNotifier): Promise<boolean> {
  const claimed = await writeTransaction(deps.db, async (trx) => {
    const now = deps.clock.now();
    const ids: string[] = [];
    for (const id of await findDueNotifies(trx, now, CONCURRENCY)) if (await claimNotify(trx, id, ['pending'], now, true)) ids.push(id);
    return ids;
  });
  if (claimed.length === 0) return false;
  const done = (await Promise.all(claimed.map((id) => notifier.perform(id)))).filter((d): d is NotifyPerformed => d !== undefined);
  const results = await writeTransaction(deps.db, (trx) => notifier.recordIn(trx, done, deps.clock.now()));
  notifier.logRecorded(done, results);
  return true;
}

export function shopNotifyWorker(deps: Deps): Worker {
  const notifier = createShopNotifier(deps);
  return {
    name: 'shop-notifies',
    // A paid callback leaves within a second of the confirmation; retries are found the same way.
    intervalMs: 1000,
    runOnce: () => runShopNotifies(deps, notifier),
  };
}

/** Crash recovery: an attempt cut off by a crash may or may not have reached the shop, so it is made again. */
export async function recoverShopNotifies(deps: Deps, claimedBefore?: number, live?: readonly string[]): Promise<void> {
  const reset = await resetSendingNotifies(deps.db, deps.clock.now(), claimedBefore, live);
  if (reset > 0) deps.log.warn({ shop_notifies: reset }, 'crash recovery: shop callbacks left in sending are pending again');
}
