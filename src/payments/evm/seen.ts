/**
 * Seen, then final, on an EVM network. While an invoice is open there, each poll asks one provider
 * (they take turns) for the logs from just above the last final head up to `latest`, for the open
 * invoices' addresses only: one `eth_getLogs` and no head read. A matching transfer there is seen
 * (src/payments/seen.ts tells it); a seen transfer that a later poll over its block no longer
 * returns is looked up by its block: another hash there (or none, on a chain that grew shorter while
 * the provider shows a longer one) means it left the chain, and it is dropped. Its block's final
 * read settles it either way (final-read.ts, then settleSeen).
 */
import { transferKey } from '../../chains/family.js';
import { ReadRefused } from '../../chains/evm/reader.js';
import { RpcError } from '../../chains/evm/rpc.js';
import type { EvmWatch } from '../../chains/evm/watch.js';
import { listWaitingSeen } from '../seen.repo.js';
import { dropSeen, finalityDelayMs, noteSeen, settleFinalRange } from '../seen.js';
import { attempt, usableProviders } from './evm-providers.js';
import type { FinalOutcome } from './final-read.js';
import type { CoreDeps } from '../../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'>;

/** Blocks read again below the estimated latest head at each poll (reorganizations are shallower). */
const SEEN_OVERLAP_BLOCKS = 64;

/**
 * Where a seen read starts: just above the final head, or (on a chain whose final head trails far,
 * as Arbitrum's 20 minutes of 0.25 s blocks) a little below the latest head the last final read saw,
 * by two polls' worth of blocks and a margin. Every block above that was there at an earlier poll was
 * read by it (the latest head known moves only with a final read, which comes before the polls that
 * use it); transfers seen earlier are kept, and the final read of their block settles them.
 */
function seenFrom(w: EvmWatch, finalHead: number): bigint {
  if (w.figures.latestHead === null) return BigInt(finalHead) + 1n;
  const recent = w.figures.latestHead - Math.ceil((2 * w.seenPollMs) / w.network.blockTimeMs) - SEEN_OVERLAP_BLOCKS;
  return BigInt(Math.max(finalHead + 1, recent));
}

/** One read of the blocks above the final head for the open invoices' addresses. */
export async function seenRead(deps: Deps, w: EvmWatch, openAddresses: readonly string[]): Promise<void> {
  const finalHead = w.figures.finalHead ?? w.figures.cursorBlock;
  if (openAddresses.length === 0 || finalHead === null) return;
  const usable = usableProviders(w, deps.clock.now());
  if (usable.length === 0) return;
  const p = usable[w.seenTurn++ % usable.length]!;
  const from = seenFrom(w, finalHead);
  const read = await attempt(
    p,
    () => deps.clock.now(),
    () => p.reader.readTransfers({ from, to: 'latest', recipients: openAddresses, finalAtOrBelow: BigInt(finalHead) }),
  );
  if (!read.ok) return;
  p.health.droppedLogs += read.value.dropped.length;
  await noteSeen(deps, w.network, w.finality, read.value.transfers);
  if (!read.value.complete) return;
  // A waiting transfer of a block this read covered and did not return: is its block still there?
  const returned = new Set(read.value.transfers.map(transferKey));
  const open = new Set(openAddresses);
  const missing = (await listWaitingSeen(deps.db, w.network.id)).filter(
    (r) => BigInt(r.blockNumber) >= from && open.has(r.to) && !returned.has(transferKey(r)),
  );
  const gone = [];
  for (const r of missing) {
    try {
      // No block at that height from this provider (it lags) says nothing; another hash says the block is gone.
      const header = await p.reader.block(BigInt(r.blockNumber));
      if (header.hash !== r.blockHash.toLowerCase()) gone.push(r);
    } catch (err) {
      if (!(err instanceof ReadRefused) && !(err instanceof RpcError)) throw err;
    }
  }
  await dropSeen(deps, w.network, gone, `block ${gone.map((r) => r.blockNumber).join(', ')} replaced by another at its height`);
}

/** When a final read is due for the seen transfers: the earliest expected finality among them (never sooner than a poll after the last final read). */
export async function finalDueAt(deps: Deps, w: EvmWatch): Promise<number> {
  const waiting = await listWaitingSeen(deps.db, w.network.id);
  if (waiting.length === 0) return Infinity;
  const delay = finalityDelayMs(w.network, w.finality);
  return Math.max(w.lastFinalAt + w.seenPollMs, Math.min(...waiting.map((r) => r.seenAt + delay)));
}

/** After a final read: the seen transfers of the blocks it read that it did not find are dropped. */
export async function settleSeen(deps: Deps, w: EvmWatch, outcome: FinalOutcome): Promise<void> {
  if (outcome.to === undefined) return;
  await settleFinalRange(deps, w.network, { to: outcome.to, final: outcome.agreed, held: outcome.disagreements.map((d) => d.key), heldBlocks: outcome.gaps });
}
