/** What the console's Account page shows of the Telegram link (null when no bot is configured). */
import type { AppDeps } from '../app-deps.js';
import { NOTICE_KINDS } from './telegram.queue.js';
import { getLink } from './telegram.repo.js';
import { botUsername } from './telegram.worker.js';

export async function telegramPanel(deps: AppDeps, merchantId: string, now: number) {
  if (!deps.telegram) return null;
  const link = await getLink(deps.db, merchantId, now);
  const bot = await botUsername(deps);
  return {
    ...link,
    kinds: NOTICE_KINDS,
    deepLink: bot && link.code ? `https://t.me/${bot}?start=${link.code}` : null,
  };
}
