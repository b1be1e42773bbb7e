/**
 * One delivery attempt from start to finish, shared by the worker, the test endpoint and manual
 * retry: check the URL again (DNS included), sign afresh, send to the checked address, and record
 * the outcome with the retry schedule. The network part runs outside any transaction; only the
 * claim before it and the record after it write, each guarded on the status.
 */
import { writeTransaction, type Trx } from '../db/database.js';
import { toEventResponse } from '../events/events.schemas.js';
import { DAY, HOUR, MINUTE } from '../lib/clock.js';
import { createOutbox, type Schedule, type Sent } from './outbox.js';
import { deliveryHeaders } from './signer.js';
import type { UrlPolicy } from './url-policy.js';
import {
  claimDelivery,
  completeAttempt,
  findDeliveryById,
  insertDeliveryAttempt,
  isWebhookActive,
  loadAttemptContext,
  type AttemptResult,
  type Delivery,
} from './webhooks.repo.js';
import type { DeliveryStatus } from '../db/schema.js';
import type { HostLookup } from './url-policy.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { dnsLookup: HostLookup };

/** Waits after attempts 1 to 10 (docs/api.md, Webhooks: receiving events): 11 attempts over about 3.9 days. */
export const RETRY_DELAYS_MS: readonly number[] = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, DAY, DAY];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Retry times vary by up to ±20% so receivers coming back from an outage are not hit all at once. */
export const DEFAULT_JITTER = 0.2;
export const WEBHOOK_SCHEDULE: Schedule = { delays: RETRY_DELAYS_MS, jitter: DEFAULT_JITTER };
/**
 * The receiver's Retry-After (on a 429 or a 503, RFC 6585 and RFC 9110) moves the next attempt
 * later, never earlier: the wait is the longer of our schedule's (with its jitter) and the one
 * asked for, the latter capped at the schedule's longest step (24 h). A receiver cannot stretch
 * one wait beyond what our own schedule would ever wait, and the number of attempts stays 11
 * (outbox.ts askedWait).
 */
export const MAX_RETRY_AFTER_MS = DAY;

export interface Deliverer {
  readonly policy: UrlPolicy;
  /** Claims a delivery for an attempt now, due or not (test event, manual retry); false if it is not in a `from` status. */
  claim(id: string, from: readonly DeliveryStatus[]): Promise<boolean>;
  /** The network part of the attempt of a claimed (`sending`) delivery; undefined if it is no longer claimed. */
  perform(id: string): Promise<Performed | undefined>;
  /** Records finished attempts inside the caller's transaction, with the retry schedule; undefined where the delivery was reset meanwhile. */
  recordIn(trx: Trx, batch: readonly Performed[], now: number): Promise<Array<AttemptResult | undefined>>;
  /** Logs what recordIn recorded, once its transaction has committed. */
  logRecorded(batch: readonly Performed[], results: ReadonlyArray<AttemptResult | undefined>): void;
  /** perform + record for one delivery; returns the delivery as recorded. */
  attempt(id: string): Promise<Delivery | undefined>;
}

/** An attempt that has run and awaits recording, with what its log lines name. */
export interface Performed extends Sent {
  webhookId: string;
  eventId: string;
  eventType: string;
  host: string;
}

export function createDeliverer(deps: Deps): Deliverer {
  const outbox = createOutbox<Performed>(deps, {
    table: {
      claim: claimDelivery,
      complete: completeAttempt,
      insertAttempt: (trx, deliveryId, a) => insertDeliveryAttempt(trx, { deliveryId, ...a }),
    },
    schedule: () => WEBHOOK_SCHEDULE,
    // Deleted while this attempt was in flight: it gets nothing more.
    owed: (trx, done) => isWebhookActive(trx, done.webhookId),
    crash: { message: 'webhook attempt crashed', idField: 'delivery_id' },
  });

  const perform = async (id: string): Promise<Performed | undefined> => {
    const ctx = await loadAttemptContext(deps.db, id);
    if (!ctx || ctx.delivery.status !== 'sending') return undefined;
    const { delivery, webhook, event } = ctx;
    const about = { id, webhookId: webhook.id, eventId: event.id, eventType: event.type };
    if (!webhook.active) {
      // Deleted between the claim and now: nothing is sent and the delivery is cancelled when this
      // is recorded (owed); the attempt count stays, since no attempt was made.
      const outcome = { ok: false, responseStatus: null, error: 'not sent: the webhook was deleted' };
      return { ...about, host: '', attempts: delivery.attempts, outcome, startedAt: deps.clock.now(), durationMs: 0, attempted: false };
    }
    const sent = await outbox.send(id, webhook.url, false, () => {
      const rawBody = JSON.stringify(toEventResponse(event));
      const now = deps.clock.now();
      const rolling = webhook.previousSecretExpiresAt !== null && webhook.previousSecretExpiresAt > now;
      const headers = deliveryHeaders({
        secret: webhook.secret,
        previousSecret: rolling ? webhook.previousSecret : null,
        eventId: event.id,
        deliveryId: delivery.id,
        attempt: delivery.attempts + 1,
        nowMs: now,
        rawBody,
      });
      return { body: rawBody, headers };
    });
    return { ...about, ...sent, attempts: delivery.attempts + 1, attempted: true };
  };

  const logRecorded = (batch: readonly Performed[], results: ReadonlyArray<AttemptResult | undefined>): void => {
    batch.forEach((done, i) => {
      const recorded = results[i];
      const log = {
        delivery_id: done.id,
        webhook_id: done.webhookId,
        event_id: done.eventId,
        event_type: done.eventType,
        host: done.host,
        attempt: done.attempts,
        response_status: done.outcome.responseStatus,
      };
      if (!recorded) {
        deps.log.warn(log, 'webhook attempt finished after its delivery was reset; the outcome is not recorded and it will be sent again');
      } else if (done.outcome.ok) {
        deps.log.info(log, 'webhook delivered');
      } else {
        deps.log.warn({ ...log, error: done.outcome.error, status: recorded.status, next_attempt_at: recorded.nextAttemptAt }, 'webhook attempt failed');
      }
    });
  };

  const attempt = async (id: string): Promise<Delivery | undefined> => {
    const done = await perform(id);
    if (done) {
      const results = await writeTransaction(deps.db, (trx) => outbox.recordIn(trx, [done], deps.clock.now()));
      logRecorded([done], results);
    }
    return findDeliveryById(deps.db, id);
  };

  return {
    policy: outbox.policy,
    claim: outbox.claim,
    perform,
    recordIn: outbox.recordIn,
    logRecorded,
    attempt,
  };
}
