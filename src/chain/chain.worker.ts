/**
 * The chain watcher: a block scanner. It reads every solidified block once
 * (`/walletsolidity/gettransactioninfobyblocknum`), from a durable cursor up to the solidified
 * head, and records every USDT Transfer log to a registered wallet address. One request per block
 * (about 28 800 a day), whatever the number of addresses, payments or spam.
 *
 * - Exact coverage: a scanned block covers every address up to its time, so an invoice expires
 *   once the scanned blocks pass its `expires_at` and no unread range meets its window.
 * - Head first: when the cursor is far behind (downtime, a first start), the follower jumps to the
 *   head and the blocks in between become a gap, read with the time left in each pass, oldest
 *   first. New payments never wait behind a backfill.
 * - Few head reads: the next block's solidification time is predicted from the last head seen and
 *   the learned delay between a block's time and its solidification; the next pass runs then and
 *   asks for that block. The head is read when a block is not there yet, to start, and every 100 s.
 * - Cross-checked: with more than one provider, a block that pays a watched address a positive
 *   amount is read again from another provider (its own quota, not the first one's); if the reads
 *   disagree the block is not trusted (nothing recorded, the cursor stays) and the fault is logged
 *   loudly. It is read again next pass. One request a block is kept whatever the payments.
 * - Idle: with no open invoice and the linger (tron.linger_hours after the last one closed) over,
 *   the scanner makes no TRON request. When an invoice opens it resumes from the block of that
 *   invoice's creation, or from its cursor if that is later.
 */
import { performance } from 'node:perf_hooks';
import type { Config } from '../config.js';
import type { AppDeps } from '../deps.js';
import { HOUR, MINUTE } from '../lib/clock.js';
import type { Worker } from '../lib/loop.js';
import { openInvoiceAddresses, openInvoices } from '../invoices/invoice-payments.js';
import { insertGap, listGaps, listWalletAddresses, loadScanState, type ScanGap, type ScanState } from './chain.repo.js';
import { commitScan } from './chain.service.js';
import { ProviderPool, providerSettings, type Provider } from './providers.js';
import { TronApiError, type BlockRef, type TxInfo } from './tron.client.js';
import { blockDigest, transfersInBlock, watchedSet, type VerifiedTransfer, type WatchedSet } from './verifier.js';

/** TRON makes a block every 3 s (a private or simulated chain may be faster: the scanner learns it). */
export const BLOCK_INTERVAL_MS = 3000;
/** A follower further behind the head than this (1 minute) jumps to the head; the rest becomes a gap. */
export const MAX_FOLLOW_BEHIND = 20;
/** Blocks read before the scanner's estimate of an invoice's creation block (server and chain clocks differ). */
export const START_MARGIN_BLOCKS = 20;
/** Blocks committed at once when none of them carries a transfer. */
const FLUSH_EVERY = 200;
/**
 * The head is also read this often (besides when a predicted block is not there): each read refines
 * the learned solidification delay (reads at varied moments of the 3 s block cycle) and the lag
 * figures. 100 s: 864 reads a day, and 100 s is not a multiple of 3 s, so the moments vary.
 */
export const HEAD_REFRESH_MS = 100_000;

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
}

/** The watcher's in-memory state across passes (durable state is chain_scan and chain_scan_gaps). */
export interface ChainRuntime {
  pool: ProviderPool;
  intervalMs: number;
  lingerMs: number;
  /** The chain's block interval: TRON's 3 s, or less when consecutive blocks show it (a dev chain). */
  blockIntervalMs: number;
  /** The last block read with a timestamp (for the interval). */
  lastBlock: BlockRef | undefined;
  /** The newest solidified head seen, and when it was read (injected clock). */
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
    head: undefined,
    headReadAt: 0,
    solidDelayMs: undefined,
    solidDelayLowMs: 0,
    probedAt: 0,
    stopping: false,
    fault: undefined,
    figures: { block: null, solid_head: null, behind_blocks: null, gap_blocks: 0, inconsistent_blocks: 0 },
  };
}

export function chainWorker(deps: AppDeps): Worker {
  return {
    name: 'chain',
    intervalMs: deps.chain.intervalMs,
    runOnce: () => runOnce(deps),
    nextDelayMs: () => nextBlockDelay(deps),
    onStop: () => {
      deps.chain.stopping = true;
    },
  };
}

