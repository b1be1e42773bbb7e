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
 *   "count" (default): its transaction count of the block must equal the number of infos (coverage:
 *   an omitted or added transaction shows), and each transaction that pays a watched address must
 *   be known to it by id with the same block, result and logs (every paying transfer confirmed by
 *   a second provider). java-tron has no light read of a block's transaction ids (`getblock`
 *   without detail is the header alone, and its txTrieRoot hashes whole signed transactions, which
 *   the infos do not carry), so the count is the light view of coverage; "ids" reads the second
 *   provider's infos in full and compares the ids themselves (docs/operations.md says what each
 *   catches and costs).
 *   A third provider, when there is one, decides between two that disagree and the outvoted one is
 *   set aside for a cooling period.
 *   When no other provider can be asked now, the block waits; when nothing can decide, it is
 *   disputed (held, never confirmed from, never dropped).
 * With one provider, that provider is trusted as it answers (the checks above still hold).
 */
import type { AppDeps } from '../app-deps.js';
import { findTransferBlocks } from './chain.repo.js';
import { FUTURE_SKEW_MS, GENESIS_TIME } from './head.js';
import type { Provider } from './providers.js';
import { TronApiError, type TronClient, type TxInfo } from './tron.client.js';
import { blockDigest, transfersInBlock, type WatchedSet } from './verifier.js';

export type BlockRead =
  | { kind: 'block'; infos: TxInfo[]; time: number | undefined; provider: Provider }
  /** Not known yet; `unavailable` when no second provider can be asked now (says nothing about the block). */
  | { kind: 'wait'; reason: string; unavailable?: boolean }
  /** Held: the providers disagree (about the whole block, or about one transaction in it). */
  | { kind: 'disputed'; reason: string; txHash?: string };

function malformed(n: number, why: string): TronApiError {
  return new TronApiError('bad_response', 'blockinfo', `malformed block ${n}: ${why}`, undefined, undefined, 'malformed');
}

/** Checks one provider's infos of block n; throws a malformed-read fault. */
async function checked(deps: AppDeps, n: number, infos: TxInfo[], watched: WatchedSet): Promise<TxInfo[]> {
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
    const elsewhere = await findTransferBlocks(deps.db, [...new Set(found.transfers.map((t) => t.txHash))], n);
    if (elsewhere.length > 0) throw malformed(n, `transaction ${elsewhere[0]!.txHash} already recorded from block ${elsewhere[0]!.block}`);
  }
  return infos;
}

/** The ids and what the block pays the watched addresses, to compare two providers' reads. */
function fingerprint(deps: AppDeps, infos: TxInfo[], watched: WatchedSet): string {
  const ids = infos.map((i) => i.id.toLowerCase()).sort();
  return `${ids.join(',')}|${blockDigest(transfersInBlock(infos, watched, deps.config.network.usdtContract))}`;
}

type Read<T> = { value: T; provider: Provider };

/** Why two reads of block n disagree, and the transaction when it is about one transfer. */
interface Mismatch {
  reason: string;
  txHash: string | null;
}

/**
 * The light cross-check of one provider's infos of block n by another provider: its transaction
 * count must equal the number of infos (an omitted or added transaction shows), and every
 * transaction that pays a watched address must be known to it by id (`gettransactioninfobyid`)
 * with the same block, result and Transfer logs to the watched addresses (a forged or altered
 * payment shows). Undefined when both agree; 'unavailable' when no other provider answered.
 */
async function lightCheck(
  deps: AppDeps,
  n: number,
  heavy: Read<TxInfo[]>,
  count: Read<number>,
  watched: WatchedSet,
  suspect?: Provider,
): Promise<Mismatch | 'unavailable' | undefined> {
  const rt = deps.chain;
  const name = (p: Provider) => p.health.name;
  if (heavy.value.length !== count.value) {
    return {
      reason: `${name(heavy.provider)} serves ${heavy.value.length} transactions of block ${n}, ${name(count.provider)} counts ${count.value}`,
      txHash: null,
    };
  }
  const usdt = deps.config.network.usdtContract;
  const found = transfersInBlock(heavy.value, watched, usdt);
  const paying = [...new Set(found.transfers.map((t) => t.txHash))];
  for (const id of paying) {
    const mine = heavy.value.find((i) => i.id.toLowerCase() === id)!;
    // Any provider but the one that served the infos (and one under suspicion) may confirm it.
    const theirs = await rt.pool.callOther(
      () => deps.clock.now(),
      (c) => c.txInfo(id),
      suspect ? [heavy.provider, suspect] : [heavy.provider],
    );
    if (!theirs) return 'unavailable';
    const info = theirs.value;
    const same =
      info !== undefined &&
      info.blockNumber === n &&
      blockDigest(transfersInBlock([info], watched, usdt)) === blockDigest(transfersInBlock([mine], watched, usdt));
    if (!same) {
      const what = info === undefined ? 'does not know it' : info.blockNumber !== n ? `places it in block ${info.blockNumber}` : 'reads it otherwise';
      return { reason: `${name(heavy.provider)} serves a payment in block ${n} that ${name(theirs.provider)} ${what}`, txHash: id };
    }
  }
  return undefined;
}

