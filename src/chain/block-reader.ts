/**
 * Reading one solidified block so that no single provider's answer can confirm a payment that
 * never happened or lose one that did.
 *
 * - Malformed is a fault: a block time outside [genesis, now + 1 min], not that block's time (after
 *   the previous block read, before the next, at most the head's), or a paying transaction already
 *   recorded from another block makes the read malformed: the provider is faulted and another asked.
 * - Empty is not proof: an empty answer means "not known yet" unless the block itself (its header
 *   and transaction list, from any provider) shows zero transactions. Until then the block waits.
 * - With two or more providers, the heavy read (the block's transaction infos) takes turns between
 *   them, block by block, and another provider checks it (tron.cross_check):
 *   "count" (default): a block that pays a watched address is read in full by the second provider
 *   too (every paying transfer confirmed by a second provider, the ids compared); any other block
 *   by its transaction count, which must equal the number of infos (coverage: an omitted, added or
 *   truncated answer shows). One request of each provider a block either way, whatever the number
 *   of payments. java-tron has no light read of a block's transaction ids (`getblock` without
 *   detail is the header alone, and its txTrieRoot hashes whole signed transactions, which the
 *   infos do not carry), so the count is the light view of coverage. "ids" reads every block in
 *   full from the second provider (docs/operations.md says what each catches and costs).
 *   A third provider, when there is one, decides between two that disagree and the outvoted one is
 *   set aside for a cooling period. Without a majority of whole answers (two providers, or three
 *   that all differ), each transaction the answers differ about is asked of every one of them by
 *   id (`gettransactioninfobyid`): a transaction that two providers (a majority) return by id in
 *   this block, with the same time, result and logs, is in the block; one they both say is not
 *   there is not; the providers whose answers differ from that are set aside. So a provider that
 *   leaves a real payment out of its block answer, but returns it when asked for it by id, makes
 *   nobody lose it.
 *   When no other provider can be asked now, the block waits; what the providers do not agree on
 *   even by id is disputed (held, never confirmed from, never dropped).
 * With one provider, that provider is trusted as it answers (the checks above still hold).
 */
import { findTransferBlocks } from '../payments/transfers.repo.js';
import { FUTURE_SKEW_MS, GENESIS_TIME } from './head.js';
import type { Provider } from './providers.js';
import { TronApiError, type TronClient, type TxInfo } from './tron.client.js';
import { blockDigest, transfersInBlock, type WatchedSet } from './verifier.js';
import type { ChainRuntime } from './chain.runtime.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { chain: ChainRuntime };

export type BlockRead =
  | { kind: 'block'; infos: TxInfo[]; time: number | undefined; provider: Provider }
  /** Not known yet; `unavailable` when no second provider can be asked now (says nothing about the block). */
  | { kind: 'wait'; reason: string; unavailable?: boolean }
  /**
   * Held: the providers disagree (about the whole block, or about one transaction in it, even by
   * id); `time`, the latest block time their answers gave, when they gave one.
   */
  | { kind: 'disputed'; reason: string; txHash?: string; time?: number };

function malformed(n: number, why: string): TronApiError {
  return new TronApiError('bad_response', 'blockinfo', `malformed block ${n}: ${why}`, undefined, undefined, 'malformed');
}

/** Checks one provider's infos of block n; throws a malformed-read fault. */
async function checked(deps: Deps, n: number, infos: TxInfo[], watched: WatchedSet): Promise<TxInfo[]> {
  const rt = deps.chain;
  const time = infos[0]?.blockTimeStamp;
  if (time !== undefined) {
    if (time > deps.clock.now() + FUTURE_SKEW_MS || time < GENESIS_TIME) throw malformed(n, `block time ${time} out of range`);
    const last = rt.lastBlock;
    if (last && last.number < n && time <= last.timestamp) throw malformed(n, `block time ${time} not after block ${last.number}'s`);
    if (last && last.number > n && time >= last.timestamp) throw malformed(n, `block time ${time} not before block ${last.number}'s`);
    if (last && last.number === n && time !== last.timestamp) throw malformed(n, `block time ${time} is not that block's`);
    const head = rt.head;
    if (head && n <= head.number && time > head.timestamp) throw malformed(n, `block time ${time} after the solidified head's`);
    if (head && n === head.number && time !== head.timestamp) throw malformed(n, `block time ${time} is not that block's`);
  }
  const found = transfersInBlock(infos, watched, deps.config.network.usdtContract);
  if (found.transfers.length > 0) {
    const elsewhere = await findTransferBlocks(deps.db, deps.config.network.id, [...new Set(found.transfers.map((t) => t.txHash))], n);
    if (elsewhere.length > 0) throw malformed(n, `transaction ${elsewhere[0]!.txHash} already recorded from block ${elsewhere[0]!.block}`);
  }
  return infos;
}

