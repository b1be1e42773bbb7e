/**
 * A per-account network's final reads (Solana at finalized commitment, TON committed in the
 * masterchain), with the trust the EVM watcher has:
 *
 * - The final head is the lower of the heads the asked providers show as final, each checked by its
 *   reader: nothing is final here that one provider does not call final.
 * - With two providers or more, every range is read through two and compared transfer by transfer
 *   (`compareReads`): only what both show alike is recorded. A transfer one shows and the other does
 *   not (an omission, or a forgery), or that they show otherwise, is a durable dispute
 *   (chain_disputes) of its position, and that position a one-position unread range of its own: the
 *   invoices whose window meets its time stay open, and it is read again at each sweep until the two
 *   agree.
 * - The network's cursor (scan.repo) moves only with a sweep over every watched account that both
 *   providers read completely; a failed or unsettled read leaves it where it is. The polls of the
 *   open invoices' accounts between sweeps start each account where it was last read (the cursor
 *   after a restart), so no account skips a position either.
 */
import type { AccountProvider, AccountWatch } from '../../chains/account-watch.js';
import { compareReads, type Disagreement } from '../../chains/agreement.js';
import type { ChainHead, VerifiedTransfer } from '../../chains/family.js';
import { holdDisagreements } from '../hold-disputes.js';
import { recordTransfers, type RecordedTransfer } from '../record.js';
import { listGaps, loadScanState, resolveDispute, type ScanGap, type ScanState } from '../scan.repo.js';
import { attemptRead, usableAccountProviders } from './providers.js';
import type { Mailer } from '../../email/mailer.js';
import type { CoreDeps } from '../../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { mailer: Mailer };

/** Positions read before the estimate of the oldest open invoice's creation at a first start (clocks differ). */
const START_MARGIN = 20n;

type Agreed = { agreed: VerifiedTransfer[]; disagreements: Disagreement[] };

/** The providers a final read asks: two where two are configured (one alone only when one is all there is). */
export function accountReaders(w: AccountWatch, now: number): AccountProvider[] | string {
  const usable = usableAccountProviders(w, now);
  const wanted = Math.min(2, w.providers.length);
  if (usable.length >= wanted) return usable.slice(0, wanted);
  if (usable.length === 0) return 'every provider is backing off';
  return `only ${usable[0]!.health.name} answers now: nothing moves on one provider's word; waiting for a second`;
}

/** The final head every asked provider calls final: the lowest of theirs; undefined when one fails. */
export async function agreedFinalHead(deps: Deps, w: AccountWatch, asked: AccountProvider[]): Promise<ChainHead | undefined> {
  let final: ChainHead | undefined;
  for (const p of asked) {
    const r = await attemptRead(
      p.health,
      () => deps.clock.now(),
      () => p.reader.finalHead(),
    );
    if (!r.ok) {
      w.figures.reason = `final head: ${r.error}`;
      return undefined;
    }
    if (!final || r.value.number < final.number) final = r.value;
  }
  w.figures.finalHead = final ? Number(final.number) : null;
  return final;
}

/** The transfers every asked provider read alike in [from, to] for `accounts`; undefined when a read failed or was incomplete. */
async function readAgreed(
  deps: Deps,
  w: AccountWatch,
  asked: AccountProvider[],
  from: bigint,
  to: bigint,
  accounts: readonly string[],
  tokens?: readonly string[],
): Promise<Agreed | undefined> {
  const reads = [];
  for (const p of asked) {
    const r = await attemptRead(
      p.health,
      () => deps.clock.now(),
      () => p.reader.readTransfers({ from, to, recipients: accounts, finalAtOrBelow: to, ...(tokens ? { tokens } : {}) }),
    );
    if (!r.ok) {
      w.figures.reason = `final read of ${from}-${to} failed: ${r.error}`;
      return undefined;
    }
    p.health.droppedLogs += r.value.dropped.length;
    // A read that could not settle everything it listed (a transaction not given, a transfer in flight) is read again.
    if (!r.value.complete) {
      w.figures.reason = `${p.health.name} could not settle everything in ${from}-${to}; read again`;
      return undefined;
    }
    reads.push({ provider: p.health.name, transfers: r.value.transfers });
  }
  if (reads.length === 1) return { agreed: [...reads[0]!.transfers], disagreements: [] };
  const result = compareReads(reads);
  for (const d of result.disagreements) {
    for (const v of d.versions) if (!v.transfer) asked.find((p) => p.health.name === v.provider)!.health.disagreements += 1;
  }
  return result;
}

function logRecorded(deps: Deps, w: AccountWatch, recorded: RecordedTransfer[]): void {
  for (const r of recorded) {
    deps.log.info(
      { network: w.network.id, tx_hash: r.transfer.txHash, block: Number(r.transfer.blockNumber), kind: r.kind, invoice_id: r.invoiceId, reason: r.reason },
      'chain: transfer recorded',
    );
  }
}

/** Reads the held positions again; one both providers now read alike is recorded, its range closed and its dispute resolved. */
async function rereadGaps(deps: Deps, w: AccountWatch, asked: AccountProvider[], gaps: ScanGap[], final: bigint, accounts: readonly string[]): Promise<void> {
  for (const g of [...gaps]) {
    if (BigInt(g.toBlock) > final) continue;
    const read = await readAgreed(deps, w, asked, BigInt(g.fromBlock), BigInt(g.toBlock), accounts);
    if (!read || read.disagreements.length > 0) continue;
    gaps.splice(gaps.indexOf(g), 1);
    const { recorded } = await recordTransfers(deps, w.network, { transfers: read.agreed, gap: { oldFrom: g.fromBlock, gap: undefined } });
    logRecorded(deps, w, recorded);
    for (let b = g.fromBlock; b <= g.toBlock; b++) {
      if (await resolveDispute(deps.db, w.network, b, deps.clock.now())) {
        deps.log.info({ network: w.network.id, block: b }, 'chain: disputed position now read alike by the providers: dispute resolved');
      }
    }
  }
}

