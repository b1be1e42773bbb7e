/**
 * The chain watcher's in-memory state across passes (its durable state is chain_scan and
 * chain_scan_gaps) and the figures /health and the metrics show.
 */
import type { Config } from '../config.js';
import { HOUR } from '../lib/clock.js';
import { ProviderPool, providerSettings } from './providers.js';
import type { DisputeRow } from '../payments/scan.repo.js';
import type { BlockRef } from './tron.client.js';

/** TRON makes a block every 3 s (a private or simulated chain may be faster: the scanner learns it). */
export const BLOCK_INTERVAL_MS = 3000;
/** A follower further behind the head than this (1 minute) jumps to the head; the rest becomes a gap. */
export const MAX_FOLLOW_BEHIND = 20;
/** Blocks read before the scanner's estimate of an invoice's creation block (server and chain clocks differ). */
export const START_MARGIN_BLOCKS = 20;
/**
 * The head is also read this often (besides when a predicted block is not there): each read refines
 * the learned solidification delay (reads at varied moments of the 3 s block cycle) and the lag
 * figures. 100 s: 864 reads a day, and 100 s is not a multiple of 3 s, so the moments vary.
 */
export const HEAD_REFRESH_MS = 100_000;
/** Failed passes in a row after which /health says degraded with the reason (the first one already does). */
export const FAILED_PASSES_DEGRADED = 1;

/** A block the providers could not agree on: held, never confirmed from and never dropped (durable: chain_disputes). */
export type { DisputeRow as Dispute } from '../payments/scan.repo.js';

/** The scanner's figures for /health and the metrics. */
export interface ScanFigures {
  /** The newest block the head follower has read. */
  block: number | null;
  /** The newest solidified block known. */
  solid_head: number | null;
  /** Solidified blocks not read yet by the follower. */
  behind_blocks: number | null;
  /** Blocks in unread ranges behind the follower (being backfilled). */
  gap_blocks: number;
  /** Blocks whose two reads disagreed (never trusted). */
  inconsistent_blocks: number;
  /** Blocks held as disputed now (the providers disagree and nothing can decide). */
  disputed_blocks: number;
  /** Why the watcher is degraded or waiting, when it is. */
  reason: string | null;
}

export interface ChainRuntime {
  pool: ProviderPool;
  intervalMs: number;
  lingerMs: number;
  /** The chain's block interval: TRON's 3 s, or less when consecutive blocks show it (a dev chain). */
  blockIntervalMs: number;
  /** The newest block read with a timestamp (for the time checks). */
  lastBlock: BlockRef | undefined;
  /** The block read last, follower or backfill (two consecutive ones show the interval). */
  lastRead: BlockRef | undefined;
  /** The newest solidified head accepted (credible, and confirmed by a second provider when there is one), and when. */
  head: BlockRef | undefined;
  headReadAt: number;
  /** Least observed delay between a block's timestamp and the clock when it was seen solidified (an upper bound). */
  solidDelayMs: number | undefined;
  /** Largest delay at which a block was seen not solidified yet (a lower bound), and the last probe between the two. */
  solidDelayLowMs: number;
  probedAt: number;
  /** Set when the server shuts down: the running pass stops at the next block. */
  stopping: boolean;
  /** The fault condition last logged, so a repeating condition is logged once. */
  fault: string | undefined;
  /** Refused-head conditions already logged (provider + condition). */
  refusedLogged: Set<string>;
  /** The stored cursor and gaps were checked against a credible head since the start. */
  startChecked: boolean;
  /** Passes that ended in an exception, in a row. */
  failedPasses: number;
  /** The block the follower waits at and since when (a provider does not serve it yet, or none can check it). */
  waiting: { block: number; since: number } | undefined;
  /** The same for the backfill: the block its oldest range waits at, and since when. */
  backfillWaiting: { block: number; since: number } | undefined;
  /** The open disputes by block: a cache of chain_disputes, loaded at the first pass, written through. */
  disputes: Map<number, DisputeRow>;
  disputesLoaded: boolean;
  /** Seen, then final (seen-read.ts): the next latest block to read, the blocks read (number -> blockID), when last read, whose turn. */
  seen: { next: number | undefined; blocks: Map<number, string>; readAt: number; turn: number; unserved: Set<string> };
  figures: ScanFigures;
}

export function createChainRuntime(config: Config, options: { timeoutMs?: number; maxRequestsPerSecond?: number } = {}): ChainRuntime {
  return {
    pool: new ProviderPool(providerSettings(config), options),
    intervalMs: config.tron.poll_interval_seconds * 1000,
    lingerMs: config.tron.linger_hours * HOUR,
    // The network's (3 s on TRON; the devnet's own under `gatewayd dev`); shorter ones are learned anyway.
    blockIntervalMs: config.network.blockIntervalMs,
    lastBlock: undefined,
    lastRead: undefined,
    head: undefined,
    headReadAt: 0,
    solidDelayMs: undefined,
    solidDelayLowMs: 0,
    probedAt: 0,
    stopping: false,
    fault: undefined,
    refusedLogged: new Set(),
    startChecked: false,
    failedPasses: 0,
    waiting: undefined,
    backfillWaiting: undefined,
    disputes: new Map(),
    disputesLoaded: false,
    seen: { next: undefined, blocks: new Map(), readAt: -Infinity, turn: 0, unserved: new Set() },
    figures: { block: null, solid_head: null, behind_blocks: null, gap_blocks: 0, inconsistent_blocks: 0, disputed_blocks: 0, reason: null },
  };
}