/** The ids and what the block pays the watched addresses, to compare two providers' reads. */
function fingerprint(deps: Deps, infos: TxInfo[], watched: WatchedSet): string {
  const ids = infos.map((i) => i.id.toLowerCase()).sort();
  return `${ids.join(',')}|${blockDigest(transfersInBlock(infos, watched, deps.config.network.usdtContract))}`;
}

type Read<T> = { value: T; provider: Provider };

/**
 * Reads block n (solidified by the accepted head when `solid`). Provider faults on every provider
 * throw the last TronApiError, as the pool does.
 */
export async function readBlock(deps: Deps, n: number, watched: WatchedSet, solid: boolean): Promise<BlockRead> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  const fn = (c: TronClient) => c.blockInfos(n).then((infos) => checked(deps, n, infos, watched));
  const several = rt.pool.providers.length > 1;
  // With several providers the heavy read takes turns, block by block (each carries its share).
  const first = several ? await rt.pool.callInTurn(now, fn, n) : await rt.pool.call(now, fn);
  let chosen = first;
  if (several) {
    const decided = deps.config.tron.cross_check === 'ids' ? await crossCheckIds(deps, n, first, watched) : await crossCheckCount(deps, n, first, watched);
    if (decided.kind !== 'chosen') return decided;
    chosen = decided.read;
  }
  const infos = chosen.value;
  if (infos.length > 0) return { kind: 'block', infos, time: infos[0]!.blockTimeStamp, provider: chosen.provider };
  if (!solid) return { kind: 'wait', reason: `block ${n} not solidified yet` };
  // Empty: only the block itself, with zero transactions, proves an empty block.
  const whole = await rt.pool.call(now, (c) => c.block(n));
  if (whole.value && whole.value.txIds !== undefined && whole.value.txIds.length === 0) {
    return { kind: 'block', infos: [], time: whole.value.timestamp, provider: whole.provider };
  }
  return { kind: 'wait', reason: `block ${n} answered empty but is not an empty block: not known yet` };
}

type Decision = { kind: 'chosen'; read: Read<TxInfo[]> } | Exclude<BlockRead, { kind: 'block' }>;

/** Counts an inconsistent block against both providers and logs it once. */
function inconsistent(deps: Deps, n: number, a: Provider, b: Provider, third: Provider | undefined): void {
  deps.chain.figures.inconsistent_blocks += 1;
  a.health.inconsistent_blocks += 1;
  b.health.inconsistent_blocks += 1;
  deps.log.error(
    { block: n, first_provider: a.health.name, second_provider: b.health.name, third_provider: third?.health.name ?? null },
    'chain: BLOCK READ INCONSISTENTLY: two providers disagree about a solidified block; nothing from it is trusted on one word',
  );
}

/** Sets aside a provider the others outvoted about block n (`about`: what it answered wrong), and logs it. */
function outvoted(deps: Deps, n: number, loser: Provider, about: string, transactions: string[] = []): void {
  deps.chain.pool.setAside(loser, deps.clock.now(), `set aside: outvoted about block ${n} (${about})`);
  deps.log.error(
    { block: n, provider: loser.health.name, about, tx_hashes: transactions },
    'chain: PROVIDER SET ASIDE: the other providers outvoted its answer about a block; it is asked after the others for a while',
  );
}

