/**
 * What an EVM network's watcher keeps in memory between its passes (its durable state is the
 * payments layer's: the cursor, the unread ranges and the disputes), and what /health, the metrics
 * and `gatewayd doctor` show of it: per provider its client and reader, its state, its last error,
 * the range cap learned from its refusals and what it refuses. Built once per enabled network at
 * start (src/payments/evm/evm.runtime.ts), kept in `deps.evm`.
 */
import type { FinalityRule, Network, NetworkId } from '../networks.js';
import type { EvmReader, RangeCaps } from './reader.js';
import type { EvmRpcClient } from './rpc.js';

export type EvmProviderState = 'ok' | 'backing_off' | 'failing';

export interface EvmProviderHealth {
  /** The provider's scheme and host, never its path, query or key. */
  name: string;
  state: EvmProviderState;
  lastError: string | null;
  lastOkAt: number | null;
  /** Not asked before this time (a Retry-After, or a backoff after failures); null when it may be asked. */
  retryAt: number | null;
  consecutiveFailures: number;
  failures: number;
  /** What it refused, once each in plain words ("eth_getLogs over 2000 blocks", "batch requests", ...). */
  refuses: string[];
  /** Logs it answered that a check refused (removed, another contract, not in the block's bloom...). */
  droppedLogs: number;
  /** Transfers it showed otherwise than the other provider, or not at all (an omission or a forgery). */
  disagreements: number;
  /** Transfers about which the two other providers agreed against it (three providers or more). */
  outvoted: number;
}

export interface EvmProvider {
  client: EvmRpcClient;
  reader: EvmReader;
  health: EvmProviderHealth;
}

/** The watcher's figures for /health and the metrics. */
export interface EvmFigures {
  state: 'stopped' | 'idle' | 'running' | 'degraded';
  /** The newest block read as final (every block up to it is read), null before the first. */
  cursorBlock: number | null;
  /** The newest final head both providers showed, and the latest head seen with it. */
  finalHead: number | null;
  latestHead: number | null;
  /** Why the watcher is degraded or waiting, when it is. */
  reason: string | null;
  /** When the last pass ended, and whether invoices were open then (the busy shape) or not (the idle one). */
  lastPassAt: number | null;
  busy: boolean;
}

export interface EvmWatch {
  network: Readonly<Network>;
  finality: FinalityRule;
  /** Between the reads of blocks not final yet while an invoice waits on this network. */
  seenPollMs: number;
  providers: EvmProvider[];
  caps: RangeCaps;
  figures: EvmFigures;
  /** When the next final read and the next read of the blocks above it are due (the watcher's clock). */
  nextFinalAt: number;
  nextSeenAt: number;
  /** When the last final read ran (0 before the first). */
  lastFinalAt: number;
  /** The provider the next seen read goes to (they take turns). */
  seenTurn: number;
  /** Set when the server shuts down: the running pass stops at the next read. */
  stopping: boolean;
}

export type EvmWatches = Map<NetworkId, EvmWatch>;

/** What a provider refuses, as /health says it: its remembered range cap, and its own refusals. */
export function refusals(w: Pick<EvmWatch, 'caps'>, p: EvmProvider): string[] {
  const cap = w.caps.get(p.health.name);
  return [...(cap !== undefined ? [`eth_getLogs over more than ${cap} blocks`] : []), ...p.health.refuses];
}
