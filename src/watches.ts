/**
 * The watchers of the networks beside TRON, loaded only for the families the configuration enables
 * (docs/architecture.md, "Start-up"): an instance on TRON alone never loads the EVM, Solana or TON
 * readers, clients and watchers, which keeps its idle memory down (BENCHMARKS.md, figure 7). Built
 * here, in the composition root, and handed to createDeps (their state) and createWorkers (their
 * workers).
 */
import type { AppDeps } from './app-deps.js';
import type { AccountWatches } from './chains/account-watch.js';
import type { EvmWatches } from './chains/evm/watch.js';
import type { Config } from './config.js';
import type { Worker } from './lib/loop.js';

export interface Watches {
  evm: EvmWatches;
  accounts: AccountWatches;
  /** One worker per watched network, each to run in the instance holding the scanner's lease. */
  workers(deps: AppDeps): Worker[];
}

/** No network beside TRON: nothing to load. */
export const NO_WATCHES: Watches = { evm: new Map(), accounts: new Map(), workers: () => [] };

export async function loadWatches(config: Pick<Config, 'evmNetworks' | 'solanaNetworks' | 'tonNetworks'>): Promise<Watches> {
  const accountNetworks = [...config.solanaNetworks, ...config.tonNetworks];
  if (config.evmNetworks.length === 0 && accountNetworks.length === 0) return NO_WATCHES;
  const evm = config.evmNetworks.length > 0 ? await import('./payments/evm/evm.runtime.js') : undefined;
  const evmWatcher = evm ? await import('./payments/evm/evm-watcher.js') : undefined;
  const account = accountNetworks.length > 0 ? await import('./payments/watch/account.runtime.js') : undefined;
  const accountWatcher = account ? await import('./payments/watch/account-watcher.js') : undefined;
  return {
    evm: evm ? evm.createEvmWatches(config.evmNetworks) : new Map(),
    accounts: account ? account.createAccountWatches(config.solanaNetworks, config.tonNetworks) : new Map(),
    workers: (deps) => [
      ...(evmWatcher ? config.evmNetworks.map((n) => evmWatcher.evmWorker(deps, n.network.id)) : []),
      ...(accountWatcher ? accountNetworks.map((n) => accountWatcher.accountWorker(deps, n.network.id)) : []),
    ],
  };
}
