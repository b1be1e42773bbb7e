/** What the console's Account page shows of the Telegram link (null when no bot is configured). */
import { NOTICE_KINDS } from './telegram.queue.js';
import { getLink } from './telegram.repo.js';
import { botUsername } from './telegram.worker.js';
import type { TelegramRuntime } from './telegram.runtime.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { watcherStatus: WatcherStatus; telegram: TelegramRuntime | undefined };

export async function telegramPanel(deps: Deps, merchantId: string, now: number) {
  if (!deps.telegram) return null;
  const link = await getLink(deps.db, merchantId, now);
  const bot = await botUsername(deps);
  return {
    ...link,
    kinds: NOTICE_KINDS,
    deepLink: bot && link.code ? `https://t.me/${bot}?start=${link.code}` : null,
  };
}
