/**
 * The EVM watchers' runtime, one `EvmWatch` per network of [[evm.networks]]: each provider's
 * JSON-RPC client (paced to its requests_per_second, its time-out), its reader (the network's
 * pinned tokens, the operator's finality rule, the provider's max_block_range as its first span)
 * and its health, and the range caps the providers taught by their refusals.
 */
import type { EvmNetworkConfig } from '../../config.js';
import { EvmReader, RangeCaps } from '../../chains/evm/reader.js';
import { EvmRpcClient } from '../../chains/evm/rpc.js';
import type { EvmProvider, EvmWatch, EvmWatches } from '../../chains/evm/watch.js';
import { systemClock } from '../../lib/clock.js';
import { newHealth, pacedFetch, providerName } from '../watch/providers.js';

export interface EvmRuntimeOptions {
  /** Tests hand their own fetch (a recording or failing one). */
  fetch?: typeof fetch;
  /** Recipients per eth_getLogs query (default: the reader's, 100). */
  maxRecipientsPerQuery?: number;
}

export function createEvmWatch(entry: EvmNetworkConfig, options: EvmRuntimeOptions = {}): EvmWatch {
  const caps = new RangeCaps();
  const taken = new Set<string>();
  const providers: EvmProvider[] = entry.providers.map((p) => {
    const name = providerName(p.url, taken);
    // The client's pauses (Retry-After) run in wall time as its pacing does.
    const client = new EvmRpcClient({
      url: p.url,
      name,
      clock: systemClock,
      timeoutMs: p.timeout_seconds * 1000,
      fetch: pacedFetch(p.requests_per_second, options.fetch ?? fetch),
    });
    const reader = new EvmReader({
      network: entry.network,
      rpc: client,
      caps,
      finality: entry.finality,
      ...(p.max_block_range > 0 ? { maxSpan: BigInt(p.max_block_range) } : {}),
      ...(options.maxRecipientsPerQuery ? { maxRecipientsPerQuery: options.maxRecipientsPerQuery } : {}),
    });
    return {
      client,
      reader,
      health: { ...newHealth(name), outvoted: 0 },
    };
  });
  return {
    network: entry.network,
    finality: entry.finality,
    seenPollMs: entry.pollMs,
    providers,
    caps,
    figures: { state: 'stopped', cursorBlock: null, finalHead: null, latestHead: null, reason: null, lastPassAt: null, busy: false },
    nextFinalAt: 0,
    nextSeenAt: 0,
    lastFinalAt: 0,
    seenTurn: 0,
    stopping: false,
  };
}

/** One watch per enabled EVM network, in the configuration's order. */
export function createEvmWatches(networks: readonly EvmNetworkConfig[], options: EvmRuntimeOptions = {}): EvmWatches {
  return new Map(networks.map((n) => [n.network.id, createEvmWatch(n, options)]));
}
