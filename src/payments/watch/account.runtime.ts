/**
 * The per-account watchers' runtime, one `AccountWatch` per network of [[solana.networks]] and
 * [[ton.networks]]: each provider's client (paced to its requests_per_second, its time-out, its key),
 * its reader (SolanaReader at finalized commitment; ToncenterReader or TonapiReader, masterchain
 * committed), and its health.
 */
import type { AccountProvider, AccountWatch, AccountWatches } from '../../chains/account-watch.js';
import { EvmRpcClient } from '../../chains/evm/rpc.js';
import { SolanaReader } from '../../chains/solana/reader.js';
import { SolanaRpc } from '../../chains/solana/rpc.js';
import { TonHttpClient } from '../../chains/ton/rpc.js';
import { TonapiReader } from '../../chains/ton/tonapi.js';
import { ToncenterReader } from '../../chains/ton/toncenter.js';
import type { SolanaNetworkConfig, TonNetworkConfig } from '../../config.js';
import { MINUTE, systemClock } from '../../lib/clock.js';
import { newHealth, pacedFetch, providerName } from './providers.js';

/** Between reads of every registered account of a network (open invoices' accounts are read every poll). */
export const SWEEP_MS = 10 * MINUTE;

function watch(network: AccountWatch['network'], pollMs: number, providers: AccountProvider[]): AccountWatch {
  return {
    network,
    pollMs,
    sweepMs: SWEEP_MS,
    providers,
    figures: { state: 'stopped', cursorBlock: null, finalHead: null, reason: null, lastPassAt: null, busy: false, openAccounts: 0, sweptAccounts: 0 },
    readThrough: new Map(),
    nextPollAt: 0,
    nextSweepAt: 0,
    stopping: false,
  };
}

export function createSolanaWatch(entry: SolanaNetworkConfig): AccountWatch {
  const taken = new Set<string>();
  const providers = entry.providers.map((p) => {
    const name = providerName(p.url, taken);
    const client = new EvmRpcClient({
      url: p.url,
      name,
      clock: systemClock,
      timeoutMs: p.timeout_seconds * 1000,
      fetch: pacedFetch(p.requests_per_second, fetch),
    });
    return { reader: new SolanaReader({ network: entry.network, rpc: new SolanaRpc(client) }), health: newHealth(name) };
  });
  return watch(entry.network, entry.pollMs, providers);
}

export function createTonWatch(entry: TonNetworkConfig): AccountWatch {
  const taken = new Set<string>();
  const providers = entry.providers.map((p) => {
    const name = providerName(p.url, taken);
    const client = new TonHttpClient({
      url: p.url,
      name,
      ...(p.api_key ? { apiKey: p.api_key, keyHeader: p.kind === 'tonapi' ? ('bearer' as const) : ('x-api-key' as const) } : {}),
      // 0 is unpaced (an own index): the client's pace is then far above any answer's time.
      requestsPerSecond: p.requests_per_second > 0 ? p.requests_per_second : 1_000_000,
      clock: systemClock,
      timeoutMs: p.timeout_seconds * 1000,
    });
    const reader = p.kind === 'tonapi' ? new TonapiReader({ network: entry.network, client }) : new ToncenterReader({ network: entry.network, client });
    return { reader, health: newHealth(name) };
  });
  return watch(entry.network, entry.pollMs, providers);
}

/** One watch per enabled Solana and TON network, in the configuration's order. */
export function createAccountWatches(solana: readonly SolanaNetworkConfig[], ton: readonly TonNetworkConfig[]): AccountWatches {
  return new Map([...solana.map((n) => [n.network.id, createSolanaWatch(n)] as const), ...ton.map((n) => [n.network.id, createTonWatch(n)] as const)]);
}
