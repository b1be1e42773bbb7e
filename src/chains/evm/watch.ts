/**
 * What an EVM network's watcher keeps in memory between its passes (its durable state is the
 * payments layer's: the cursor, the unread ranges and the disputes), and what /health, the metrics
 * and `gatewayd doctor` show of it: per provider its client and reader, its state, its last error,
 * the range cap learned from its refusals and what it refuses. Built once per enabled network at
 * start (src/payments/evm/evm.runtime.ts), kept in `deps.evm`.
 */
import type { AccountProviderHealth } from '../account-watch.js';
import type { FinalityRule, Network, NetworkId } from '../networks.js';
import type { EvmReader, RangeCaps } from './reader.js';
import type { EvmRpcClient } from './rpc.js';

/** A provider's health as every watcher keeps it (account-watch.ts), and how often the two others outvoted it. */
export interface EvmProviderHealth extends AccountProviderHealth {
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
