/**
 * The whole dependency bag of the composition root: the core parts (src/core/core-deps.ts) and each
 * feature's runtime. Only the composition root names it (src/app.ts, src/deps.ts, src/serve.ts,
 * src/workers.ts and the commands); a feature's function names the parts it uses.
 */
import type { CoreDeps } from './core/core-deps.js';
import type { Mailer } from './email/mailer.js';
import type { ChainRuntime } from './chain/chain.runtime.js';
import type { WatcherStatus } from './core/watcher-status.js';
import type { EvmWatches } from './chains/evm/watch.js';
import type { AccountWatches } from './chains/account-watch.js';
import type { HostLookup } from './webhooks/url-policy.js';
import type { RateBook } from './pricing/rate-book.js';
import type { TelegramRuntime } from './telegram/telegram.runtime.js';

/** Everything a handler, service or worker may use. Passed explicitly (no module state). */
export interface AppDeps extends CoreDeps, FeatureParts {}

/** Each feature's runtime part, by that feature's own type. */
export interface FeatureParts {
  watcherStatus: WatcherStatus;
  /** The chain watcher's TRON client and retry state. */
  chain: ChainRuntime;
  /** Each enabled EVM network's watcher state: its providers' clients, health and learned range caps, and its figures. */
  evm: EvmWatches;
  /** Each enabled Solana and TON network's watcher state: its providers' readers and health, and its figures. */
  accounts: AccountWatches;
  mailer: Mailer;
  /** Name resolution for webhook targets (the system resolver; tests inject their own DNS). */
  dnsLookup: HostLookup;
  /** The fiat rates the background fetcher last read (src/pricing/); invoice creation reads them. */
  rates: RateBook;
  /** The Telegram bot (notify.telegram_bot_token), or undefined when none is configured (src/telegram/). */
  telegram: TelegramRuntime | undefined;
}
