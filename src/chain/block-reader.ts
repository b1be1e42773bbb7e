/**
 * Reading one solidified block so that no single provider's answer can confirm a payment that
 * never happened or lose one that did.
 *
 * - Malformed is a fault: a block time outside [genesis, now + 1 min], not that block's time (after
 *   the previous block read, before the next, at most the head's), or a paying transaction already
 *   recorded from another block makes the read malformed: the provider is faulted and another asked.
 * - Empty is not proof: an empty answer means "not known yet" unless the block itself (its header
 *   and transaction list, from any provider) shows zero transactions. Until then the block waits.
 * - With two or more providers, a second provider reads the same block: the transaction ids
 *   (coverage: an omission shows) and what the block pays to the watched addresses (every paying
 *   transfer confirmed by a second provider) must agree. A third provider, when there is one,
 *   decides between two that disagree and the outvoted one is set aside for a cooling period.
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
  | { kind: 'disputed'; reason: string };

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

/**
 * Reads block n (solidified by the accepted head when `solid`). Provider faults on every provider
 * throw the last TronApiError, as the pool does.
 */
export async function readBlock(deps: AppDeps, n: number, watched: WatchedSet, solid: boolean): Promise<BlockRead> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  const fn = (c: TronClient) => c.blockInfos(n).then((infos) => checked(deps, n, infos, watched));
  const first = await rt.pool.call(now, fn);
  const several = rt.pool.providers.length > 1;
  let chosen = first;
  if (several) {
    const second = await rt.pool.callOther(now, fn, [first.provider]);
    if (!second) return { kind: 'wait', reason: `no second provider can check block ${n} now`, unavailable: true };
    const a = first.value;
    const b = second.value;
    if ((a.length === 0) !== (b.length === 0)) {
      const lagging = a.length === 0 ? first.provider : second.provider;
      return { kind: 'wait', reason: `${lagging.health.name} does not serve block ${n} yet` };
    }
    if (fingerprint(deps, a, watched) !== fingerprint(deps, b, watched)) {
      rt.figures.inconsistent_blocks += 1;
      first.provider.health.inconsistent_blocks += 1;
      second.provider.health.inconsistent_blocks += 1;
      const third = await rt.pool.callOther(now, fn, [first.provider, second.provider]);
      const reason = `${first.provider.health.name} and ${second.provider.health.name} disagree about block ${n}`;
      deps.log.error(
        {
          block: n,
          first_provider: first.provider.health.name,
          second_provider: second.provider.health.name,
          third_provider: third?.provider.health.name ?? null,
        },
        'chain: BLOCK READ INCONSISTENTLY: two providers disagree about a solidified block; nothing from it is trusted on one word',
      );
      if (!third) return { kind: 'disputed', reason };
      const c = fingerprint(deps, third.value, watched);
      const [winner, loser] =
        c === fingerprint(deps, a, watched) ? [first, second] : c === fingerprint(deps, b, watched) ? [second, first] : [undefined, undefined];
      if (!winner || !loser) return { kind: 'disputed', reason: `${reason}, and a third provider agrees with neither` };
      rt.pool.setAside(loser.provider, now(), `set aside: outvoted about block ${n}`);
      deps.log.warn({ block: n, provider: loser.provider.health.name }, 'chain: provider set aside: the other providers outvoted its answer');
      chosen = winner;
    }
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
