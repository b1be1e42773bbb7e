/**
 * The chain watcher: a block scanner. It reads every solidified block once
 * (`/walletsolidity/gettransactioninfobyblocknum`), from a durable cursor up to the solidified
 * head, and records every USDT Transfer log to a registered wallet address. One request per block
 * and provider (about 28 800 a day each), whatever the number of addresses, payments or spam.
 *
 * - Exact coverage: a scanned block covers every address up to its time, so an invoice expires
 *   once the scanned blocks pass its `expires_at` and no unread (or disputed) range meets its window.
 * - Head first: when the cursor is far behind (downtime, a first start), the follower jumps to the
 *   head and the blocks in between become a gap, read with the time left in each pass, oldest
 *   first. New payments never wait behind a backfill. The head is evidence, not truth (head.ts).
 * - Few head reads: the next block's solidification time is predicted from the last head seen and
 *   the learned delay between a block's time and its solidification; the next pass runs then and
 *   asks for that block. The head is read when a block is not there yet, to start, and every 100 s.
 * - No single provider's word: with more than one provider every block is read in full by one (in
 *   turns) and checked by another, by its transaction count and each paying transaction by id, or
 *   in full with tron.cross_check = "ids" (block-reader.ts); empty is not proof; malformed answers
 *   are provider faults. What two providers return alike by transaction id settles what their block
 *   answers differ about; what cannot be decided is a durable dispute (chain_disputes), which
 *   holds only the invoices whose window meets that block.
 * - Idle: with no open invoice and the linger (tron.linger_hours after the last one closed) over,
 *   the scanner makes no TRON request. When an invoice opens it resumes from the block of that
 *   invoice's creation, or from its cursor if that is later.
 * - Seen, then final: while an invoice is open, the latest blocks are read too, every 5 s in one
 *   request, to tell a payment as seen before it solidifies (seen-read.ts); nothing confirms from them.
 * Follower and backfill: follower.ts.
 */
import { performance } from 'node:perf_hooks';
import { MINUTE } from '../lib/clock.js';
import type { Worker } from '../lib/loop.js';
import { openInvoiceAddresses, openInvoices } from '../invoices/invoice-payments.js';
import { BLOCK_INTERVAL_MS, HEAD_REFRESH_MS, MAX_FOLLOW_BEHIND, START_MARGIN_BLOCKS } from './chain.runtime.js';
import { insertGap, listGaps, listOpenDisputes, loadScanState, saveScanState, updateGap, type ScanGap, type ScanState } from '../payments/scan.repo.js';
import { listWalletAddresses } from './chain.repo.js';
import { backfill, flush, follow, type Pass } from './follower.js';
import { blockFor, expectedDelay, logRefusedHeads, refreshHead } from './head.js';
import { seenDueAt, seenRead, settleTronSeen } from './seen-read.js';
import { TronApiError, type BlockRef } from './tron.client.js';
import { watchedSet } from './verifier.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { ChainRuntime } from './chain.runtime.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { watcherStatus: WatcherStatus; chain: ChainRuntime; mailer: Mailer };

export {
  BLOCK_INTERVAL_MS,
  HEAD_REFRESH_MS,
  MAX_FOLLOW_BEHIND,
  START_MARGIN_BLOCKS,
  createChainRuntime,
  type ChainRuntime,
  type ScanFigures,
} from './chain.runtime.js';

