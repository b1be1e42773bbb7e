/**
 * The console's Wallets page: the merchant's receiving addresses with the networks each receives
 * on (by their plain names), its open invoices, and the forms to add one (an EVM address with the
 * EVM networks it receives on, all ticked at first), rename, archive or restore it, and change an
 * EVM wallet's networks. A Solana wallet shows the token account (ATA) of each token beside its owner
 * address; a TON wallet its address as wallets print it (`UQ…`) beside the stored raw form. Every
 * action is a form sent to the wallets API, like every console form.
 */
import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { addressPatternOf, ADDRESS_PATTERNS, type AddressShape } from '../chains/address-codec.js';
import { findNetwork, NETWORKS, type NetworkId } from '../chains/networks.js';
import { associatedTokenAddress } from '../chains/solana/address.js';
import { payerFacingAddress } from '../chains/ton/address.js';
import { listWalletViews } from '../dashboard/dashboard.repo.js';
import { listMerchantWallets } from '../wallets/wallets.repo.js';
import { consoleGet, consoleRenderer, poolWarnings, tokenContracts } from './console.pages.js';
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

export function consoleWalletPages(app: Hono<AppEnv>, deps: Deps, renderer: Renderer): void {
  const render = consoleRenderer(renderer, deps);
  const evmNetworks = deps.config.networks.filter((n) => n.family === 'evm').map((n) => ({ id: n.id, label: n.label }));
  const families = [...new Set(deps.config.networks.map((n) => n.family))].filter((f): f is AddressShape => f in ADDRESS_PATTERNS);
  // The form's pattern (the browser's `v` flag wants no ^/$ and takes the alternatives as they are).
  const addressPattern = addressPatternOf(families).replace(/^\^|\$$/g, '');

  consoleGet(app, deps, '/console/wallets', async (c, req) => {
    const [views, withNetworks] = await Promise.all([
      listWalletViews(deps.db, req.merchant.id, tokenContracts(deps)),
      listMerchantWallets(deps.db, req.merchant.id),
    ]);
    const networksOf = new Map(withNetworks.map((w) => [w.id, w.networks]));
    const wallets = views.map((w) => {
      const networks = networksOf.get(w.id) ?? [];
      return {
        ...w,
        networks: networks.map((id) => ({ id, label: findNetwork(id)?.label ?? id })),
        evm: w.address.startsWith('0x'),
        tokenAccounts: solanaTokenAccounts(w.address, networks),
        tonForm: networks.some((id) => NETWORKS[id].family === 'ton')
          ? payerFacingAddress(w.address, { test: networks.every((id) => NETWORKS[id].test) })
          : undefined,
      };
    });
    // A TRON-only instance whose wallets are all on its TRON network keeps the page it always had.
    const showNetworks = evmNetworks.length > 0 || wallets.some((w) => w.networks.some((n) => n.id !== deps.config.network.id));
    return render(c, req, 'console-wallets', 'wallets', req.ctx.t('console.wallets.title'), {
      wallets,
      evmNetworks,
      showNetworks,
      addressPattern,
      solana: families.includes('solana'),
      ton: families.includes('ton'),
      chains: families.some((f) => f === 'solana' || f === 'ton'),
      networkNames: deps.config.networks.map((n) => n.label).join(', '),
      pools: await poolWarnings(deps, req.merchant.id),
    });
  });
}

/** The token account (ATA) of a Solana owner for each token of each Solana network it receives on. */
function solanaTokenAccounts(address: string, networks: readonly NetworkId[]): Array<{ token: string; network: string; address: string }> {
  return networks
    .map((id) => NETWORKS[id])
    .filter((n) => n.family === 'solana')
    .flatMap((n) => n.tokens.map((t) => ({ token: t.symbol, network: n.label, address: associatedTokenAddress(address, t.contract) })));
}