/**
 * Reads block n (solidified by the accepted head when `solid`). Provider faults on every provider
 * throw the last TronApiError, as the pool does.
 */
export async function readBlock(deps: AppDeps, n: number, watched: WatchedSet, solid: boolean): Promise<BlockRead> {
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
function inconsistent(deps: AppDeps, n: number, a: Provider, b: Provider, third: Provider | undefined): void {
  deps.chain.figures.inconsistent_blocks += 1;
  a.health.inconsistent_blocks += 1;
  b.health.inconsistent_blocks += 1;
  deps.log.error(
    { block: n, first_provider: a.health.name, second_provider: b.health.name, third_provider: third?.health.name ?? null },
    'chain: BLOCK READ INCONSISTENTLY: two providers disagree about a solidified block; nothing from it is trusted on one word',
  );
}

function outvoted(deps: AppDeps, n: number, loser: Provider): void {
  deps.chain.pool.setAside(loser, deps.clock.now(), `set aside: outvoted about block ${n}`);
  deps.log.warn({ block: n, provider: loser.health.name }, 'chain: provider set aside: the other providers outvoted its answer');
}

/**
 * cross_check = "count": a second provider's transaction count and its confirmation of each paying
 * transaction by id (lightCheck). On a disagreement a third provider, when there is one, reads the
 * block in full: the provider it agrees with wins and the other is set aside.
 */
async function crossCheckCount(deps: AppDeps, n: number, first: Read<TxInfo[]>, watched: WatchedSet): Promise<Decision> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  const count = await rt.pool.callOther(now, (c) => c.txCount(n), [first.provider]);
  if (!count) return { kind: 'wait', reason: `no second provider can check block ${n} now`, unavailable: true };
  if ((first.value.length === 0) !== (count.value === 0)) {
    const lagging = first.value.length === 0 ? first.provider : count.provider;
    return { kind: 'wait', reason: `${lagging.health.name} does not serve block ${n} yet` };
  }
  const mismatch = await lightCheck(deps, n, first, count, watched);
  if (mismatch === 'unavailable') return { kind: 'wait', reason: `no second provider can confirm the payments of block ${n} now`, unavailable: true };
  if (!mismatch) return { kind: 'chosen', read: first };
  const fn = (c: TronClient) => c.blockInfos(n).then((infos) => checked(deps, n, infos, watched));
  const third = await rt.pool.callOther(now, fn, [first.provider, count.provider]);
  inconsistent(deps, n, first.provider, count.provider, third?.provider);
  if (!third) return { kind: 'disputed', reason: mismatch.reason, txHash: mismatch.txHash ?? undefined };
  if (fingerprint(deps, third.value, watched) === fingerprint(deps, first.value, watched)) {
    outvoted(deps, n, count.provider);
    return { kind: 'chosen', read: first };
  }
  // The third reads it otherwise: it wins if the counting provider's view agrees with it.
  const again = await lightCheck(deps, n, third, count, watched, first.provider);
  if (again === undefined) {
    outvoted(deps, n, first.provider);
    return { kind: 'chosen', read: third };
  }
  return { kind: 'disputed', reason: `${mismatch.reason}, and a third provider agrees with neither`, txHash: mismatch.txHash ?? undefined };
}

/**
 * cross_check = "ids": a second provider reads the block's infos in full; the transaction ids and
 * what the block pays the watched addresses must agree. A third provider decides between two that
 * disagree and the outvoted one is set aside.
 */
async function crossCheckIds(deps: AppDeps, n: number, first: Read<TxInfo[]>, watched: WatchedSet): Promise<Decision> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  const fn = (c: TronClient) => c.blockInfos(n).then((infos) => checked(deps, n, infos, watched));
  const second = await rt.pool.callOther(now, fn, [first.provider]);
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
  const reason = `${first.provider.health.name} and ${second.provider.health.name} disagree about block ${n}`;
  if (!third) return { kind: 'disputed', reason };
  const c = fingerprint(deps, third.value, watched);
  const [winner, loser] =
    c === fingerprint(deps, a, watched) ? [first, second] : c === fingerprint(deps, b, watched) ? [second, first] : [undefined, undefined];
  if (!winner || !loser) return { kind: 'disputed', reason: `${reason}, and a third provider agrees with neither` };
  outvoted(deps, n, loser.provider);
  return { kind: 'chosen', read: winner };
}