/**
 * Waiting for the next block: the pass after this one runs when the block after the cursor is
 * predicted to be solidified (never sooner than 200 ms, never later than the poll interval). So a
 * payment confirms about when its block solidifies, at the same one request a block.
 */
function nextBlockDelay(deps: AppDeps): number | undefined {
  const rt = deps.chain;
  const delay = expectedDelay(deps);
  if (deps.watcherStatus.state !== 'running' || !rt.head || delay === undefined || rt.figures.block === null) return undefined;
  const due = rt.head.timestamp + (rt.figures.block + 1 - rt.head.number) * rt.blockIntervalMs + delay;
  return Math.max(200, due - deps.clock.now());
}

/** Two reads of one block disagreed. */
class InconsistentBlock extends Error {}

/** One pass's working state. */
interface Pass {
  deps: AppDeps;
  state: ScanState;
  gaps: ScanGap[];
  watched: WatchedSet;
  /** Transfers read since the last commit, and whether the state or a gap moved. */
  pending: VerifiedTransfer[];
  dirty: boolean;
  gapMoved: { oldFrom: number; gap: ScanGap | undefined } | undefined;
  sinceFlush: number;
}

/**
 * One scanner pass: follow the head, then backfill with the time left. Returns true when a
 * backfill remains (the loop runs again at once; every pass follows the head first).
 */
export async function runOnce(deps: AppDeps): Promise<boolean> {
  const rt = deps.chain;
  const now = deps.clock.now();
  const stored = await loadScanState(deps.db, deps.config.network);
  const open = await openInvoices(deps.db, deps.config.network);
  const wasActive = stored !== undefined && now < stored.activeUntil;
  if (open.count === 0 && !wasActive) {
    setStatus(deps, 'idle', undefined);
    return false;
  }
  const activeUntil = open.count > 0 ? now + rt.lingerMs : stored!.activeUntil;
  if (rt.pool.providers.every((p) => p.until > now)) {
    // Every provider is backing off: no request until one may be asked again.
    setStatus(deps, 'degraded', undefined);
    return false;
  }
  const started = performance.now();
  let pass: Pass | undefined;
  let more = false;
  try {
    if (!rt.head || now - rt.headReadAt >= HEAD_REFRESH_MS) await refreshHead(deps);
    const head = rt.head!;
    let state: ScanState;
    let dirty = false;
    const resumeFrom = open.oldestCreatedAt === null ? undefined : open.oldestCreatedAt - START_MARGIN_BLOCKS * BLOCK_INTERVAL_MS;
    if (!stored) {
      // First start: from the oldest open invoice's creation.
      const start = Math.min(head.number, blockFor(head, resumeFrom!, rt.blockIntervalMs));
      state = { cursorBlock: start - 1, cursorTime: resumeFrom!, activeUntil };
      dirty = true;
    } else {
      state = { ...stored, activeUntil };
      dirty = Math.abs(activeUntil - stored.activeUntil) >= MINUTE;
      if (!wasActive && resumeFrom !== undefined && blockFor(head, resumeFrom, rt.blockIntervalMs) > state.cursorBlock + 1) {
        // Resuming after an idle time: the blocks before the oldest open invoice matter to nobody.
        state.cursorBlock = Math.min(head.number, blockFor(head, resumeFrom, rt.blockIntervalMs)) - 1;
        state.cursorTime = Math.max(state.cursorTime, resumeFrom);
        dirty = true;
      }
    }
    const gaps = await listGaps(deps.db, deps.config.network);
    if (head.number - state.cursorBlock > MAX_FOLLOW_BEHIND) {
      // Far behind: follow the head now, read the blocks in between as a backfill.
      const gap: ScanGap = { fromBlock: state.cursorBlock + 1, toBlock: head.number - 1, afterTime: state.cursorTime, beforeTime: head.timestamp };
      await insertGap(deps.db, deps.config.network, gap);
      gaps.push(gap);
      deps.log.info(
        { from_block: gap.fromBlock, to_block: gap.toBlock, blocks: gap.toBlock - gap.fromBlock + 1 },
        'chain: following the head; backfilling the blocks behind it',
      );
      state.cursorBlock = head.number - 1;
      state.cursorTime = head.timestamp - 1;
      dirty = true;
    }
    const addresses = new Set([...(await listWalletAddresses(deps.db, deps.config.network)), ...(await openInvoiceAddresses(deps.db, deps.config.network))]);
    pass = { deps, state, gaps, watched: watchedSet(addresses), pending: [], dirty, gapMoved: undefined, sinceFlush: 0 };

    await follow(pass);
    more = await backfill(pass, started);
    await flush(pass);
    if (rt.fault !== undefined) {
      deps.log.info('chain: TRON API reachable again');
      rt.fault = undefined;
    }
    setStatus(deps, rt.pool.providers.some((p) => p.health.state !== 'ok') ? 'degraded' : 'running', pass);
  } catch (err) {
    // What was read and verified before the fault is kept.
    if (pass) await flush(pass);
    if (err instanceof InconsistentBlock) {
      setStatus(deps, 'degraded', pass);
      return false;
    }
    if (!(err instanceof TronApiError)) throw err;
    logFault(deps, err);
    setStatus(deps, 'degraded', pass);
    return false;
  }
  return more;
}

