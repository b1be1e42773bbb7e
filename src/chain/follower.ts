/**
 * The scanner's two readers within a pass: the head follower (the next blocks up to the accepted
 * solidified head, or the block predicted to be solidified by now) and the backfill (the unread
 * ranges behind it, oldest first, with the time left). Both read through block-reader.ts; what
 * they find is committed through chain.service.ts with the cursor or gap that covers it.
 */
import { performance } from 'node:perf_hooks';
import { MINUTE } from '../lib/clock.js';
import { readBlock, type BlockRead } from './block-reader.js';
import { HEAD_REFRESH_MS } from './chain.runtime.js';
import { holdDispute, insertGap, resolveDispute, splitGap, type ScanGap, type ScanState } from '../payments/scan.repo.js';
import { commitScan } from './chain.service.js';
import { notifyDispute } from '../payments/dispute-mail.js';
import { NETWORKS } from '../chains/networks.js';
import { expectedDelay, learnDelay, learnInterval, refreshHead } from './head.js';
import type { TxInfo } from './tron.client.js';
import { transfersInBlock, type VerifiedTransfer, type WatchedSet } from './verifier.js';
import type { ChainRuntime } from './chain.runtime.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { chain: ChainRuntime; mailer: Mailer };

/** Blocks committed at once when none of them carries a transfer. */
const FLUSH_EVERY = 200;
/** A block the follower has waited at this long (a provider never serves it, or none can check it) is held as disputed and passed. */
export const DISPUTE_AFTER_MS = 2 * MINUTE;

/** One pass's working state. */
export interface Pass {
  deps: Deps;
  state: ScanState;
  gaps: ScanGap[];
  watched: WatchedSet;
  /** Transfers read since the last commit, and whether the state or a gap moved. */
  pending: VerifiedTransfer[];
  dirty: boolean;
  gapMoved: { oldFrom: number; gap: ScanGap | undefined } | undefined;
  sinceFlush: number;
}

/** True when block n should be solidified by now, by the last head seen and the expected delay. */
function predictedSolid(deps: Deps, n: number): boolean {
  const rt = deps.chain;
  const delay = expectedDelay(rt, deps.clock.now(), HEAD_REFRESH_MS);
  if (!rt.head || delay === undefined) return false;
  return rt.head.timestamp + (n - rt.head.number) * rt.blockIntervalMs + delay <= deps.clock.now();
}

