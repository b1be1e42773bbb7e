/**
 * One delivery attempt from start to finish, shared by the worker, the test endpoint and manual
 * retry: check the URL again (DNS included), sign afresh, send to the checked address, and record
 * the outcome with the retry schedule. The network part runs outside any transaction; only the
 * claim before it and the record after it write, each guarded on the status.
 */
import { writeTransaction, type Trx } from '../db/database.js';
import { toEventResponse } from '../events/events.schemas.js';
import type { AppDeps } from '../app-deps.js';
import { DAY, HOUR, MINUTE } from '../lib/clock.js';
import { parseRetryAfter } from '../lib/retry-after.js';
import { createSender, type AttemptOutcome, type Sender } from './sender.js';
import { deliveryHeaders } from './signer.js';
import { createUrlPolicy, UrlRejected, type UrlPolicy } from './url-policy.js';
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

/** Waits after attempts 1 to 10 (docs/api.md, Webhooks: receiving events): 11 attempts over about 3.9 days. */
export const RETRY_DELAYS_MS: readonly number[] = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, DAY, DAY];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Retry times vary by up to ±20% so receivers coming back from an outage are not hit all at once. */
export const DEFAULT_JITTER = 0.2;
/**
 * The receiver's Retry-After (on a 429 or a 503, RFC 6585 and RFC 9110) moves the next attempt
 * later, never earlier: the wait is the longer of our schedule's (with its jitter) and the one
 * asked for, the latter capped at the schedule's longest step (24 h). A receiver cannot stretch
 * one wait beyond what our own schedule would ever wait, and the number of attempts stays 11.
 */
export const MAX_RETRY_AFTER_MS = DAY;
const RETRY_AFTER_STATUSES = new Set([429, 503]);

const MAX_ERROR_LENGTH = 500;

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

/** An attempt that has run and awaits recording. */
export interface Performed {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  host: string;
  /** The attempt count including this one. */
  attempts: number;
  outcome: AttemptOutcome;
  /** When the attempt started (the clock) and how long it took (ms, measured); none when nothing was attempted. */
  startedAt: number;
  durationMs: number;
  /** Whether a request was attempted at all (false when the webhook was deleted before it). */
  attempted: boolean;
}

export function createDeliverer(deps: AppDeps): Deliverer {
  const policy = createUrlPolicy(deps.config, deps.dnsLookup);
  const sender: Sender = createSender(deps.config);

  const retryDelay = (attemptsMade: number): number | undefined => {
    const base = RETRY_DELAYS_MS[attemptsMade - 1];
    if (base === undefined) return undefined;
    return Math.round(base * (1 + DEFAULT_JITTER * (2 * Math.random() - 1)));
  };

  const perform = async (id: string): Promise<Performed | undefined> => {
    const ctx = await loadAttemptContext(deps.db, id);
    if (!ctx || ctx.delivery.status !== 'sending') return undefined;
    const { delivery, webhook, event } = ctx;
    if (!webhook.active) {
      // Deleted between the claim and now: nothing is sent and the delivery is cancelled when this
      // is recorded (resultOf); the attempt count stays, since no attempt was made.
      const outcome: AttemptOutcome = { ok: false, responseStatus: null, error: 'not sent: the webhook was deleted' };
      const startedAt = deps.clock.now();
      return {
        id,
        webhookId: webhook.id,
        eventId: event.id,
        eventType: event.type,
        host: '',
        attempts: delivery.attempts,
        outcome,
        startedAt,
        durationMs: 0,
        attempted: false,
      };
    }
    let outcome: AttemptOutcome;
    let host = '';
    const startedAt = deps.clock.now();
    const started = performance.now();
    try {
      const target = await policy.check(webhook.url);
      host = target.hostname;
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
      outcome = await sender.send(target, rawBody, headers);
    } catch (err) {
      if (err instanceof UrlRejected) {
        // The name now points somewhere it may not (or nowhere): a failed attempt, nothing sent.
        outcome = { ok: false, responseStatus: null, error: `not sent: ${err.message}` };
      } else {
        // Still recorded as an attempt, so the delivery cannot stay `sending` until the next start.
        deps.log.error({ err, delivery_id: id }, 'webhook attempt crashed');
        outcome = { ok: false, responseStatus: null, error: 'internal error while sending; see the server log' };
      }
    }
    const durationMs = Math.round(performance.now() - started);
    return {
      id,
      webhookId: webhook.id,
      eventId: event.id,
      eventType: event.type,
      host,
      attempts: delivery.attempts + 1,
      outcome,
      startedAt,
      durationMs,
      attempted: true,
    };
  };

  /** The wait a 429 or 503 asked for (capped), if any. */
  const askedWait = (outcome: AttemptOutcome, now: number): number | undefined => {
    if (outcome.responseStatus === null || !RETRY_AFTER_STATUSES.has(outcome.responseStatus)) return undefined;
    const asked = parseRetryAfter(outcome.retryAfter, now);
    return asked === undefined ? undefined : Math.min(asked, MAX_RETRY_AFTER_MS);
  };

  const resultOf = async (trx: Trx, done: Performed, now: number): Promise<AttemptResult> => {
    const { outcome, attempts } = done;
    if (outcome.ok) {
      return { status: 'delivered', attempts, nextAttemptAt: null, deliveredAt: now, lastError: null, responseStatus: outcome.responseStatus };
    }
    const base = { attempts, deliveredAt: null, lastError: (outcome.error ?? 'failed').slice(0, MAX_ERROR_LENGTH), responseStatus: outcome.responseStatus };
    // Deleted while this attempt was in flight: it gets nothing more.
    if (!(await isWebhookActive(trx, done.webhookId))) return { status: 'cancelled', nextAttemptAt: null, ...base };
    const scheduled = attempts < MAX_ATTEMPTS ? retryDelay(attempts) : undefined;
    if (scheduled === undefined) return { status: 'failed', nextAttemptAt: null, ...base };
    const delay = Math.max(scheduled, askedWait(outcome, now) ?? 0);
    return { status: 'pending', nextAttemptAt: now + delay, ...base };
  };

  const recordIn = async (trx: Trx, batch: readonly Performed[], now: number): Promise<Array<AttemptResult | undefined>> => {
    const out: Array<AttemptResult | undefined> = [];
    for (const done of batch) {
      const result = await resultOf(trx, done, now);
      const recorded = await completeAttempt(trx, done.id, result, now);
      if (recorded && done.attempted) {
        await insertDeliveryAttempt(trx, {
          deliveryId: done.id,
          attempt: done.attempts,
          startedAt: done.startedAt,
          durationMs: done.durationMs,
          responseStatus: done.outcome.responseStatus,
          error: result.lastError,
          retryAfterMs: askedWait(done.outcome, now) ?? null,
          nextAttemptAt: result.nextAttemptAt,
        });
      }
      out.push(recorded ? result : undefined);
    }
    return out;
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
      const results = await writeTransaction(deps.db, (trx) => recordIn(trx, [done], deps.clock.now()));
      logRecorded([done], results);
    }
    return findDeliveryById(deps.db, id);
  };

  return {
    policy,
    claim: (id, from) => claimDelivery(deps.db, id, from, deps.clock.now(), false),
    perform,
    recordIn,
    logRecorded,
    attempt,
  };
}