/**
 * cross_check = "count": one request of another provider a block, light or full as the block needs.
 * A block whose full read pays a watched address more than zero is read in full by a second
 * provider too (every paying transfer confirmed by a second provider; the ids compared), as with
 * "ids". Any other block
 * is checked by the second provider's transaction count (`gettransactioncountbyblocknum`, about
 * 15 B), which must equal the number of infos: a missing, added, truncated or lagging answer shows.
 * A count that disagrees is settled in full: the counting provider's infos, and a third provider's
 * when the two full reads disagree.
 */
async function crossCheckCount(deps: Deps, n: number, first: Read<TxInfo[]>, watched: WatchedSet): Promise<Decision> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  // A transfer that could move an invoice (a successful one of more than zero) needs a second full
  // read; zero-value poisoning (recorded as dust, never matched) and failed calls do not.
  const found = transfersInBlock(first.value, watched, deps.config.network.usdtContract);
  if (found.transfers.some((t) => t.amount > 0n)) return crossCheckIds(deps, n, first, watched);
  const count = await rt.pool.callOther(now, (c) => c.txCount(n), [first.provider]);
  if (!count) return { kind: 'wait', reason: `no second provider can check block ${n} now`, unavailable: true };
  if ((first.value.length === 0) !== (count.value === 0)) {
    const lagging = first.value.length === 0 ? first.provider : count.provider;
    return { kind: 'wait', reason: `${lagging.health.name} does not serve block ${n} yet` };
  }
  if (first.value.length === count.value) return { kind: 'chosen', read: first };
  deps.log.warn(
    { block: n, infos: first.value.length, count: count.value, full_read: first.provider.health.name, counted_by: count.provider.health.name },
    'chain: a transaction count disagrees with the block infos; the block is read in full from the counting provider',
  );
  return crossCheckIds(deps, n, first, watched, count.provider);
}

/**
 * cross_check = "ids": a second provider reads the block's infos in full; the transaction ids and
 * what the block pays the watched addresses must agree. A third provider decides between two that
 * disagree and the outvoted one is set aside.
 */
async function crossCheckIds(deps: Deps, n: number, first: Read<TxInfo[]>, watched: WatchedSet, prefer?: Provider): Promise<Decision> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  const fn = (c: TronClient) => c.blockInfos(n).then((infos) => checked(deps, n, infos, watched));
  // The provider whose count disagreed, first: its own full read shows which view it holds.
  const preferred = prefer
    ? await rt.pool.callOther(
        now,
        fn,
        rt.pool.providers.filter((p) => p !== prefer),
      )
    : undefined;
  const second = preferred ?? (await rt.pool.callOther(now, fn, [first.provider]));
  if (!second) return { kind: 'wait', reason: `no second provider can check block ${n} now`, unavailable: true };
  const a = first.value;
  const b = second.value;
  if ((a.length === 0) !== (b.length === 0)) {
    const lagging = a.length === 0 ? first.provider : second.provider;
    return { kind: 'wait', reason: `${lagging.health.name} does not serve block ${n} yet` };
  }
  if (fingerprint(deps, a, watched) === fingerprint(deps, b, watched)) return { kind: 'chosen', read: first };
  const third = await rt.pool.callOther(now, fn, [first.provider, second.provider]);
  inconsistent(deps, n, first.provider, second.provider, third?.provider);
  if (third) {
    const c = fingerprint(deps, third.value, watched);
    const [winner, loser] =
      c === fingerprint(deps, a, watched) ? [first, second] : c === fingerprint(deps, b, watched) ? [second, first] : [undefined, undefined];
    if (winner && loser) {
      outvoted(deps, n, loser.provider, 'its block answer');
      return { kind: 'chosen', read: winner };
    }
  }
  // No majority of whole answers (two providers, or three that all differ): asked by id.
  return settleById(deps, n, third ? [first, second, third] : [first, second], watched);
}

/** Transactions one block's answers may differ about and still be settled by id; more are disputed as they are. */
export const MAX_SETTLED_BY_ID = 16;

