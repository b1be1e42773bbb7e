/**
 * The console's "Connect your shop" page: connect a shop through the Epay or Epusdt protocol, see
 * exactly what to paste where in each kind of shop (API URL, pid, key), roll or delete a
 * connection, and follow the paid callbacks sent to the shops, each with its attempts (and a manual retry). Every action is
 * a form sent to the shop-connections API, like every console form.
 */
import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { listCallbackPage } from '../shops/shop-notifies.repo.js';
import { apiUrlOf } from '../shops/shops.schemas.js';
import { listConnections } from '../shops/shops.repo.js';
import { connectionCurrencies } from '../shops/shops.service.js';
import { listWalletViews } from '../dashboard/dashboard.repo.js';
import { consoleGet, consoleRenderer, tokenContracts } from './console.pages.js';
import type { Renderer } from './render.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { RateBook } from '../pricing/rate-book.js';
import type { TelegramRuntime } from '../telegram/telegram.runtime.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & {
  watcherStatus: WatcherStatus;
  rates: RateBook;
  telegram: TelegramRuntime | undefined;
};

const CALLBACKS_SHOWN = 100;

export function consoleShopPages(app: Hono<AppEnv>, deps: Deps, renderer: Renderer): void {
  const render = consoleRenderer(renderer, deps);
  const publicUrl = deps.config.server.public_url;

  consoleGet(app, deps, '/console/shops', async (c, req) => {
    // Without the keys: the page never shows one after it was handed out.
    const connections = (await listConnections(deps.db, req.merchant.id)).map(({ secret: _secret, ...rest }) => ({
      ...rest,
      apiUrl: apiUrlOf(publicUrl, rest.protocol),
    }));
    const wallets = (await listWalletViews(deps.db, req.merchant.id, tokenContracts(deps))).filter((w) => w.archivedAt === null);
    // The list GET /shop-connections/{id}/callbacks reads, over every connection: the newest 100, with their attempts.
    const notifies = (await listCallbackPage(deps.db, req.merchant.id, undefined, { limit: CALLBACKS_SHOWN })).items;
    return render(c, req, 'console-shops', 'shops', req.ctx.t('console.shops.title'), {
      connections,
      wallets,
      notifies,
      currencies: connectionCurrencies(deps),
      epayUrl: apiUrlOf(publicUrl, 'epay'),
      epusdtUrl: apiUrlOf(publicUrl, 'epusdt'),
    });
  });
}