/** Block number of the first block at or after `t`, estimated low (missed slots make real numbers higher). */
function blockFor(head: BlockRef, t: number, intervalMs: number): number {
  return head.number - Math.ceil(Math.max(0, head.timestamp - t) / intervalMs);
}

async function refreshHead(deps: AppDeps): Promise<BlockRef> {
  const rt = deps.chain;
  const { value } = await rt.pool.call(
    () => deps.clock.now(),
    (c) => c.solidHead(),
  );
  if (!rt.head || value.number >= rt.head.number) rt.head = value;
  rt.headReadAt = deps.clock.now();
  learnDelay(deps, value.timestamp);
  return rt.head;
}

function learnDelay(deps: AppDeps, blockTimestamp: number): void {
  const rt = deps.chain;
  const seen = deps.clock.now() - blockTimestamp;
  if (seen >= 0 && (rt.solidDelayMs === undefined || seen < rt.solidDelayMs)) rt.solidDelayMs = seen;
  if (rt.solidDelayMs !== undefined && rt.solidDelayMs < rt.solidDelayLowMs) rt.solidDelayLowMs = 0;
}

/**
 * The delay to expect between a block's time and its solidification. Normally the least delay seen
 * (an upper bound); once per HEAD_REFRESH_MS, while the bounds are more than 300 ms apart, halfway
 * between the bounds (a probe: if the block is there, the upper bound drops; if not, the lower
 * bound rises, at the cost of one head read). Passes scheduled at the prediction would otherwise
 * never learn a smaller delay than the first one seen.
 */
function expectedDelay(deps: AppDeps): number | undefined {
  const rt = deps.chain;
  if (rt.solidDelayMs === undefined) return undefined;
  const probing = rt.solidDelayMs - rt.solidDelayLowMs > 300 && deps.clock.now() - rt.probedAt >= HEAD_REFRESH_MS;
  return probing ? Math.round((rt.solidDelayMs + rt.solidDelayLowMs) / 2) : rt.solidDelayMs;
}

/** Two consecutive blocks show the interval (never longer than TRON's 3 s: missed slots only lengthen a step). */
function learnInterval(rt: ChainRuntime, n: number, timestamp: number): void {
  const last = rt.lastBlock;
  if (last && last.number === n - 1) {
    const step = timestamp - last.timestamp;
    if (step >= 100 && step < rt.blockIntervalMs) rt.blockIntervalMs = step;
  }
  rt.lastBlock = { number: n, timestamp };
}

/** True when block n should be solidified by now, by the last head seen and the expected delay. */
function predictedSolid(deps: AppDeps, n: number): boolean {
  const rt = deps.chain;
  const delay = expectedDelay(deps);
  if (!rt.head || delay === undefined) return false;
  return rt.head.timestamp + (n - rt.head.number) * rt.blockIntervalMs + delay <= deps.clock.now();
}

