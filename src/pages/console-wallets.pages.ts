/**
 * The console's Wallets page: the merchant's receiving addresses with the networks each receives
 * on (by their plain names), its open invoices, and the forms to add one (an EVM address with the
 * EVM networks it receives on, all ticked at first), rename, archive or restore it, and change an
 * EVM wallet's networks. Every action is a form sent to the wallets API, like every console form.
 */
import type { Hono } from 'hono';
import type { AppDeps } from '../app-deps.js';
import type { AppEnv } from '../http/context.js';
import { findNetwork } from '../chains/networks.js';
import { listWalletViews } from '../dashboard/dashboard.repo.js';
import { listMerchantWallets } from '../wallets/wallets.repo.js';
import { consoleGet, consoleRenderer, poolWarnings, tokenContracts } from './console.pages.js';
import type { Renderer } from './render.js';

export function consoleWalletPages(app: Hono<AppEnv>, deps: AppDeps, renderer: Renderer): void {
  const render = consoleRenderer(renderer, deps);
  const evmNetworks = deps.config.networks.filter((n) => n.family === 'evm').map((n) => ({ id: n.id, label: n.label }));

  consoleGet(app, deps, '/console/wallets', async (c, req) => {
    const [views, withNetworks] = await Promise.all([
      listWalletViews(deps.db, req.merchant.id, tokenContracts(deps)),
      listMerchantWallets(deps.db, req.merchant.id),
    ]);
    const networksOf = new Map(withNetworks.map((w) => [w.id, w.networks]));
    const wallets = views.map((w) => {
      const networks = networksOf.get(w.id) ?? [];
      return { ...w, networks: networks.map((id) => ({ id, label: findNetwork(id)?.label ?? id })), evm: w.address.startsWith('0x') };
    });
    // A TRON-only instance whose wallets are all on its TRON network keeps the page it always had.
    const showNetworks = evmNetworks.length > 0 || wallets.some((w) => w.networks.some((n) => n.id !== deps.config.network.id));
    return render(c, req, 'console-wallets', 'wallets', req.ctx.t('console.wallets.title'), {
      wallets,
      evmNetworks,
      showNetworks,
      pools: await poolWarnings(deps, req.merchant.id),
    });
  });
}