/** What one TransactionInfo says about its block and the watched addresses: the block time, and its payments and failed calls to them. */
function txView(deps: Deps, info: TxInfo, watched: WatchedSet): string {
  return `${info.blockTimeStamp}|${blockDigest(transfersInBlock([info], watched, deps.config.network.usdtContract))}`;
}

const ABSENT = 'absent';

/** The view most answers share, if a majority (and at least two) share it. */
function majority(views: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of views) counts.set(v, (counts.get(v) ?? 0) + 1);
  const [view, k] = [...counts].sort((x, y) => y[1] - x[1])[0]!;
  return k >= 2 && k * 2 > views.length ? view : undefined;
}

/**
 * Settles the transactions the block answers of `reads` differ about (one left out, added, or with
 * other payments to a watched address) by asking each provider for each of them by id: a
 * transaction a majority of them (both, of two) return in block n with the same view is in the
 * block, one they say is not there (`{}`, or another block) is not. The providers whose block
 * answer or answer by id differs from the settled view are set aside, and the block is taken as
 * settled. A transaction without such a majority holds the block as disputed; a provider that
 * does not answer makes it wait.
 */
async function settleById(deps: Deps, n: number, reads: Array<Read<TxInfo[]>>, watched: WatchedSet): Promise<Decision> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  const names = reads.map((r) => r.provider.health.name);
  const who = `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  const times = reads.flatMap((r) => r.value.map((i) => i.blockTimeStamp));
  const disputed = (reason: string, txHash?: string): Decision => ({
    kind: 'disputed',
    reason,
    txHash,
    time: times.length > 0 ? Math.max(...times) : undefined,
  });
  const views = reads.map((r) => new Map(r.value.map((i) => [i.id.toLowerCase(), txView(deps, i, watched)])));
  const ids = [...new Set(views.flatMap((v) => [...v.keys()]))].sort().filter((id) => new Set(views.map((v) => v.get(id) ?? ABSENT)).size > 1);
  if (ids.length > MAX_SETTLED_BY_ID) return disputed(`${who} disagree about ${ids.length} transactions of block ${n}`, ids[0]);
  const settled = new Map<string, TxInfo | undefined>();
  const wrong = new Map<Provider, string[]>();
  for (const id of ids) {
    const answers: Array<{ view: string; info: TxInfo | undefined }> = [];
    for (const r of reads) {
      const got = await rt.pool.ask(r.provider, now, (c) => c.txInfo(id));
      if (!got) return { kind: 'wait', reason: `${r.provider.health.name} did not answer for transaction ${id} of block ${n}` };
      const info = got.value?.blockNumber === n ? got.value : undefined;
      answers.push({ view: info ? txView(deps, info, watched) : ABSENT, info });
    }
    const view = majority(answers.map((x) => x.view));
    if (view === undefined) return disputed(`${who} disagree about transaction ${id} of block ${n}, also when asked for it by id`, id);
    settled.set(id, answers.find((x) => x.view === view)!.info);
    reads.forEach((r, i) => {
      if ((views[i]!.get(id) ?? ABSENT) !== view || answers[i]!.view !== view) wrong.set(r.provider, [...(wrong.get(r.provider) ?? []), id]);
    });
  }
  const infos = [...reads[0]!.value.filter((i) => !settled.has(i.id.toLowerCase())), ...[...settled.values()].filter((i) => i !== undefined)];
  if (new Set(infos.map((i) => i.blockTimeStamp)).size > 1) return disputed(`${who} disagree about the time of block ${n}`);
  for (const [p, txs] of wrong)
    outvoted(deps, n, p, `its answer about ${txs.length === 1 ? `transaction ${txs[0]}` : `${txs.length} transactions`}, settled by id`, txs);
  deps.log.warn(
    { block: n, tx_hashes: ids, providers: names, set_aside: [...wrong.keys()].map((p) => p.health.name) },
    'chain: block settled by transaction id: the providers returned the transactions their block answers differ about alike when asked by id',
  );
  const right = reads.find((r) => !wrong.has(r.provider)) ?? reads[0]!;
  return { kind: 'chosen', read: { value: infos, provider: right.provider } };
}
