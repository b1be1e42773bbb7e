/**
 * The outbox everything the gateway sends goes through: webhook deliveries (deliverer.ts) and the
 * shops' paid callbacks (src/shops/shop-notify.ts). One attempt: check the URL again (DNS included),
 * send to the checked address, time it; then, inside the caller's transaction, record the outcome
 * with the retry schedule and the receiver's Retry-After, and write its history row. Claims and
 * records are guarded on the status and name the claiming instance, so with several instances a
 * row is never sent twice at once and one left by a dead instance is found (src/db/leader.ts).
 *
 * What each outbox brings: its table (the SQL stays with the table's owner, behind OutboxTable),
 * its request (body, signature, acknowledgement) and its schedule.
 */
import type { Db, Trx } from '../db/database.js';
import type { DeliveryStatus } from '../db/schema.js';
import { AppError } from '../lib/errors.js';
import type { AttemptRecord, OutboxResult } from './outbox.model.js';
import { parseRetryAfter } from '../lib/retry-after.js';
import { createSender, type AttemptOutcome, type SendOptions, type Sender } from './sender.js';
import { createUrlPolicy, UrlRejected, type CheckedTarget, type UrlPolicy } from './url-policy.js';
import type { HostLookup } from './url-policy.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { dnsLookup: HostLookup };

/** Waits after attempts 1, 2, …: no step for an attempt means it was the last. Each wait varies by ±jitter. */
export interface Schedule {
  delays: readonly number[];
  jitter: number;
}

/** Only these statuses ask for a wait (RFC 6585, RFC 9110). */
const RETRY_AFTER_STATUSES = new Set([429, 503]);
const MAX_ERROR_LENGTH = 500;

export type { AttemptRecord, OutboxResult } from './outbox.model.js';

/** The owner's SQL of one outbox table and its history. */
export interface OutboxTable {
  /** Marks a row as in flight by this instance, guarded on `from` (and, for the scheduler, on being due). */
  claim(db: Db | Trx, id: string, from: readonly DeliveryStatus[], now: number, dueOnly: boolean): Promise<boolean>;
  /** Records an attempt's outcome, guarded on `sending` (a row reset meanwhile is left alone). */
  complete(trx: Trx, id: string, result: OutboxResult, now: number): Promise<boolean>;
  /** Writes an attempt's history row, in the transaction whose complete() recorded it. */
  insertAttempt(trx: Trx, id: string, attempt: AttemptRecord): Promise<void>;
}

/** An attempt that has run (or was skipped) and awaits recording. */
export interface Sent {
  id: string;
  /** The attempt count including this one (unchanged when nothing was attempted). */
  attempts: number;
  outcome: AttemptOutcome;
  /** When the attempt started (the clock) and how long it took (ms, measured). */
  startedAt: number;
  durationMs: number;
  /** Whether a request was attempted at all (false when nothing is owed any more). */
  attempted: boolean;
}

/** What one attempt sends, built once the URL is checked. */
export interface OutgoingRequest {
  body: string;
  headers: Record<string, string>;
  options?: SendOptions;
}

export interface OutboxOptions<S extends Sent> {
  table: OutboxTable;
  schedule(done: S): Schedule;
  /** Whether the row is still owed anything; asked when an attempt failed (false: cancelled). */
  owed(trx: Trx, done: S): Promise<boolean>;
  /** The log line of an attempt that threw (a bug, not a receiver's failure), and the field naming the row. */
  crash: { message: string; idField: string };
}

export interface Outbox<S extends Sent> {
  readonly policy: UrlPolicy;
  /** Claims a row for an attempt now, due or not (test event, manual retry); false if it is not in a `from` status. */
  claim(id: string, from: readonly DeliveryStatus[]): Promise<boolean>;
  /** One request to `url` as checked now; every failure, a crash included, is an outcome. */
  send(
    id: string,
    url: string,
    allowHttp: boolean,
    build: (target: CheckedTarget) => OutgoingRequest,
  ): Promise<{ outcome: AttemptOutcome; host: string; startedAt: number; durationMs: number }>;
  /** Records finished attempts inside the caller's transaction; undefined where the row was reset meanwhile. */
  recordIn(trx: Trx, batch: readonly S[], now: number): Promise<Array<OutboxResult | undefined>>;
}

/** The wait after `attemptsMade` attempts on this schedule, with its jitter; undefined after the last. */
export function scheduledDelay(schedule: Schedule, attemptsMade: number): number | undefined {
  const base = schedule.delays[attemptsMade - 1];
  if (base === undefined) return undefined;
  return schedule.jitter === 0 ? base : Math.round(base * (1 + schedule.jitter * (2 * Math.random() - 1)));
}