/** Reads the follower's next blocks up to the solidified head. */
export async function follow(pass: Pass): Promise<void> {
  const { deps } = pass;
  const rt = deps.chain;
  while (!rt.stopping) {
    const n = pass.state.cursorBlock + 1;
    let read: BlockRead | undefined;
    if (n > rt.head!.number) {
      if (!predictedSolid(deps, n)) {
        // Not due yet by the prediction; still look at the head once a poll when nothing is predicted.
        if (rt.solidDelayMs !== undefined) break;
      } else {
        const probe = expectedDelay(rt, deps.clock.now(), HEAD_REFRESH_MS) !== rt.solidDelayMs;
        if (probe) rt.probedAt = deps.clock.now();
        read = await readBlock(deps, n, pass.watched, false);
        if (read.kind === 'wait' && read.unavailable) {
          rt.figures.reason = read.reason;
          break;
        }
        if (read.kind !== 'block') {
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
    read ??= await readBlock(deps, n, pass.watched, true);
    if (read.kind === 'wait') {
      const since = rt.waiting?.block === n ? rt.waiting.since : deps.clock.now();
      rt.waiting = { block: n, since };
      if (deps.clock.now() - since < DISPUTE_AFTER_MS) {
        rt.figures.reason = read.reason;
        break;
      }
      read = { kind: 'disputed', reason: `${read.reason} (waited ${Math.round((deps.clock.now() - since) / 1000)} s)` };
    }
    rt.waiting = undefined;
    if (read.kind === 'disputed') {
      await dispute(pass, n, read.reason, read.txHash ?? null);
      pass.state.cursorBlock = n;
      pass.dirty = true;
      continue;
    }
    const time = read.time;
    if (time !== undefined) {
      learnDelay(rt, deps.clock.now(), time);
      learnInterval(rt, n, time);
    }
    await take(pass, n, read.infos);
    pass.state.cursorBlock = n;
    if (time !== undefined) pass.state.cursorTime = Math.max(pass.state.cursorTime, time);
    pass.dirty = true;
    await maybeFlush(pass);
  }
}

/**
 * Holds block n as disputed: nothing from it is recorded, and it becomes a one-block unread range
 * (so no invoice whose window meets it expires, and the backfill reads it again later).
 */
async function dispute(pass: Pass, n: number, reason: string, txHash: string | null): Promise<void> {
  const { deps } = pass;
  await holdBlock(deps, n, reason, txHash);
  const at = deps.chain.head?.timestamp ?? pass.state.cursorTime;
  const gap: ScanGap = { fromBlock: n, toBlock: n, afterTime: pass.state.cursorTime, beforeTime: Math.max(at, pass.state.cursorTime + 1) };
  if (!pass.gaps.some((g) => g.fromBlock <= n && n <= g.toBlock)) {
    await insertGap(deps.db, deps.config.network, gap);
    pass.gaps.push(gap);
    pass.gaps.sort((a, b) => a.fromBlock - b.fromBlock);
  }
}

/**
 * Records (or refreshes) the durable dispute of block n. A new dispute is logged and mailed to the
 * support staff once; one seen again only moves its last_seen_at (at most once a minute).
 */
async function holdBlock(deps: Deps, n: number, reason: string, txHash: string | null): Promise<void> {
  const rt = deps.chain;
  const known = rt.disputes.get(n);
  const now = deps.clock.now();
  if (known && known.reason === reason && now - known.lastSeen < MINUTE) return;
  const { dispute: d, created } = await holdDispute(deps.db, deps.config.network, { block: n, txHash, reason }, now);
  rt.disputes.set(n, d);
  if (created) {
    deps.log.error(
      { block: n, tx_hash: txHash, reason },
      'chain: BLOCK DISPUTED: the providers do not agree on it; nothing from it is confirmed; it is held and read again',
    );
    void notifyDispute(deps, NETWORKS[deps.config.network.id], d);
  }
}

/** Reads the gaps, oldest first, until the pass has used its time; true when some remain to read now. */
export async function backfill(pass: Pass, started: number): Promise<boolean> {
  const { deps } = pass;
  const rt = deps.chain;
  const budgetMs = rt.intervalMs * 0.8;
  for (let i = 0; i < pass.gaps.length;) {
    const gap = pass.gaps[i]!;
    let blocked = false;
    while (gap.fromBlock <= gap.toBlock) {
      if (rt.stopping || performance.now() - started > budgetMs) return true;
      const n = gap.fromBlock;
      const read = await readBlock(deps, n, pass.watched, true);
      if (read.kind !== 'block') {
        // (No second provider to ask now is an outage, not a disagreement: the range just waits.)
        const held = read.kind === 'disputed' ? read : read.unavailable ? undefined : waitedTooLong(deps, n, read.reason);
        if (held) await holdBlock(deps, n, held.reason, held.txHash ?? null);
        if (!held || gap.fromBlock === gap.toBlock) {
          // Not served yet (the rest of this range waits for a later pass), or a disputed block
          // that is a range of its own already (read again by the next pass).
          rt.figures.reason = `backfill held at block ${n}: ${read.reason}`;
          blocked = true;
          break;
        }
        // Disputed: the block becomes a one-block range of its own (kept, read again by later
        // passes) and the rest of this range goes on; invoices whose window meets it stay open.
        await flush(pass);
        const single: ScanGap = { fromBlock: n, toBlock: n, afterTime: gap.afterTime, beforeTime: Math.max(held.time ?? gap.beforeTime, gap.afterTime) + 1 };
        gap.fromBlock = n + 1;
        await splitGap(deps.db, deps.config.network, single, { ...gap });
        pass.gaps.splice(i, 0, single);
        i += 1;
        continue;
      }
      rt.backfillWaiting = undefined;
      if (rt.disputes.delete(n)) {
        await resolveDispute(deps.db, deps.config.network, n, deps.clock.now());
        deps.log.info({ block: n }, 'chain: disputed block now read consistently: dispute resolved');
      }
      await take(pass, n, read.infos);
      if (read.time !== undefined) learnInterval(rt, n, read.time);
      const oldFrom = pass.gapMoved?.oldFrom ?? gap.fromBlock;
      gap.fromBlock = n + 1;
      gap.afterTime = Math.max(gap.afterTime, read.time ?? gap.afterTime);
      pass.gapMoved = { oldFrom, gap: gap.fromBlock <= gap.toBlock ? { ...gap } : undefined };
      await maybeFlush(pass);
    }
    await flush(pass);
    if (blocked) {
      i += 1;
      continue;
    }
    deps.log.info({ to_block: gap.toBlock }, 'chain: backfill complete');
    pass.gaps.splice(i, 1);
  }
  return false;
}

/**
 * A backfill block one provider does not serve yet waits as the follower's does, up to
 * DISPUTE_AFTER_MS; after that it is held as disputed, so one provider's silence never holds the
 * rest of a range.
 */
function waitedTooLong(deps: Deps, n: number, reason: string): { reason: string; txHash?: string; time?: number } | undefined {
  const rt = deps.chain;
  const since = rt.backfillWaiting?.block === n ? rt.backfillWaiting.since : deps.clock.now();
  rt.backfillWaiting = { block: n, since };
  if (deps.clock.now() - since < DISPUTE_AFTER_MS) return undefined;
  rt.backfillWaiting = undefined;
  return { reason: `${reason} (waited ${Math.round((deps.clock.now() - since) / 1000)} s)` };
}

/** Queues one block's transfers to the watched addresses for the next commit (at once when there are any). */
async function take(pass: Pass, n: number, infos: TxInfo[]): Promise<void> {
  const { deps } = pass;
  const found = transfersInBlock(infos, pass.watched, deps.config.network.usdtContract);
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
export async function flush(pass: Pass): Promise<void> {
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
