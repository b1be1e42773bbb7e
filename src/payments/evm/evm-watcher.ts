/**
 * The EVM watcher: one worker per network of [[evm.networks]], reading through the EVM reader
 * (src/chains/evm/reader.ts) and recording through the payments layer. Its shape follows demand:
 *
 * - Nothing to watch (no wallet receives on the network): no request at all.
 * - Idle (no invoice open on the network): a final read every 10 minutes, in ranges as large as
 *   the providers take, so late and wrong payments are still recorded; about 144 final heads and a
 *   getLogs or two each a day per provider.
 * - Busy (an invoice open): every poll (5 s by default) one `eth_getLogs` up to `latest` for the
 *   open invoices' addresses, the providers taking turns, which shows a payment as seen within
 *   seconds (seen.ts); a final read every 2 minutes, or as soon as a seen payment should be final.
 *   Past 100 open addresses (one query's recipients) the poll slows in step with the queries it takes.
 *   The head is read only with a final read, never per poll.
 *
 * docs/payments.md ("What it costs") gives the measured figures.
 */
import type { EvmWatch } from '../../chains/evm/watch.js';
import type { NetworkId } from '../../chains/networks.js';
import { MINUTE } from '../../lib/clock.js';
import type { Worker } from '../../lib/loop.js';
import { openInvoiceAddresses, openInvoices } from '../../invoices/invoice-payments.js';
import { listNetworkAddresses } from '../../wallets/wallets.repo.js';
import { finalRead } from './final-read.js';
import { finalDueAt, seenRead, settleSeen } from './seen.js';
import type { EvmWatches } from '../../chains/evm/watch.js';
import type { CoreDeps } from '../../core/core-deps.js';
import type { Mailer } from '../../email/mailer.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { evm: EvmWatches; mailer: Mailer };

/** Between final reads while nothing is open on the network (a slow catch-up in large ranges). */
export const IDLE_FINAL_MS = 10 * MINUTE;
/** Between final reads while an invoice is open (sooner when a seen payment should be final by then). */
export const BUSY_FINAL_MS = 2 * MINUTE;

export function evmWorker(deps: Deps, network: NetworkId): Worker {
  const w = deps.evm.get(network);
  if (!w) throw new Error(`no EVM watcher state for ${network}`);
  return {
    name: `chain-${network}`,
    // A pass every poll interval asks the database only, unless a read is due: an invoice created
    // while the network is idle is watched within one poll.
    intervalMs: w.seenPollMs,
    runOnce: () => runEvmOnce(deps, w),
    nextDelayMs: () => Math.max(0, Math.min(w.nextFinalAt, w.figures.busy ? w.nextSeenAt : Infinity) - deps.clock.now()),
    onStop: () => {
      w.stopping = true;
    },
  };
}

/**
 * One pass of a network's watcher: what is due of a seen read and a final read. True when more
 * final blocks wait to be read now (a catch-up: the loop runs again at once). A pass that throws is
 * a failed pass: the figures say degraded with the reason, and the next pass tries again.
 */
export async function runEvmOnce(deps: Deps, w: EvmWatch): Promise<boolean> {
  try {
    return await evmPass(deps, w);
  } catch (err) {
    const reason = `pass failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
    if (w.figures.reason !== reason) deps.log.error({ err, network: w.network.id }, 'chain: EVM watcher pass failed');
    w.figures.reason = reason;
    w.figures.state = 'degraded';
    return false;
  }
}

async function evmPass(deps: Deps, w: EvmWatch): Promise<boolean> {
  const now = deps.clock.now();
  const openAddresses = await openInvoiceAddresses(deps.db, w.network);
  const watched = [...new Set([...(await listNetworkAddresses(deps.db, w.network.id)), ...openAddresses])];
  const open = await openInvoices(deps.db, w.network);
  const wasBusy = w.figures.busy;
  w.figures.busy = open.count > 0;
  // An invoice opened on an idle network: a final read now (the head, the cursor), then seen reads.
  if (w.figures.busy && !wasBusy) w.nextFinalAt = Math.min(w.nextFinalAt, now);
  if (watched.length === 0) {
    w.figures.state = 'idle';
    w.figures.reason = null;
    // The first wallet registered is read at the next pass, a poll interval on (never at once: the
    // loop would spin on the database while nothing is watched).
    w.nextFinalAt = now + w.seenPollMs;
    return false;
  }
  let more = false;
  const due = Math.min(w.nextFinalAt, w.figures.busy ? await finalDueAt(deps, w) : Infinity);
  if (now >= due && !w.stopping) {
    w.nextFinalAt = now + (w.figures.busy ? BUSY_FINAL_MS : IDLE_FINAL_MS);
    w.lastFinalAt = now;
    w.figures.reason = null;
    const outcome = await finalRead(deps, w, watched, open.oldestCreatedAt);
    if (outcome.to !== undefined) await settleSeen(deps, w, outcome);
    more = outcome.more;
    // A catch-up goes on at once; the next regular read after it.
    if (more) w.nextFinalAt = now;
  }
  // After the final read: what it recorded is not told as seen, and the window starts at its head.
  if (w.figures.busy && now >= w.nextSeenAt && !w.stopping) {
    // One query a poll per group of recipients: past one group the poll slows in step, so the day's
    // count stays that of one query every poll interval.
    const groups = Math.max(1, Math.ceil(openAddresses.length / w.providers[0]!.reader.recipientsPerQuery()));
    w.nextSeenAt = now + w.seenPollMs * groups;
    await seenRead(deps, w, openAddresses);
  }
  // A held block holds only the invoices whose window meets it (shown in /health), not the watcher.
  w.figures.state = w.figures.reason !== null ? 'degraded' : w.figures.busy ? 'running' : 'idle';
  w.figures.lastPassAt = now;
  return more;
}