/**
 * The wait a 429 or 503 asked for, if any. It moves the next attempt later, never earlier, and is
 * capped at the schedule's longest step: a receiver cannot stretch one wait beyond what the
 * schedule itself would ever wait, and the number of attempts stays the schedule's.
 */
export function askedWait(schedule: Schedule, outcome: AttemptOutcome, now: number): number | undefined {
  if (outcome.responseStatus === null || !RETRY_AFTER_STATUSES.has(outcome.responseStatus)) return undefined;
  const asked = parseRetryAfter(outcome.retryAfter, now);
  return asked === undefined ? undefined : Math.min(asked, Math.max(...schedule.delays));
}

export function createOutbox<S extends Sent>(deps: Deps, options: OutboxOptions<S>): Outbox<S> {
  const policy = createUrlPolicy(deps.config, deps.dnsLookup);
  const sender: Sender = createSender(deps.config);
  const { table } = options;

  const send: Outbox<S>['send'] = async (id, url, allowHttp, build) => {
    let outcome: AttemptOutcome;
    let host = '';
    const startedAt = deps.clock.now();
    const started = performance.now();
    try {
      const target = await policy.check(url, { allowHttp });
      host = target.hostname;
      const request = build(target);
      outcome = await sender.send(target, request.body, request.headers, request.options);
    } catch (err) {
      if (err instanceof UrlRejected) {
        // The name now points somewhere it may not (or nowhere): a failed attempt, nothing sent.
        outcome = { ok: false, responseStatus: null, error: `not sent: ${err.message}` };
      } else {
        // Still recorded as an attempt, so the row cannot stay `sending` until the next start.
        deps.log.error({ err, [options.crash.idField]: id }, options.crash.message);
        outcome = { ok: false, responseStatus: null, error: 'internal error while sending; see the server log' };
      }
    }
    return { outcome, host, startedAt, durationMs: Math.round(performance.now() - started) };
  };

  const resultOf = async (trx: Trx, done: S, now: number): Promise<OutboxResult> => {
    const { outcome, attempts } = done;
    if (outcome.ok) {
      return { status: 'delivered', attempts, nextAttemptAt: null, deliveredAt: now, lastError: null, responseStatus: outcome.responseStatus };
    }
    const base = { attempts, deliveredAt: null, lastError: (outcome.error ?? 'failed').slice(0, MAX_ERROR_LENGTH), responseStatus: outcome.responseStatus };
    if (!(await options.owed(trx, done))) return { status: 'cancelled', nextAttemptAt: null, ...base };
    const schedule = options.schedule(done);
    const scheduled = scheduledDelay(schedule, attempts);
    if (scheduled === undefined) return { status: 'failed', nextAttemptAt: null, ...base };
    const delay = Math.max(scheduled, askedWait(schedule, outcome, now) ?? 0);
    return { status: 'pending', nextAttemptAt: now + delay, ...base };
  };

  return {
    policy,
    claim: (id, from) => table.claim(deps.db, id, from, deps.clock.now(), false),
    send,
    async recordIn(trx, batch, now) {
      const out: Array<OutboxResult | undefined> = [];
      for (const done of batch) {
        const result = await resultOf(trx, done, now);
        const recorded = await table.complete(trx, done.id, result, now);
        if (recorded && done.attempted) {
          await table.insertAttempt(trx, done.id, {
            attempt: done.attempts,
            startedAt: done.startedAt,
            durationMs: done.durationMs,
            responseStatus: done.outcome.responseStatus,
            error: result.lastError,
            retryAfterMs: askedWait(options.schedule(done), done.outcome, now) ?? null,
            nextAttemptAt: result.nextAttemptAt,
          });
        }
        out.push(recorded ? result : undefined);
      }
      return out;
    },
  };
}

/**
 * Manual retry, first half: only a `failed` or `pending` row may be retried (409
 * delivery_not_retryable otherwise), and it is claimed for this attempt, so a retry never runs
 * beside the worker's. `ready` runs between the two checks (e.g. "is its webhook still active").
 */
export async function claimForRetry(
  outbox: Pick<Outbox<Sent>, 'claim'>,
  row: { id: string; status: DeliveryStatus },
  noun: string,
  ready?: () => Promise<void>,
): Promise<void> {
  if (row.status !== 'failed' && row.status !== 'pending') {
    throw new AppError('delivery_not_retryable', `A ${row.status} ${noun} cannot be retried; only failed or pending ones can`);
  }
  await ready?.();
  if (!(await outbox.claim(row.id, ['failed', 'pending']))) {
    throw new AppError('delivery_not_retryable', `This ${noun} is being sent right now or has changed; reload it`);
  }
}
