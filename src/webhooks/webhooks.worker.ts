/**
 * The delivery worker. Each pass runs one short transaction that records the attempts finished
 * since the last pass and claims due deliveries up to the free slots (one fsync per pass, however
 * many deliveries move), then starts the claimed attempts without waiting for them. A receiver that
 * hangs holds one slot until the time-out, never the pass. Slots are handed out fairly between
 * merchants and between the webhooks of a merchant (fair-share.ts), so one tenant's hanging
 * receivers and backlog cannot hold another tenant's deliveries back. A finished attempt wakes the
 * loop (deps.deliveriesQueued) so its outcome is recorded and its slot reused at once.
 */
import { writeTransaction, type Trx, type Tx } from '../db/database.js';
import { createDeliverer, type Deliverer, type Performed } from './deliverer.js';
import { InFlight, nextWebhook } from './fair-share.js';
import { claimDelivery, findDueOfWebhook, findDueWebhooks } from './webhooks.repo.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { HostLookup } from './url-policy.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { dnsLookup: HostLookup };

export interface DeliveryWorkerOptions {
  /** Attempts in flight at once, over all webhooks. */
  concurrency?: number;
  /** Attempts in flight at once to one webhook. */
  perWebhook?: number;
  /** Free slots kept for merchants with no attempt in flight (fair-share.ts). */
  reserve?: number;
}

export const DEFAULT_CONCURRENCY = 20;
export const DEFAULT_PER_WEBHOOK = 4;
/** A merchant alone may use DEFAULT_CONCURRENCY - DEFAULT_RESERVE = 16 slots. */
export const DEFAULT_RESERVE = 4;

interface Claimed {
  id: string;
  webhookId: string;
  merchantId: string;
}
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

export function createDeliveryWorker(deps: Deps, options: DeliveryWorkerOptions = {}): DeliveryWorker {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const limits = { perWebhook: options.perWebhook ?? DEFAULT_PER_WEBHOOK, reserve: Math.min(options.reserve ?? DEFAULT_RESERVE, concurrency - 1) };
  const deliverer = createDeliverer(deps);
  const running = new Map<string, Promise<void>>();
  const inFlight = new InFlight();
  /** The merchant that got the last slot: the round-robin starts after it. */
  let lastMerchant = '';
  /** Attempts that have run and wait for the next pass to record them (still `sending` in the database). */
  let finished: Performed[] = [];
  let wakeTimer: NodeJS.Timeout | undefined;
  const wakeSoon = (): void => {
    wakeTimer ??= setTimeout(() => {
      wakeTimer = undefined;
      deps.deliveriesQueued.notify();
    }, PASS_WINDOW_MS);
  };

  const start = ({ id, webhookId, merchantId }: Claimed): void => {
    inFlight.add(merchantId, webhookId, 1);
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
        inFlight.add(merchantId, webhookId, -1);
        wakeSoon();
      });
    running.set(id, p);
  };

  /** Claims up to `free` due deliveries, one slot at a time, in fair-share order. */
  const claimFairly = async (trx: Trx, tx: Tx, now: number, free: number): Promise<Claimed[]> => {
    const due = await findDueWebhooks(tx, now);
    const planned = inFlight.copy();
    const waiting = new Map<string, string[]>();
    const picked: Claimed[] = [];
    let candidates = due;
    while (picked.length < free) {
      const w = nextWebhook(candidates, planned, free - picked.length, limits, lastMerchant);
      if (!w) break;
      let ids = waiting.get(w.webhookId);
      if (!ids) {
        ids = await findDueOfWebhook(tx, w.webhookId, now, limits.perWebhook);
        waiting.set(w.webhookId, ids);
      }
      const id = ids.shift();
      if (id === undefined) {
        candidates = candidates.filter((c) => c !== w);
        continue;
      }
      // Guarded on `pending` and due, so a delivery is never sent twice at once.
      if (!(await claimDelivery(trx, id, ['pending'], now, true))) continue;
      planned.add(w.merchantId, w.webhookId, 1);
      lastMerchant = w.merchantId;
      picked.push({ id, webhookId: w.webhookId, merchantId: w.merchantId });
    }
    return picked;
  };

  const pass = async (claim: boolean): Promise<boolean> => {
    const batch = finished;
    finished = [];
    const free = claim ? concurrency - running.size : 0;
    if (batch.length === 0 && free <= 0) return false;
    const now = deps.clock.now();
    let results: Awaited<ReturnType<Deliverer['recordIn']>>;
    let claimed: Claimed[] = [];
    try {
      ({ results, claimed } = await writeTransaction(deps.db, async (trx, tx) => {
        const recorded = await deliverer.recordIn(trx, batch, now);
        return { results: recorded, claimed: free > 0 ? await claimFairly(trx, tx, now, free) : [] };
      }));
    } catch (err) {
      // Nothing was written: the outcomes wait for the next pass (their deliveries are still `sending`).
      finished = batch.concat(finished);
      throw err;
    }
    deliverer.logRecorded(batch, results);
    for (const c of claimed) start(c);
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
        // An attempt that finished during the pass is in `finished` and no longer running: racing an
        // empty list would wait forever, so the next pass records it instead.
        if (!did && running.size > 0) await Promise.race([...running.values()]);
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
