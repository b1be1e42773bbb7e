/**
 * The delivery worker. Each pass claims due deliveries up to the free slots and starts their
 * attempts without waiting for them: a receiver that hangs holds one slot until the time-out, never
 * the pass, and each webhook may use only a few slots, so one slow endpoint cannot hold up the others.
 * A finished attempt frees its slot and wakes the loop (deps.hooks.deliveriesQueued).
 */
import type { AppDeps } from '../http/context.js';
import { createDeliverer, type Deliverer, type DelivererOptions } from './deliverer.js';
import { findDueDeliveries } from './webhooks.repo.js';

export interface DeliveryWorkerOptions extends DelivererOptions {
  /** Attempts in flight at once, over all webhooks. */
  concurrency?: number;
  /** Attempts in flight at once to one webhook. */
  perWebhook?: number;
}

export const DEFAULT_CONCURRENCY = 16;
export const DEFAULT_PER_WEBHOOK = 2;

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
    let free = concurrency - running.size;
    if (free <= 0) return false;
    const saturated = [...perWebhookCount].filter(([, n]) => n >= perWebhook).map(([w]) => w);
    const now = deps.clock.now();
    const due = await findDueDeliveries(deps.db, now, Math.max(free * perWebhook, 32), saturated);
    let started = 0;
    for (const { id, webhookId } of due) {
      if (free <= 0) break;
      if ((perWebhookCount.get(webhookId) ?? 0) >= perWebhook) continue;
      if (!(await deliverer.claim(id, ['pending'], true))) continue;
      start(id, webhookId);
      free -= 1;
      started += 1;
    }
    return started > 0;
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
