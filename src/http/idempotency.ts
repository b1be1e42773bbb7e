/**
 * Idempotency-Key on every authenticated POST (docs/api.md, Safe retries). createRouter adds the
 * optional header and this middleware to each such route, after its credential middleware, so a new
 * route gets it by construction. The first request with a key claims it for its merchant; a later
 * request with the same key and the same method, path and body gets the first 2xx answer again
 * (status, body, `Idempotent-Replayed: true`) for 24 hours; with anything else, 409
 * idempotency_key_reused. An error answer releases the key (nothing was done, so a retry runs
 * again). Answers are stored only sealed with a key derived from server.secret, since some hold a
 * secret shown once, and are deleted once expired.
 */
import { z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Db } from '../db/database.js';
import { openWithServerSecret, sealWithServerSecret, sha256Hex } from '../lib/crypto.js';
import { AppError } from '../lib/errors.js';
import { HOUR } from '../lib/clock.js';
import type { AppEnv } from './context.js';

export type { IdempotencyStore } from './context.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * HOUR;
const PURPOSE = 'idempotency-answers';
const KEY_RE = /^[\x20-\x7E]{1,255}$/;

/** An Idempotency-Key's value: 1 to 255 printable ASCII characters. */
export const IdempotencyKeyValue = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7E]+$/, 'expected 1 to 255 printable ASCII characters');

export const IdempotencyKeyHeader = z.object({
  'idempotency-key': IdempotencyKeyValue.optional().openapi({
    param: { name: 'idempotency-key', in: 'header' },
    description:
      'Optional. A retry with the same key, method, path and body within 24 hours gets the first successful answer again (with Idempotent-Replayed: true) instead of acting twice; the same key with another request is 409 idempotency_key_reused',
    example: 'a7f0c9e2-roll-2026-01-15',
  }),
});

/** Deletes expired keys (and with them every sealed answer older than 24 hours). */
export async function purgeExpiredIdempotencyKeys(db: Db, now: number): Promise<number> {
  const r = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function idempotencyLayer(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header('idempotency-key');
    const store = c.get('idempotency');
    // An absent key: no layer. A malformed one: the header's validator answers 400.
    if (key === undefined || !KEY_RE.test(key) || !store) return next();
    const merchantId = c.get('auth').merchantId;
    const now = store.now();
    const fingerprint = sha256Hex(`${c.req.method} ${c.req.path}\n${await c.req.text()}`);
    await purgeExpiredIdempotencyKeys(store.db, now);
    const row = await store.db.selectFrom('idempotency_keys').selectAll().where('merchant_id', '=', merchantId).where('key', '=', key).executeTakeFirst();
    if (row) {
      if (row.fingerprint !== fingerprint)
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with another request; use a new key for a new request');
      const answer = row.sealed_answer === null ? undefined : openWithServerSecret(store.serverSecret, PURPOSE, row.sealed_answer);
      if (row.status === null || answer === undefined)
        throw new AppError('idempotency_key_reused', 'A request with this Idempotency-Key is still being answered; retry in a moment');
      return c.body(answer, row.status as 200, { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' });
    }
    // Claimed before acting: a concurrent twin finds the row and is refused instead of acting too.
    const claimed = await store.db
      .insertInto('idempotency_keys')
      .values({ merchant_id: merchantId, key, fingerprint, status: null, sealed_answer: null, created_at: now, expires_at: now + IDEMPOTENCY_WINDOW_MS })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(claimed.numInsertedOrUpdatedRows ?? 0n) === 0)
      throw new AppError('idempotency_key_reused', 'A request with this Idempotency-Key is being answered; retry in a moment');
    const release = () => store.db.deleteFrom('idempotency_keys').where('merchant_id', '=', merchantId).where('key', '=', key).execute();
    try {
      await next();
    } catch (err) {
      await release();
      throw err;
    }
    if (c.res.status >= 200 && c.res.status < 300 && !c.error) {
      const text = await c.res.clone().text();
      await store.db
        .updateTable('idempotency_keys')
        .set({ status: c.res.status, sealed_answer: sealWithServerSecret(store.serverSecret, PURPOSE, text) })
        .where('merchant_id', '=', merchantId)
        .where('key', '=', key)
        .execute();
    } else {
      await release();
    }
  };
}
