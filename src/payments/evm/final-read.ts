/**
 * An EVM network's final read: the blocks from its cursor up to the final head, read as final.
 *
 * - The final head is the lower of the heads the providers asked show as final (`finalized`,
 *   `safe` or a confirmation count, each checked by the reader): a head is evidence, never truth,
 *   and nothing is final here that one provider does not call final.
 * - With two providers or more, the range is read through two and compared transfer by transfer
 *   (`compareReads`): only what both show alike is recorded. A transfer one shows and the other does
 *   not (an omission, or a forgery), or that they show otherwise, is a durable dispute
 *   (chain_disputes) of its block, and that block a one-block unread range of its own: the invoices
 *   whose window meets its time stay open, every other invoice confirms and expires as usual, and
 *   the block is read again at each final read until the two agree.
 * - The cursor moves only over a range every provider asked read completely; a provider that fails,
 *   or an answer the reader cannot settle (a log of a block that is no longer canonical), leaves it
 *   where it is for the next read. It never jumps ahead of what was read.
 */
import { compareReads, settleByMajority, type Disagreement } from '../../chains/agreement.js';
import type { EvmProvider, EvmWatch } from '../../chains/evm/watch.js';
import type { ChainHead, VerifiedTransfer } from '../../chains/family.js';
import { holdDisagreements } from '../hold-disputes.js';
import { recordTransfers } from '../record.js';
import { listGaps, loadScanState, resolveDispute, type ScanGap, type ScanState } from '../scan.repo.js';
import { attempt, usableProviders } from './evm-providers.js';
import { checkRecordedBlocks } from './reorg-check.js';
import type { Mailer } from '../../email/mailer.js';
import type { CoreDeps } from '../../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { mailer: Mailer };

/** Blocks read in one pass at most (a catch-up goes on in the next pass at once). */
const MAX_PASS_BLOCKS = 50_000n;
/** Blocks read before the estimate of the oldest open invoice's creation block at a first start (clocks differ). */
const START_MARGIN_BLOCKS = 20n;

/** What a final read did: whether more blocks are final than it read, and the transfers it took. */
export interface FinalOutcome {
  more: boolean;
  /** The last block read as final (undefined when nothing was read). */
  to: bigint | undefined;
  agreed: VerifiedTransfer[];
  disagreements: Disagreement[];
  /** The blocks still held (disputed), after this read. */
  gaps: ScanGap[];
}

/** The transfers every asked provider read alike in [from, to], and those they did not; undefined when a read failed or was incomplete. */
async function readAgreed(
  deps: Deps,
  w: EvmWatch,
  asked: EvmProvider[],
  from: bigint,
  to: bigint,
  recipients: readonly string[],
): Promise<{ agreed: VerifiedTransfer[]; disagreements: Disagreement[] } | undefined> {
  const reads = [];
  let settled = 0;
  for (const p of asked) {
    const r = await attempt(
      p,
      () => deps.clock.now(),
      () => p.reader.readTransfers({ from, to, recipients, finalAtOrBelow: to }),
    );
    if (!r.ok) {
      w.figures.reason = `final read of blocks ${from}-${to} failed: ${r.error}`;
      return undefined;
    }
    p.health.droppedLogs += r.value.dropped.length;
    if (r.value.complete) settled += 1;
    reads.push({ provider: p.health.name, transfers: r.value.transfers });
  }
  // Alone, an answer that cannot be settled is read again. Beside a settled one, what the unsettled
  // provider verified is still compared: a log it could not place in its block is no payment, and a
  // transfer the other shows that it lacks is a disagreement as any other.
  if (settled === 0) {
    w.figures.reason = `blocks ${from}-${to} answered with a log its own block does not hold (another hash, or not in its bloom); read again`;
    return undefined;
  }
  if (reads.length === 1) return { agreed: [...reads[0]!.transfers], disagreements: [] };
  const result = compareReads(reads);
  for (const d of result.disagreements) {
    // Each provider whose version is missing counts the disagreement (a forgery shows as the other's omission).
    for (const v of d.versions) if (!v.transfer) asked.find((p) => p.health.name === v.provider)!.health.disagreements += 1;
  }
  if (result.disagreements.length === 0) return result;
  const majority = await askThird(deps, w, asked, result.disagreements, recipients);
  return majority ? { agreed: [...result.agreed, ...majority.agreed], disagreements: majority.left } : result;
}

