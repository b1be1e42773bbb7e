/**
 * The rows of an outbox (src/webhooks/outbox.ts) as the tables' owners read and write them: an
 * attempt's outcome on its row, and its history row. No SQL here: each table's queries stay with
 * its owner (webhooks.repo.ts, src/shops/shop-notifies.repo.ts).
 */
import type { AttemptColumns, DeliveryStatus } from '../db/schema.js';

/** How a row stands after an attempt. */
export interface OutboxResult {
  status: Exclude<DeliveryStatus, 'sending'>;
  attempts: number;
  nextAttemptAt: number | null;
  deliveredAt: number | null;
  lastError: string | null;
  responseStatus: number | null;
}

/** One attempt's history row, camel-cased. */
export interface AttemptRecord {
  attempt: number;
  startedAt: number;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
  /** The wait the receiver's Retry-After asked for (capped), null when none applied. */
  retryAfterMs: number | null;
  nextAttemptAt: number | null;
}

/** The columns an outcome sets on its row (for the owner's guarded UPDATE). */
export function resultColumns(r: OutboxResult, now: number) {
  return {
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: r.nextAttemptAt,
    delivered_at: r.deliveredAt,
    last_error: r.lastError,
    response_status: r.responseStatus,
    updated_at: now,
  };
}

/** A history row's columns (for the owner's INSERT), and back. */
export function attemptColumns(a: AttemptRecord): AttemptColumns {
  return {
    attempt: a.attempt,
    started_at: a.startedAt,
    duration_ms: a.durationMs,
    response_status: a.responseStatus,
    error: a.error,
    retry_after_ms: a.retryAfterMs,
    next_attempt_at: a.nextAttemptAt,
  };
}

export function toAttemptRecord(r: AttemptColumns): AttemptRecord {
  return {
    attempt: Number(r.attempt),
    startedAt: Number(r.started_at),
    durationMs: Number(r.duration_ms),
    responseStatus: r.response_status,
    error: r.error,
    retryAfterMs: r.retry_after_ms,
    nextAttemptAt: r.next_attempt_at,
  };
}