export function chainWorker(deps: Deps): Worker {
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
function nextBlockDelay(deps: Deps): number | undefined {
  const rt = deps.chain;
  const delay = expectedDelay(rt, deps.clock.now(), HEAD_REFRESH_MS);
  if (deps.watcherStatus.state !== 'running' || !rt.head || delay === undefined || rt.figures.block === null) return undefined;
  const due = rt.head.timestamp + (rt.figures.block + 1 - rt.head.number) * rt.blockIntervalMs + delay;
  // While an invoice is open, the latest blocks are read every SEEN_POLL_MS too (seen-read.ts).
  return Math.max(200, Math.min(due, seenDueAt(deps) ?? Infinity) - deps.clock.now());
}

/**
 * One scanner pass: follow the head, then backfill with the time left. Returns true when a
 * backfill remains (the loop runs again at once; every pass follows the head first). Any exception
 * is a failed pass: /health says degraded with the reason at once, and the next pass tries again.
 */
export async function runOnce(deps: Deps): Promise<boolean> {
  try {
    const more = await pass(deps);
    deps.chain.failedPasses = 0;
    return more;
  } catch (err) {
    const rt = deps.chain;
    rt.failedPasses += 1;
    const reason = `pass failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
    if (rt.failedPasses === 1 || rt.figures.reason !== reason) deps.log.error({ err, failed_passes: rt.failedPasses }, 'chain: scanner pass failed');
    rt.figures.reason = reason;
    deps.watcherStatus.state = 'degraded';
    return false;
  }
}

async function pass(deps: Deps): Promise<boolean> {
  const rt = deps.chain;
  const now = deps.clock.now();
  const stored = await loadScanState(deps.db, deps.config.network);
  const open = await openInvoices(deps.db, deps.config.network);
  const wasActive = stored !== undefined && now < stored.activeUntil;
  if (open.count === 0 && !wasActive) {
    rt.seen.next = undefined;
    setStatus(deps, 'idle', undefined);
    return false;
  }
  const activeUntil = open.count > 0 ? now + rt.lingerMs : stored!.activeUntil;
  if (rt.pool.providers.every((p) => p.until > now)) {
    // Every provider is backing off: no request until one may be asked again.
    setStatus(deps, 'degraded', undefined);
    return false;
  }
  if (!rt.disputesLoaded) {
    // The open disputes outlive a restart: nothing from those blocks confirms until they are resolved.
    for (const d of await listOpenDisputes(deps.db, deps.config.network)) if (d.block !== null) rt.disputes.set(d.block, d);
    rt.disputesLoaded = true;
  }
  const started = performance.now();
  let current: Pass | undefined;
  let more = false;
  rt.figures.reason = null;
  try {
    if (!rt.head || now - rt.headReadAt >= HEAD_REFRESH_MS) await refreshHead(deps, rt.head ? undefined : stored);
    logRefusedHeads(deps);
    if (!rt.head) {
      setStatus(deps, 'degraded', undefined);
      return false;
    }
    const head = rt.head;
    let state: ScanState;
    let dirty = false;
    const resumeFrom = open.oldestCreatedAt === null ? undefined : open.oldestCreatedAt - START_MARGIN_BLOCKS * BLOCK_INTERVAL_MS;
    const gaps = await listGaps(deps.db, deps.config.network);
    if (!stored) {
      // First start: from the oldest open invoice's creation.
      const start = Math.min(head.number, blockFor(head, resumeFrom!, rt.blockIntervalMs));
      state = { cursorBlock: start - 1, cursorTime: resumeFrom!, activeUntil };
      dirty = true;
    } else {
      state = { ...stored, activeUntil };
      dirty = Math.abs(activeUntil - stored.activeUntil) >= MINUTE;
      if (!rt.startChecked) dirty = (await correctBeyondHead(deps, state, gaps, head)) || dirty;
      if (!wasActive && resumeFrom !== undefined && blockFor(head, resumeFrom, rt.blockIntervalMs) > state.cursorBlock + 1) {
        // Resuming after an idle time: the blocks before the oldest open invoice matter to nobody.
        state.cursorBlock = Math.min(head.number, blockFor(head, resumeFrom, rt.blockIntervalMs)) - 1;
        state.cursorTime = Math.max(state.cursorTime, resumeFrom);
        dirty = true;
      }
    }
    rt.startChecked = true;
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
    current = { deps, state, gaps, watched: watchedSet(addresses), pending: [], dirty, gapMoved: undefined, sinceFlush: 0 };

    await follow(current);
    more = await backfill(current, started);
    await flush(current);
    await settleTronSeen(deps, current.state.cursorBlock, current.gaps);
    await seenRead(deps, open.count);
    if (rt.fault !== undefined) {
      deps.log.info('chain: TRON API reachable again');
      rt.fault = undefined;
    }
    logRefusedHeads(deps);
    // A disputed block holds only the invoices whose window meets it, and a provider set aside is
    // still asked after the others: payments go on confirming (both are shown in /health).
    const unwell = rt.pool.providers.some((p) => p.health.state === 'backing_off');
    setStatus(deps, unwell ? 'degraded' : 'running', current);
  } catch (err) {
    // What was read and verified before the fault is kept.
    if (current) await flush(current);
    if (!(err instanceof TronApiError)) throw err;
    logRefusedHeads(deps);
    logFault(deps, err);
    rt.figures.reason = `every provider failed: ${err.message}`.slice(0, 300);
    setStatus(deps, 'degraded', current);
    return false;
  }
  return more;
}

/**
 * A cursor or gap stored beyond the credible head (a head an earlier version accepted from a lying
 * provider) is brought back to it, once at start: the blocks up to the head are read again.
 */
async function correctBeyondHead(deps: Deps, state: ScanState, gaps: ScanGap[], head: BlockRef): Promise<boolean> {
  if (state.cursorBlock <= head.number + MAX_FOLLOW_BEHIND) return false;
  const network = deps.config.network;
  deps.log.warn({ cursor_block: state.cursorBlock, solid_head: head.number }, 'chain: stored cursor beyond every credible head; brought back to the head');
  for (const g of [...gaps]) {
    if (g.toBlock <= head.number) continue;
    const fixed = g.fromBlock <= head.number ? { ...g, toBlock: head.number, beforeTime: Math.min(g.beforeTime, head.timestamp) } : undefined;
    await updateGap(deps.db, network, g.fromBlock, fixed);
    gaps.splice(gaps.indexOf(g), 1, ...(fixed ? [fixed] : []));
  }
  state.cursorBlock = Math.min(state.cursorBlock, head.number);
  state.cursorTime = Math.min(state.cursorTime, head.timestamp);
  await saveScanState(deps.db, network, state, deps.clock.now());
  return true;
}

function logFault(deps: Deps, err: TronApiError): void {
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

function setStatus(deps: Deps, state: 'idle' | 'running' | 'degraded', pass: Pass | undefined): void {
  const rt = deps.chain;
  const f = rt.figures;
  f.disputed_blocks = rt.disputes.size;
  if (state === 'degraded' && f.reason === null) {
    const p = rt.pool.providers.find((q) => q.health.state === 'backing_off') ?? rt.pool.providers.find((q) => q.health.state !== 'ok');
    f.reason = p ? `${p.health.name} ${p.health.state}: ${p.health.last_error ?? ''}` : rt.disputes.size > 0 ? `${rt.disputes.size} disputed block(s)` : null;
  }
  if (state === 'running' && rt.waiting === undefined) f.reason = null;
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