/**
 * With a third provider configured and answering, the disagreed transfers' blocks are put to it:
 * two of three showing the same stands (docs/payments.md, "Three providers or more"); otherwise, or
 * when it cannot answer, the disagreement stays a dispute.
 */
async function askThird(
  deps: Deps,
  w: EvmWatch,
  asked: EvmProvider[],
  disagreements: Disagreement[],
  recipients: readonly string[],
): Promise<ReturnType<typeof settleByMajority> | undefined> {
  const third = usableProviders(w, deps.clock.now()).find((p) => !asked.includes(p));
  if (!third) return undefined;
  const blocks = disagreements.map((d) => d.versions.find((v) => v.transfer)!.transfer!.blockNumber);
  const from = blocks.reduce((a, b) => (b < a ? b : a));
  const to = blocks.reduce((a, b) => (b > a ? b : a));
  const r = await attempt(
    third,
    () => deps.clock.now(),
    () => third.reader.readTransfers({ from, to, recipients, finalAtOrBelow: to }),
  );
  if (!r.ok || !r.value.complete) return undefined;
  const settled = settleByMajority(disagreements, { provider: third.health.name, transfers: r.value.transfers.filter((t) => blocks.includes(t.blockNumber)) });
  for (const o of settled.outvoted) {
    asked.find((p) => p.health.name === o.provider)!.health.outvoted += 1;
    deps.log.warn({ network: w.network.id, transfer: o.key, provider: o.provider }, 'chain: provider outvoted by the two others about a transfer');
  }
  return settled;
}

/** The final head every asked provider calls final: the lowest of theirs; undefined when one fails. */
async function agreedFinalHead(deps: Deps, w: EvmWatch, asked: EvmProvider[]): Promise<ChainHead | undefined> {
  let final: ChainHead | undefined;
  let latest: ChainHead | undefined;
  for (const p of asked) {
    const r = await attempt(
      p,
      () => deps.clock.now(),
      () => p.reader.finalHead(),
    );
    if (!r.ok) {
      w.figures.reason = `final head: ${r.error}`;
      return undefined;
    }
    if (!final || r.value.number < final.number) final = r.value;
    const l = p.reader.latestAtFinal;
    // The lower latest too: a provider inflating its head cannot lift the seen reads' window past blocks not read.
    if (l && (!latest || l.number < latest.number)) latest = l;
  }
  w.figures.finalHead = final ? Number(final.number) : null;
  if (latest) w.figures.latestHead = Number(latest.number);
  return final;
}

/** Where a network's first read starts: a little before the oldest open invoice's creation, else at the final head. */
function startBlock(w: EvmWatch, final: ChainHead, oldestOpenAt: number | null): bigint {
  if (oldestOpenAt === null || oldestOpenAt >= final.timeMs) return final.number + 1n;
  const behind = BigInt(Math.ceil((final.timeMs - oldestOpenAt) / w.network.blockTimeMs)) + START_MARGIN_BLOCKS;
  return behind > final.number ? 0n : final.number - behind;
}

/** The providers a final read asks: two where two are configured (one alone only when one is all there is). */
export function finalReaders(w: EvmWatch, now: number): EvmProvider[] | string {
  const usable = usableProviders(w, now);
  const wanted = Math.min(2, w.providers.length);
  if (usable.length >= wanted) return usable.slice(0, wanted);
  if (usable.length === 0) return 'every provider is backing off';
  return `only ${usable[0]!.health.name} answers now: nothing moves on one provider's word; waiting for a second`;
}

