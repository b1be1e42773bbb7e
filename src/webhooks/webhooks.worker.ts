/**
 * The delivery worker. Each pass runs one short transaction that records the attempts finished
 * since the last pass and claims due deliveries up to the free slots (one fsync per pass, however
 * many deliveries move), then starts the claimed attempts without waiting for them. A receiver that
 * hangs holds one slot until the time-out, never the pass; each webhook may use only a few slots,
 * so one slow endpoint cannot hold up the others. A finished attempt wakes the loop
 * (deps.deliveriesQueued) so its outcome is recorded and its slot reused at once.
 */
import { writeTransaction } from '../db/database.js';
import type { AppDeps } from '../deps.js';
import { createDeliverer, type Deliverer, type Performed } from './deliverer.js';
import { claimDelivery, findDueDeliveries } from './webhooks.repo.js';

export interface DeliveryWorkerOptions {
  /** Attempts in flight at once, over all webhooks. */
  concurrency?: number;
  /** Attempts in flight at once to one webhook. */
  perWebhook?: number;
}

export const DEFAULT_CONCURRENCY = 16;
export const DEFAULT_PER_WEBHOOK = 4;
/**
 * How long a finished attempt waits for others before the pass that records it: attempts that end
 * close together share one commit (one fsync), which is what bounds throughput; a few ms of latency
 * is nothing to a webhook.
 */
const PASS_WINDOW_MS = 5;

export interface DeliveryWorker {
  /** One pass: records finished attempts, claims and starts what is due; true when it did anything. */
  runOnce(): Promise<boolean>;
  /** Resolves when every attempt started so far has finished and been recorded (claims nothing new). */
  idle(): Promise<void>;
  /** Runs passes until nothing is due, in flight or unrecorded (tests, benchmarks). */
  drain(): Promise<void>;
  readonly inFlight: number;
  readonly deliverer: Deliverer;
}

export function createDeliveryWorker(deps: AppDeps, options: DeliveryWorkerOptions = {}): DeliveryWorker {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const perWebhook = options.perWebhook ?? DEFAULT_PER_WEBHOOK;
  const deliverer = createDeliverer(deps);
  const running = new Map<string, Promise<void>>();
  const perWebhookCount = new Map<string, number>();
  /** Attempts that have run and wait for the next pass to record them (still `sending` in the database). */
  let finished: Performed[] = [];
  let wakeTimer: NodeJS.Timeout | undefined;
  const wakeSoon = (): void => {
    wakeTimer ??= setTimeout(() => {
      wakeTimer = undefined;
      deps.deliveriesQueued.notify();
    }, PASS_WINDOW_MS);
  };

  const start = (id: string, webhookId: string): void => {
    perWebhookCount.set(webhookId, (perWebhookCount.get(webhookId) ?? 0) + 1);
    const p = deliverer
      .perform(id)
      .then(
        (done) => {
          if (done) finished.push(done);
        },
        // perform() turns every send failure into an outcome; this is a database failure. The
        // delivery stays `sending` and crash recovery sends it again at the next start.
        (err: unknown) => deps.log.error({ err, delivery_id: id }, 'webhook attempt could not run'),
      )
      .finally(() => {
        running.delete(id);
        const left = (perWebhookCount.get(webhookId) ?? 1) - 1;
        if (left > 0) perWebhookCount.set(webhookId, left);
        else perWebhookCount.delete(webhookId);
        wakeSoon();
      });
    running.set(id, p);
  };

  const pass = async (claim: boolean): Promise<boolean> => {
    const batch = finished;
    finished = [];
    const free = claim ? concurrency - running.size : 0;
    if (batch.length === 0 && free <= 0) return false;
    const saturated = [...perWebhookCount].filter(([, n]) => n >= perWebhook).map(([w]) => w);
    const now = deps.clock.now();
    let results: Awaited<ReturnType<Deliverer['recordIn']>>;
    let claimed: Array<{ id: string; webhookId: string }> = [];
    try {
      ({ results, claimed } = await writeTransaction(deps.db, async (trx) => {
        const recorded = await deliverer.recordIn(trx, batch, now);
        const picked: Array<{ id: string; webhookId: string }> = [];
        if (free > 0) {
          const planned = new Map(perWebhookCount);
          for (const c of await findDueDeliveries(trx, now, Math.max(free * perWebhook, 32), saturated)) {
            if (picked.length >= free) break;
            const n = planned.get(c.webhookId) ?? 0;
            if (n >= perWebhook) continue;
            // Guarded on `pending` and due, so a delivery is never sent twice at once.
            if (!(await claimDelivery(trx, c.id, ['pending'], now, true))) continue;
            planned.set(c.webhookId, n + 1);
            picked.push(c);
          }
        }
        return { results: recorded, claimed: picked };
      }));
    } catch (err) {
      // Nothing was written: the outcomes wait for the next pass (their deliveries are still `sending`).
      finished = batch.concat(finished);
      throw err;
    }
    deliverer.logRecorded(batch, results);
    for (const { id, webhookId } of claimed) start(id, webhookId);
    return batch.length > 0 || claimed.length > 0;
  };

  const settle = (): Promise<void> => new Promise((r) => setTimeout(r, PASS_WINDOW_MS));

  return {
    runOnce: () => pass(true),
    async idle() {
      while (running.size > 0 || finished.length > 0) {
        await Promise.all([...running.values()]);
        await pass(false);
      }
    },
    async drain() {
      for (;;) {
        const did = await pass(true);
        if (!did && running.size === 0 && finished.length === 0) return;
        if (!did) await Promise.race([...running.values()]);
        // Let attempts finishing close together join the next pass.
        await settle();
      }
    },
    get inFlight() {
      return running.size;
    },
    deliverer,
  };
}