/** Reads the follower's next blocks up to the solidified head. */
async function follow(pass: Pass): Promise<void> {
  const { deps } = pass;
  const rt = deps.chain;
  while (!rt.stopping) {
    const n = pass.state.cursorBlock + 1;
    let read: { infos: TxInfo[]; provider: Provider } | undefined;
    if (n > rt.head!.number) {
      if (!predictedSolid(deps, n)) {
        // Not due yet by the prediction; still look at the head once a poll when nothing is predicted.
        if (rt.solidDelayMs !== undefined) break;
      } else {
        const probe = expectedDelay(deps) !== rt.solidDelayMs;
        if (probe) rt.probedAt = deps.clock.now();
        read = await readBlock(deps, n);
        if (read.infos.length === 0) {
          // Not there yet (or an empty block: the head says which).
          rt.solidDelayLowMs = Math.max(rt.solidDelayLowMs, deps.clock.now() - (rt.head!.timestamp + (n - rt.head!.number) * rt.blockIntervalMs));
          // Predicted but not there: the delay grew (a slower provider, a missed slot); the head read below measures it again.
          if (!probe) rt.solidDelayMs = undefined;
          read = undefined;
        }
      }
      if (!read) {
        await refreshHead(deps);
        if (n > rt.head!.number) break;
      }
    }
    read ??= await readBlock(deps, n);
    // An empty block tells no time, unless it is the head just read: coverage stays at the last
    // block that did (a little lag, never too far).
    const time = read.infos[0]?.blockTimeStamp ?? (n === rt.head!.number ? rt.head!.timestamp : undefined);
    if (time !== undefined) learnDelay(deps, time);
    if (read.infos.length > 0) learnInterval(rt, n, read.infos[0]!.blockTimeStamp);
    await take(pass, n, read);
    pass.state.cursorBlock = n;
    if (time !== undefined) pass.state.cursorTime = Math.max(pass.state.cursorTime, time);
    pass.dirty = true;
    await maybeFlush(pass);
  }
}

/** Reads the gaps, oldest first, until the pass has used its time; true when some remain. */
async function backfill(pass: Pass, started: number): Promise<boolean> {
  const { deps } = pass;
  const rt = deps.chain;
  const budgetMs = rt.intervalMs * 0.8;
  while (pass.gaps.length > 0) {
    const gap = pass.gaps[0]!;
    while (gap.fromBlock <= gap.toBlock) {
      if (rt.stopping || performance.now() - started > budgetMs) return true;
      const n = gap.fromBlock;
      const read = await readBlock(deps, n);
      await take(pass, n, read);
      if (read.infos.length > 0) learnInterval(rt, n, read.infos[0]!.blockTimeStamp);
      const oldFrom = pass.gapMoved?.oldFrom ?? gap.fromBlock;
      gap.fromBlock = n + 1;
      gap.afterTime = Math.max(gap.afterTime, read.infos[0]?.blockTimeStamp ?? gap.afterTime);
      pass.gapMoved = { oldFrom, gap: gap.fromBlock <= gap.toBlock ? { ...gap } : undefined };
      await maybeFlush(pass);
    }
    await flush(pass);
    deps.log.info({ to_block: gap.toBlock }, 'chain: backfill complete');
    pass.gaps.shift();
  }
  return false;
}

/**
 * One block's infos. An empty answer for a block the head says is solidified is read once more
 * (a load-balanced provider may have asked a node that lags): only two empty reads make an empty block.
 */
async function readBlock(deps: AppDeps, n: number, avoid?: Provider): Promise<{ infos: TxInfo[]; provider: Provider }> {
  const now = () => deps.clock.now();
  const first = await deps.chain.pool.call(now, (c) => c.blockInfos(n), avoid);
  if (first.value.length > 0 || !deps.chain.head || n > deps.chain.head.number) return { infos: first.value, provider: first.provider };
  const second = await deps.chain.pool.call(now, (c) => c.blockInfos(n), first.provider);
  return { infos: second.value, provider: second.provider };
}