/** Reads the held blocks again; a block both providers now read alike is recorded, its range closed and its dispute resolved. */
async function rereadGaps(
  deps: Deps,
  w: EvmWatch,
  asked: EvmProvider[],
  gaps: ScanGap[],
  final: bigint,
  recipients: readonly string[],
  out: FinalOutcome,
): Promise<void> {
  for (const g of [...gaps]) {
    if (BigInt(g.toBlock) > final) continue;
    const read = await readAgreed(deps, w, asked, BigInt(g.fromBlock), BigInt(g.toBlock), recipients);
    if (!read || read.disagreements.length > 0) continue;
    gaps.splice(gaps.indexOf(g), 1);
    await recordTransfers(deps, w.network, { transfers: read.agreed, gap: { oldFrom: g.fromBlock, gap: undefined } });
    out.agreed.push(...read.agreed);
    for (let b = g.fromBlock; b <= g.toBlock; b++) {
      if (await resolveDispute(deps.db, w.network, b, deps.clock.now())) {
        deps.log.info({ network: w.network.id, block: b }, 'chain: disputed block now read alike by the providers: dispute resolved');
      }
    }
  }
}

/**
 * One final read of a network: the held blocks again, then the next range up to the agreed final
 * head (at most MAX_PASS_BLOCKS), recorded with the cursor that covers it, and the invoices of the
 * network whose window the read covers expired.
 */
export async function finalRead(deps: Deps, w: EvmWatch, recipients: readonly string[], oldestOpenAt: number | null): Promise<FinalOutcome> {
  const out: FinalOutcome = { more: false, to: undefined, agreed: [], disagreements: [], gaps: [] };
  const asked = finalReaders(w, deps.clock.now());
  if (typeof asked === 'string') {
    w.figures.reason = asked;
    return out;
  }
  const final = await agreedFinalHead(deps, w, asked);
  if (!final) {
    // Under a confirmation count, a final head that changed is a reorganization deeper than the count:
    // the transfers recorded below it are looked at again.
    if (w.figures.finalHead !== null) await checkRecordedBlocks(deps, w, asked[0]!, BigInt(w.figures.finalHead));
    return out;
  }
  const stored = await loadScanState(deps.db, w.network);
  const state: ScanState = stored ?? {
    cursorBlock: Number(startBlock(w, final, oldestOpenAt)) - 1,
    cursorTime: Math.min(final.timeMs, oldestOpenAt ?? final.timeMs),
    activeUntil: 0,
  };
  const gaps = await listGaps(deps.db, w.network);
  await rereadGaps(deps, w, asked, gaps, final.number, recipients, out);
  const from = BigInt(state.cursorBlock) + 1n;
  let to = from + MAX_PASS_BLOCKS - 1n < final.number ? from + MAX_PASS_BLOCKS - 1n : final.number;
  let toTime = final.timeMs;
  if (from <= to) {
    const read = await readAgreed(deps, w, asked, from, to, recipients);
    if (!read) return out;
    if (to !== final.number) {
      const header = await attempt(
        asked[0]!,
        () => deps.clock.now(),
        () => asked[0]!.reader.block(to),
      );
      if (!header.ok) return out;
      toTime = header.value.timeMs;
    }
    await holdDisagreements(deps, w.network, read.disagreements, gaps);
    out.agreed.push(...read.agreed);
    out.disagreements.push(...read.disagreements);
  } else {
    // Nothing new is final: the cursor stays, and so does the time it covers.
    to = BigInt(state.cursorBlock);
    toTime = state.cursorTime;
  }
  const unscanned = { scannedUntil: toTime, gaps: gaps.map((g) => ({ after: g.afterTime, before: g.beforeTime })) };
  const moved = to > BigInt(state.cursorBlock) || !stored;
  const { recorded, expired } = await recordTransfers(deps, w.network, {
    transfers: from <= to ? out.agreed.filter((t) => t.blockNumber >= from) : [],
    state: moved ? { cursorBlock: Number(to), cursorTime: Math.max(state.cursorTime, toTime), activeUntil: 0 } : undefined,
    unscanned,
  });
  for (const r of recorded) {
    deps.log.info(
      {
        network: w.network.id,
        tx_hash: r.transfer.txHash,
        log_index: r.transfer.logIndex,
        block: Number(r.transfer.blockNumber),
        kind: r.kind,
        invoice_id: r.invoiceId,
        reason: r.reason,
      },
      'chain: transfer recorded',
    );
  }
  for (const inv of expired) deps.log.info({ network: w.network.id, invoice_id: inv.id }, 'chain: invoice expired');
  await checkRecordedBlocks(deps, w, asked[0]!, final.number);
  w.figures.cursorBlock = Number(to);
  out.to = to;
  out.gaps = gaps;
  out.more = to < final.number;
  return out;
}
