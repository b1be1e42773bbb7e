/**
 * The delivery worker. Each pass claims due deliveries up to the free slots and starts their
 * attempts without waiting for them: a receiver that hangs holds one slot until the time-out, never
 * the pass, and each webhook may use only a few slots, so one slow endpoint cannot hold up the others.
 * A finished attempt frees its slot and wakes the loop (deps.hooks.deliveriesQueued).
 */
import type { AppDeps } from '../http/context.js';
import { createDeliverer, type Deliverer, type DelivererOptions } from './deliverer.js';
import { writeTransaction } from '../db/database.js';
import { claimDelivery, findDueDeliveries } from './webhooks.repo.js';

export interface DeliveryWorkerOptions extends DelivererOptions {
  /** Attempts in flight at once, over all webhooks. */
  concurrency?: number;
  /** Attempts in flight at once to one webhook. */
  perWebhook?: number;
}

export const DEFAULT_CONCURRENCY = 16;
export const DEFAULT_PER_WEBHOOK = 4;

export interface DeliveryWorker {
  /** One pass: claims and starts what is due; true when it started something. */
  runOnce(): Promise<boolean>;
  /** Resolves when every attempt started so far has been recorded. */
  idle(): Promise<void>;
  /** Runs passes until nothing is due and nothing is in flight (tests, benchmarks). */
  drain(): Promise<void>;
  readonly inFlight: number;
  readonly deliverer: Deliverer;
}

export function createDeliveryWorker(deps: AppDeps, options: DeliveryWorkerOptions = {}): DeliveryWorker {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const perWebhook = options.perWebhook ?? DEFAULT_PER_WEBHOOK;
  const deliverer = createDeliverer(deps, options);
  const running = new Map<string, Promise<void>>();
  const perWebhookCount = new Map<string, number>();

  const start = (id: string, webhookId: string): void => {
    perWebhookCount.set(webhookId, (perWebhookCount.get(webhookId) ?? 0) + 1);
    const p = deliverer
      .attempt(id)
      .then(
        () => undefined,
        (err: unknown) => deps.log.error({ err, delivery_id: id }, 'webhook attempt could not be recorded'),
      )
      .finally(() => {
        running.delete(id);
        const left = (perWebhookCount.get(webhookId) ?? 1) - 1;
        if (left > 0) perWebhookCount.set(webhookId, left);
        else perWebhookCount.delete(webhookId);
        deps.hooks.deliveriesQueued();
      });
    running.set(id, p);
  };

  const runOnce = async (): Promise<boolean> => {
    const free = concurrency - running.size;
    if (free <= 0) return false;
    const saturated = [...perWebhookCount].filter(([, n]) => n >= perWebhook).map(([w]) => w);
    const now = deps.clock.now();
    const due = await findDueDeliveries(deps.db, now, Math.max(free * perWebhook, 32), saturated);
    const chosen: typeof due = [];
    const planned = new Map(perWebhookCount);
    for (const candidate of due) {
      if (chosen.length >= free) break;
      const n = planned.get(candidate.webhookId) ?? 0;
      if (n >= perWebhook) continue;
      planned.set(candidate.webhookId, n + 1);
      chosen.push(candidate);
    }
    if (chosen.length === 0) return false;
    // One transaction (one fsync) claims the whole batch; each claim is still guarded on its row.
    const claimed = await writeTransaction(deps.db, async (trx) => {
      const ok: typeof chosen = [];
      for (const c of chosen) if (await claimDelivery(trx, c.id, ['pending'], now, true)) ok.push(c);
      return ok;
    });
    for (const { id, webhookId } of claimed) start(id, webhookId);
    return claimed.length > 0;
  };

  const idle = async (): Promise<void> => {
    while (running.size > 0) await Promise.all([...running.values()]);
  };

  return {
    runOnce,
    idle,
    async drain() {
      for (;;) {
        const started = await runOnce();
        if (!started && running.size === 0) return;
        if (!started) await Promise.race([...running.values()]);
      }
    },
    get inFlight() {
      return running.size;
    },
    deliverer,
  };
}