/** Where a network's first read starts: a little before the oldest open invoice's creation, else at the final head. */
function startPosition(w: AccountWatch, final: ChainHead, oldestOpenAt: number | null): bigint {
  if (oldestOpenAt === null || oldestOpenAt >= final.timeMs) return final.number + 1n;
  const behind = BigInt(Math.ceil((final.timeMs - oldestOpenAt) / w.network.blockTimeMs)) + START_MARGIN;
  return behind > final.number ? 0n : final.number - behind;
}

/**
 * The sweep: every watched account from the network's cursor up to the agreed final head, recorded
 * with the cursor that covers it, the held positions read again, and the invoices whose window the
 * read covers expired.
 */
export async function sweepRead(
  deps: Deps,
  w: AccountWatch,
  asked: AccountProvider[],
  final: ChainHead,
  accounts: readonly string[],
  oldestOpenAt: number | null,
): Promise<void> {
  const stored = await loadScanState(deps.db, w.network);
  const state: ScanState = stored ?? {
    cursorBlock: Number(startPosition(w, final, oldestOpenAt)) - 1,
    cursorTime: Math.min(final.timeMs, oldestOpenAt ?? final.timeMs),
    activeUntil: 0,
  };
  const gaps = await listGaps(deps.db, w.network);
  await rereadGaps(deps, w, asked, gaps, final.number, accounts);
  const from = BigInt(state.cursorBlock) + 1n;
  let transfers: VerifiedTransfer[] = [];
  if (from <= final.number) {
    const read = await readAgreed(deps, w, asked, from, final.number, accounts);
    if (!read) return;
    await holdDisagreements(deps, w.network, read.disagreements, gaps);
    transfers = read.agreed;
  }
  const to = from <= final.number ? final.number : BigInt(state.cursorBlock);
  const toTime = from <= final.number ? final.timeMs : state.cursorTime;
  const moved = to > BigInt(state.cursorBlock) || !stored;
  const { recorded, expired } = await recordTransfers(deps, w.network, {
    transfers,
    state: moved ? { cursorBlock: Number(to), cursorTime: Math.max(state.cursorTime, toTime), activeUntil: 0 } : undefined,
    unscanned: { scannedUntil: toTime, gaps: gaps.map((g) => ({ after: g.afterTime, before: g.beforeTime })) },
  });
  logRecorded(deps, w, recorded);
  for (const inv of expired) deps.log.info({ network: w.network.id, invoice_id: inv.id }, 'chain: invoice expired');
  for (const a of accounts) {
    for (const t of w.network.tokens) {
      const key = throughKey(a, t.contract);
      if ((w.readThrough.get(key) ?? -1n) < to) w.readThrough.set(key, to);
    }
  }
  w.figures.cursorBlock = Number(to);
  w.figures.sweptAccounts = accounts.length;
}

/** The key of one watched (account, token) in `readThrough`. */
export function throughKey(address: string, tokenContract: string): string {
  return `${address} ${tokenContract}`;
}

/**
 * A poll: the open invoices' (account, token) pairs only, each from where it was last read (the
 * network's cursor for one not read since the sweep or a restart) up to the agreed final head; on
 * Solana only the token accounts open invoices ask are read. Once every one of them is read that
 * far, the open invoices whose window it covers expire.
 */
export async function pollRead(
  deps: Deps,
  w: AccountWatch,
  asked: AccountProvider[],
  final: ChainHead,
  targets: ReadonlyArray<{ address: string; tokenContract: string }>,
): Promise<void> {
  const stored = await loadScanState(deps.db, w.network);
  if (!stored) return;
  const base = BigInt(stored.cursorBlock);
  // One read per (start, token): the accounts read alike go together.
  const groups = new Map<string, { from: bigint; token: string; addresses: string[] }>();
  for (const t of targets) {
    const through = w.readThrough.get(throughKey(t.address, t.tokenContract));
    const from = (through !== undefined && through > base ? through : base) + 1n;
    const key = `${from} ${t.tokenContract}`;
    const g = groups.get(key) ?? { from, token: t.tokenContract, addresses: [] };
    g.addresses.push(t.address);
    groups.set(key, g);
  }
  const gaps = await listGaps(deps.db, w.network);
  let complete = true;
  for (const g of groups.values()) {
    if (g.from > final.number) continue;
    const read = await readAgreed(deps, w, asked, g.from, final.number, g.addresses, [g.token]);
    if (!read) {
      complete = false;
      continue;
    }
    await holdDisagreements(deps, w.network, read.disagreements, gaps);
    const { recorded } = await recordTransfers(deps, w.network, { transfers: read.agreed });
    logRecorded(deps, w, recorded);
    for (const a of g.addresses) w.readThrough.set(throughKey(a, g.token), final.number);
  }
  w.figures.openAccounts = targets.length;
  if (!complete) return;
  const { expired } = await recordTransfers(deps, w.network, {
    transfers: [],
    unscanned: { scannedUntil: Math.max(stored.cursorTime, final.timeMs), gaps: gaps.map((g) => ({ after: g.afterTime, before: g.beforeTime })) },
  });
  for (const inv of expired) deps.log.info({ network: w.network.id, invoice_id: inv.id }, 'chain: invoice expired');
}
