/**
 * Telegram notices (notify.telegram_bot_token), two workers:
 *
 * - telegram-updates reads the bot's updates by long polling (`getUpdates` with the stored offset,
 *   so each update is handled once across restarts) and links the chat whose `/start <code>` or
 *   plain `<code>` message carries a merchant's current link code; the chat is told so.
 * - telegram-outbox sends the queued notices (telegram.queue.ts), oldest first, in the merchant's
 *   locale. A failed send is retried with a growing pause (30 s doubling to 1 hour), never sooner
 *   than Telegram's `parameters.retry_after`; a 429 pauses the whole outbox that long (the limit
 *   is the bot's). A chat that is gone (400 chat not found, 403 blocked) or 12 failed attempts
 *   fail the message for good; it stays in the table.
 * It also queues a watcher_down notice when the chain watcher has been degraded for 5 minutes
 * (once per outage, kept in memory: a restart during an outage, or a new scanner leader, may tell it
 * again).
 *
 * Several instances (PostgreSQL): src/workers.ts runs each of the two under its own leader lease, so
 * one instance reads the updates (Telegram answers 409 to a second concurrent getUpdates) and one
 * sends the outbox (each notice sent once; an instance killed between sending and marking sent
 * leaves it pending, and the next leader sends it again: at least once).
 */
import { HOUR, MINUTE, SECOND } from '../lib/clock.js';
import type { Worker } from '../lib/loop.js';
import { BotApiError } from './bot-api.js';
import { claimLinkCode, dueMessages, finishMessage, linkedForWatcher, loadOffset, queueLinkedNotice, retryMessage, saveOffset } from './telegram.repo.js';
import { renderNotice } from './messages.js';
import { queueNotice } from './telegram.queue.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { TelegramRuntime } from './telegram.runtime.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { watcherStatus: WatcherStatus; telegram: TelegramRuntime | undefined };

const MAX_ATTEMPTS = 12;
const FIRST_RETRY_MS = 30 * SECOND;
const MAX_RETRY_MS = HOUR;
export const WATCHER_DOWN_AFTER_MS = 5 * MINUTE;
const PER_PASS = 20;
const CODE_RE = /^(?:\/start(?:@\w+)?\s+)?([A-Za-z0-9]{10})$/;

export { createTelegramRuntime, type TelegramRuntime } from './telegram.runtime.js';

/** The bot's username (getMe, asked once and then remembered); null when Telegram cannot say now. */
export async function botUsername(deps: Deps): Promise<string | null> {
  const tg = deps.telegram;
  if (!tg) return null;
  if (tg.username !== undefined) return tg.username;
  try {
    tg.username = (await tg.api.getMe()).username;
  } catch (err) {
    deps.log.warn({ method: 'getMe', detail: err instanceof Error ? err.message : String(err) }, 'telegram: getMe failed');
    return null;
  }
  return tg.username;
}

/** One getUpdates read: links the chats that sent a current code. */
export async function readUpdates(deps: Deps): Promise<boolean> {
  const tg = deps.telegram;
  if (!tg) return false;
  const offset = await loadOffset(deps.db, tg.botId);
  let updates;
  try {
    updates = await tg.api.getUpdates(offset, tg.pollSeconds);
  } catch (err) {
    deps.log.warn({ method: 'getUpdates', detail: err instanceof Error ? err.message : String(err) }, 'telegram: getUpdates failed');
    return false;
  }
  if (updates.length === 0) return false;
  const now = deps.clock.now();
  for (const u of updates) {
    const code = u.chatId !== null && u.text !== null ? CODE_RE.exec(u.text.trim())?.[1]?.toUpperCase() : undefined;
    if (code && u.chatId !== null) {
      const merchantId = await claimLinkCode(deps.db, code, u.chatId, now);
      if (merchantId) {
        await queueLinkedNotice(deps.db, merchantId, u.chatId, now);
        deps.log.info({ merchant_id: merchantId }, 'telegram: chat linked');
      }
    }
  }
  await saveOffset(deps.db, tg.botId, Math.max(...updates.map((u) => u.updateId)) + 1, now);
  return true;
}

function retryDelay(attempts: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

/** Sends the due messages; true when more are due now. */
export async function sendDue(deps: Deps): Promise<boolean> {
  const tg = deps.telegram;
  if (!tg) return false;
  await maybeQueueWatcherDown(deps);
  const now = deps.clock.now();
  if (now < tg.pausedUntil) return false;
  const due = await dueMessages(deps.db, now, PER_PASS);
  for (const m of due) {
    try {
      await tg.api.sendMessage(m.chatId, renderNotice(m.kind, m.locale, m.merchantName, m.payload, deps.config.server.public_url));
      await finishMessage(deps.db, m.id, 'sent', null, deps.clock.now());
    } catch (err) {
      if (!(err instanceof BotApiError)) throw err;
      const attempts = m.attempts + 1;
      const gone = err.errorCode === 403 || (err.errorCode === 400 && /chat not found/i.test(err.message));
      if (gone || attempts >= MAX_ATTEMPTS) {
        await finishMessage(deps.db, m.id, 'failed', err.message, deps.clock.now());
        deps.log.warn({ message_id: m.id, error_code: err.errorCode, detail: err.message }, 'telegram: notice given up');
        continue;
      }
      const wait = Math.max(retryDelay(attempts), err.retryAfterMs ?? 0);
      await retryMessage(deps.db, m.id, attempts, deps.clock.now() + wait, err.message);
      if (err.errorCode === 429) {
        tg.pausedUntil = deps.clock.now() + (err.retryAfterMs ?? FIRST_RETRY_MS);
        deps.log.warn({ retry_after_ms: err.retryAfterMs }, 'telegram: rate limited; the outbox waits');
        return false;
      }
    }
  }
  return due.length === PER_PASS;
}

/**
 * With several instances the outbox's instance may not be the scanner's, whose status is the one
 * that degrades: src/workers.ts also runs this check beside the scanner (under its lease). Both
 * share the once-per-outage memory of the process, so one instance that does both tells it once.
 */
export function telegramWatcherWorker(deps: Deps): Worker {
  return { name: 'telegram-watcher', intervalMs: 2 * SECOND, runOnce: () => maybeQueueWatcherDown(deps).then(() => false) };
}

async function maybeQueueWatcherDown(deps: Deps): Promise<void> {
  const tg = deps.telegram!;
  const ws = deps.watcherStatus;
  if (ws.state !== 'degraded') {
    tg.watcherNoticeFor = null;
    return;
  }
  const since = ws.since ?? null;
  const now = deps.clock.now();
  if (since === null || now - since < WATCHER_DOWN_AFTER_MS || tg.watcherNoticeFor === since) return;
  tg.watcherNoticeFor = since;
  await linkedForWatcher(deps.db, (tx, merchantId) => queueNotice(tx, merchantId, 'watcher_down', null, { since: new Date(since).toISOString() }, now));
}

export function telegramWorkers(deps: Deps): Worker[] {
  if (!deps.telegram) return [];
  return [
    { name: 'telegram-updates', intervalMs: SECOND, runOnce: () => readUpdates(deps) },
    { name: 'telegram-outbox', intervalMs: 2 * SECOND, runOnce: () => sendDue(deps) },
  ];
}
