/**
 * Who gets the next free delivery slot. A receiver that hangs holds its slot until the time-out,
 * and nothing can take it back, so fairness is decided when a slot is handed out:
 * - the merchant with the fewest attempts in flight goes first; ties go round-robin in merchant id
 *   order, starting after the merchant served last;
 * - within a merchant, its webhook with the fewest attempts in flight, then the one due longest;
 * - a webhook has at most `perWebhook` attempts in flight;
 * - a merchant that already has an attempt in flight may not take one of the last `reserve` free
 *   slots: those stay for merchants with nothing in flight, so a quiet merchant's delivery starts at
 *   once while fewer than `reserve` other merchants are each holding slots with hanging receivers.
 *   Alone, a merchant may use every slot but the reserve.
 */
import type { PendingWebhook } from './webhooks.repo.js';

export interface FairShareLimits {
  perWebhook: number;
  reserve: number;
}

/** Attempts in flight per merchant and per webhook. */
export class InFlight {
  readonly merchants = new Map<string, number>();
  readonly webhooks = new Map<string, number>();

  add(merchantId: string, webhookId: string, delta: 1 | -1): void {
    bump(this.merchants, merchantId, delta);
    bump(this.webhooks, webhookId, delta);
  }

  copy(): InFlight {
    const c = new InFlight();
    for (const [k, v] of this.merchants) c.merchants.set(k, v);
    for (const [k, v] of this.webhooks) c.webhooks.set(k, v);
    return c;
  }
}

function bump(map: Map<string, number>, key: string, delta: number): void {
  const n = (map.get(key) ?? 0) + delta;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}

/**
 * The webhook whose oldest due delivery should take the next slot, or undefined when no due webhook
 * may take one. `free` is the number of slots still free before this one is taken.
 */
export function nextWebhook(
  due: readonly PendingWebhook[],
  inFlight: InFlight,
  free: number,
  limits: FairShareLimits,
  lastMerchant: string,
): PendingWebhook | undefined {
  let best: PendingWebhook | undefined;
  let bestKey: [number, number, string, number, number] | undefined;
  for (const w of due) {
    const webhookLoad = inFlight.webhooks.get(w.webhookId) ?? 0;
    if (webhookLoad >= limits.perWebhook) continue;
    const merchantLoad = inFlight.merchants.get(w.merchantId) ?? 0;
    if (merchantLoad > 0 && free - 1 < limits.reserve) continue;
    // Merchants after the one served last come first (round-robin), then the rest.
    const key: [number, number, string, number, number] = [merchantLoad, w.merchantId > lastMerchant ? 0 : 1, w.merchantId, webhookLoad, w.due];
    if (!bestKey || compare(key, bestKey) < 0) {
      best = w;
      bestKey = key;
    }
  }
  return best;
}

function compare(a: ReadonlyArray<number | string>, b: ReadonlyArray<number | string>): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i]! < b[i]!) return -1;
    if (a[i]! > b[i]!) return 1;
  }
  return 0;
}
