/** The Telegram bot's state in this process: its API client, its name once known and the outbox's pause. */
import { BotApi } from './bot-api.js';

export interface TelegramRuntime {
  api: BotApi;
  botId: string;
  /** The bot's username from getMe, for the t.me deep link; undefined until known. */
  username: string | null | undefined;
  /** The outbox waits until then after a 429 (ms, injected clock). */
  pausedUntil: number;
  /** Long-poll wait of getUpdates, seconds (0 in tests). */
  pollSeconds: number;
  watcherNoticeFor: number | null;
}

export function createTelegramRuntime(token: string, apiUrl: string, pollSeconds = 25): TelegramRuntime {
  return { api: new BotApi(apiUrl, token), botId: token.split(':')[0]!, username: undefined, pausedUntil: 0, pollSeconds, watcherNoticeFor: null };
}
