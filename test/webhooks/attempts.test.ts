import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRetryAfter } from '../../src/lib/retry-after.js';
import { DEFAULT_JITTER, MAX_RETRY_AFTER_MS, RETRY_DELAYS_MS } from '../../src/webhooks/deliverer.js';
import { listDeliveryAttempts } from '../../src/webhooks/webhooks.repo.js';
import { createDeliveryWorker } from '../../src/webhooks/webhooks.worker.js';
import { deliveryOf, receiverAppForFile, registerWebhook, storeEvent } from './support.js';

const app = receiverAppForFile();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

test('Retry-After: seconds or an HTTP-date; anything else is ignored', () => {
  const now = Date.UTC(2026, 10, 26, 12, 0, 0);
  assert.equal(parseRetryAfter('120', now), 120_000);
  assert.equal(parseRetryAfter(' 0 ', now), 0);
  assert.equal(parseRetryAfter('Thu, 26 Nov 2026 12:30:00 GMT', now), 30 * MINUTE);
  assert.equal(parseRetryAfter('Thu, 26 Nov 2026 11:00:00 GMT', now), 0, 'a date already past: no wait');
  for (const bad of [undefined, null, '', '-5', '1.5', 'soon', '2026-11-26T12:30:00Z', 'Thu, 26 Nov 2026 12:30:00 PST']) {
    assert.equal(parseRetryAfter(bad, now), undefined, String(bad));
  }
});

test('every attempt leaves a history row, and 429/503 Retry-After moves the next attempt later, never earlier, capped at 24 h', async () => {
  const { rx, t, owner } = app;
  const worker = createDeliveryWorker(t.deps);
  const hook = await registerWebhook(owner.client, rx.url('/busy'));
  const event = await storeEvent(t, owner.merchant.id);
  const attemptNow = async () => {
    assert.equal(await worker.runOnce(), true);
    await worker.idle();
    const d = await deliveryOf(t, event.id, hook.id);
    return { d, wait: d.nextAttemptAt === null ? null : d.nextAttemptAt - t.clock.now() };
  };
  const within = (wait: number | null, planned: number) => wait !== null && wait >= planned * (1 - DEFAULT_JITTER) && wait <= planned * (1 + DEFAULT_JITTER);

  // 1. 429 asking for 2 h (our schedule says 1 min): 2 h.
  rx.answer({ status: 429, headers: { 'retry-after': '7200' } });
  const first = await attemptNow();
  assert.equal(first.d.status, 'pending');
  assert.equal(first.wait, 2 * HOUR);
  t.clock.set(first.d.nextAttemptAt!);

  // 2. 503 with an HTTP-date 30 min ahead (our schedule: 5 min): 30 min, to the second.
  rx.answer({ status: 503, headers: { 'retry-after': new Date(t.clock.now() + 30 * MINUTE).toUTCString() } });
  const second = await attemptNow();
  assert.ok(second.wait! > 30 * MINUTE - 1000 && second.wait! <= 30 * MINUTE, `waits ${second.wait}`);
  t.clock.set(second.d.nextAttemptAt!);

  // 3. 503 asking for 1 s: never shorter than our own schedule (15 min).
  rx.answer({ status: 503, headers: { 'retry-after': '1' } });
  const third = await attemptNow();
  assert.ok(within(third.wait, RETRY_DELAYS_MS[2]!), `waits ${third.wait}`);
  t.clock.set(third.d.nextAttemptAt!);

  // 4. 429 asking for 12 days: capped at 24 h.
  rx.answer({ status: 429, headers: { 'retry-after': String(12 * 86_400) } });
  const fourth = await attemptNow();
  assert.equal(fourth.wait, MAX_RETRY_AFTER_MS);
  t.clock.set(fourth.d.nextAttemptAt!);

  // 5. A 500 carrying Retry-After: only 429 and 503 ask for a wait; the schedule (3 h) applies.
  rx.answer({ status: 500, headers: { 'retry-after': '86400' } });
  const fifth = await attemptNow();
  assert.ok(within(fifth.wait, RETRY_DELAYS_MS[4]!), `waits ${fifth.wait}`);
  t.clock.set(fifth.d.nextAttemptAt!);

  // 6. Delivered.
  rx.answer(200);
  const sixth = await attemptNow();
  assert.equal(sixth.d.status, 'delivered');

  const history = await listDeliveryAttempts(t.deps.db, sixth.d.id);
  assert.deepEqual(
    history.map((a) => [a.attempt, a.responseStatus, a.error, a.retryAfterMs]),
    [
      [1, 429, 'HTTP 429', 2 * HOUR],
      [2, 503, 'HTTP 503', history[1]!.retryAfterMs],
      [3, 503, 'HTTP 503', 1000],
      [4, 429, 'HTTP 429', MAX_RETRY_AFTER_MS],
      [5, 500, 'HTTP 500', null],
      [6, 200, null, null],
    ],
  );
  assert.deepEqual(
    history.map((a) => a.nextAttemptAt),
    [first.d.nextAttemptAt, second.d.nextAttemptAt, third.d.nextAttemptAt, fourth.d.nextAttemptAt, fifth.d.nextAttemptAt, null],
  );
  // Started at the (injected) clock of each attempt, in order; durations measured, not invented.
  for (let i = 1; i < history.length; i++) assert.ok(history[i]!.startedAt > history[i - 1]!.startedAt);
  assert.equal(history[5]!.startedAt, fifth.d.nextAttemptAt);
  for (const a of history) assert.ok(a.durationMs >= 0 && a.durationMs < 10_000, `duration ${a.durationMs}`);
  assert.equal(rx.requests.length, 6);
});

test('an attempt that gets no answer is recorded with its error and no status', async () => {
  const { rx, t, owner } = app;
  const worker = createDeliveryWorker(t.deps);
  const hook = await registerWebhook(owner.client, rx.url('/gone'));
  const event = await storeEvent(t, owner.merchant.id);
  rx.answer('hang');
  assert.equal(await worker.runOnce(), true);
  await worker.idle();
  const d = await deliveryOf(t, event.id, hook.id);
  const [only, ...rest] = await listDeliveryAttempts(t.deps.db, d.id);
  assert.equal(rest.length, 0);
  assert.equal(only!.responseStatus, null);
  assert.match(only!.error ?? '', /timed out after 2s/);
  assert.ok(only!.durationMs >= 1900, `duration ${only!.durationMs}`);
  assert.equal(only!.nextAttemptAt, d.nextAttemptAt);
});