/** Verifies one block's transfers to the watched addresses and queues them for the next commit. */
async function take(pass: Pass, n: number, read: { infos: TxInfo[]; provider: Provider }): Promise<void> {
  const { deps } = pass;
  const found = transfersInBlock(read.infos, pass.watched, deps.config.network.usdtContract);
  const other = deps.chain.pool.other(read.provider, deps.clock.now());
  if (other && found.transfers.some((t) => t.amount > 0n)) {
    // It pays a watched address and another provider is available: its read must agree.
    const again = await deps.chain.pool.call(
      () => deps.clock.now(),
      (c) => c.blockInfos(n),
      read.provider,
    );
    if (blockDigest(transfersInBlock(again.value, pass.watched, deps.config.network.usdtContract)) !== blockDigest(found)) {
      deps.chain.figures.inconsistent_blocks += 1;
      read.provider.health.inconsistent_blocks += 1;
      if (again.provider !== read.provider) again.provider.health.inconsistent_blocks += 1;
      deps.log.error(
        { block: n, first_provider: read.provider.health.name, second_provider: again.provider.health.name },
        'chain: BLOCK READ INCONSISTENTLY: two reads of a solidified block disagree about payments to watched addresses; nothing from it is trusted; it will be read again',
      );
      throw new InconsistentBlock(`block ${n}`);
    }
  }
  for (const r of found.rejected) deps.log.info({ block: n, tx_hash: r.txHash, to: r.to, reason: r.reason }, 'chain: transfer rejected');
  if (found.transfers.length > 0) {
    pass.pending.push(...found.transfers);
    // Transfers commit with the cursor that covers them, at once (a payment is not held back).
    await flush(pass);
  }
}

async function maybeFlush(pass: Pass): Promise<void> {
  pass.sinceFlush += 1;
  if (pass.sinceFlush >= FLUSH_EVERY) await flush(pass);
}

/** Commits the queued transfers, the scan state and the gap, and expires what the coverage allows. */
async function flush(pass: Pass): Promise<void> {
  const { deps } = pass;
  pass.sinceFlush = 0;
  const transfers = pass.pending;
  pass.pending = [];
  const gap = pass.gapMoved;
  pass.gapMoved = undefined;
  const state = pass.dirty ? { ...pass.state } : undefined;
  pass.dirty = false;
  const { recorded, expired } = await commitScan(deps, {
    transfers,
    state,
    gap,
    unscanned: {
      scannedUntil: pass.state.cursorTime,
      gaps: pass.gaps.filter((g) => g.fromBlock <= g.toBlock).map((g) => ({ after: g.afterTime, before: g.beforeTime })),
    },
  });
  for (const r of recorded) {
    deps.log.info(
      { tx_hash: r.transfer.txHash, log_index: r.transfer.logIndex, block: r.transfer.blockNumber, kind: r.kind, invoice_id: r.invoiceId },
      'chain: transfer recorded',
    );
  }
  for (const inv of expired) deps.log.info({ invoice_id: inv.id }, 'chain: invoice expired');
}

function logFault(deps: AppDeps, err: TronApiError): void {
  const rt = deps.chain;
  const condition = `${err.kind}:${err.endpoint}`;
  const fields = {
    kind: err.kind,
    endpoint: err.endpoint,
    status: err.status,
    detail: err.message,
    providers: rt.pool.health().map((p) => ({ name: p.name, state: p.state, last_error: p.last_error })),
  };
  if (condition !== rt.fault) {
    rt.fault = condition;
    deps.log.warn(fields, 'chain: every TRON provider failed; nothing confirmed or expired past the last good block; retrying with backoff');
  } else {
    deps.log.debug(fields, 'chain: TRON provider fault persists');
  }
}

function setStatus(deps: AppDeps, state: 'idle' | 'running' | 'degraded', pass: Pass | undefined): void {
  const rt = deps.chain;
  const f = rt.figures;
  if (pass) {
    f.block = pass.state.cursorBlock;
    f.solid_head = rt.head?.number ?? null;
    f.behind_blocks = rt.head ? Math.max(0, rt.head.number - pass.state.cursorBlock) : null;
    f.gap_blocks = pass.gaps.reduce((sum, g) => sum + Math.max(0, g.toBlock - g.fromBlock + 1), 0);
  }
  deps.watcherStatus.state = state;
  if (state === 'idle') {
    deps.watcherStatus.lagSeconds = null;
  } else if (pass) {
    // Every block up to this time is read: the follower's block, or the oldest unread range's start.
    const covered = Math.min(pass.state.cursorTime, ...pass.gaps.filter((g) => g.fromBlock <= g.toBlock).map((g) => g.afterTime));
    deps.watcherStatus.lagSeconds = Math.max(0, Math.round((deps.clock.now() - covered) / 1000));
  }
}
