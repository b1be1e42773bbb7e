/**
 * The solidified head, read as evidence and not as truth. A head is accepted only if it is
 * credible: its time neither in the future (beyond a minute of clock skew) nor before TRON's
 * genesis, nor before the last accepted head's; and no more blocks past the last accepted head
 * (or the stored cursor, at start) than its time allows at one block per interval, plus slack.
 * With two or more providers the scanner never goes beyond a head a second provider confirms:
 * the accepted head is the lower of two providers' credible heads. A refused head is a fault of
 * that provider (counted in /health and the metrics, logged once per condition).
 *
 * Also here: the learned solidification delay and block interval, which time the passes.
 */
import { MINUTE } from '../lib/clock.js';
import type { ChainRuntime } from './chain.runtime.js';
import type { ScanState } from '../payments/scan.repo.js';
import { TronApiError, type BlockRef, type TronClient } from './tron.client.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'clock' | 'log'> & { chain: ChainRuntime };

/** No TRON block is older than mainnet's genesis (2018-06-25). */
export const GENESIS_TIME = Date.UTC(2018, 5, 25);
/** Clock skew allowed between the chain and this server. */
export const FUTURE_SKEW_MS = MINUTE;
/** Blocks a head may run ahead of what its time allows (a provider's clock, rounding). */
const HEAD_SLACK_BLOCKS = 20;

/** Why `head` is not credible after `last` (or the stored cursor), or undefined when it is. */
export function headDoubt(head: BlockRef, now: number, intervalMs: number, last: BlockRef | undefined): string | undefined {
  if (head.timestamp > now + FUTURE_SKEW_MS) return 'head time in the future';
  if (head.timestamp < GENESIS_TIME) return 'head time before the genesis';
  if (!last) return undefined;
  if (head.number < last.number) return undefined; // a lagging provider: not a lie, just not newer
  if (head.timestamp < last.timestamp) return 'head time before the last accepted head';
  const allowed = Math.floor((Math.max(head.timestamp, last.timestamp) - last.timestamp) / intervalMs) + HEAD_SLACK_BLOCKS;
  if (head.number - last.number > allowed) return `head ${head.number - last.number} blocks past the last accepted one, more than its time allows`;
  return undefined;
}

/**
 * The last block the scanner read and its time, from its durable cursor (any instance can read it):
 * a block at or before it cannot be later than that time. The reference for a head, or a payer's
 * named transaction, where no head was accepted in this process yet.
 */
export function scannedUntil(stored: ScanState | undefined): BlockRef | undefined {
  return stored ? { number: stored.cursorBlock, timestamp: stored.cursorTime } : undefined;
}

/**
 * Reads the head from the first provider that answers credibly and, with several providers, from
 * a second one; accepts the lower of the two. Without a second answer the accepted head does not
 * move past the last one.
 */
export async function refreshHead(deps: Deps, stored?: ScanState): Promise<BlockRef | undefined> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  const reference = rt.head ?? scannedUntil(stored);
  const read = (c: TronClient) => c.solidHead().then((h) => credible(deps, h, reference));
  const first = await rt.pool.call(now, read);
  let value = first.value;
  if (rt.pool.providers.length > 1) {
    const second = await rt.pool.callOther(now, read, [first.provider]);
    if (!second) {
      rt.figures.reason = 'no second provider confirms the head';
      if (!rt.head) return undefined;
      value = rt.head;
    } else if (second.value.number < value.number) {
      value = second.value;
    }
  }
  if (!rt.head || value.number >= rt.head.number) rt.head = value;
  rt.headReadAt = deps.clock.now();
  learnDelay(rt, deps.clock.now(), value.timestamp);
  return rt.head;
}

function credible(deps: Deps, head: BlockRef, reference: BlockRef | undefined): BlockRef {
  const doubt = headDoubt(head, deps.clock.now(), deps.chain.blockIntervalMs, reference);
  if (doubt === undefined) return head;
  throw new TronApiError('bad_response', 'head', `head refused: ${doubt} (block ${head.number}, time ${head.timestamp})`, undefined, undefined, 'head');
}

/** Logs a refused head once per provider and condition. */
export function logRefusedHeads(deps: Deps): void {
  const rt = deps.chain;
  for (const p of rt.pool.providers) {
    const err = p.health.last_error;
    if (!err || !err.includes('head refused')) continue;
    const key = `${p.health.name} ${err.replace(/\d+/g, '#')}`;
    if (rt.refusedLogged.has(key)) continue;
    rt.refusedLogged.add(key);
    deps.log.warn({ provider: p.health.name, detail: err }, 'chain: HEAD REFUSED: a provider served a head that is not credible; it is not followed');
  }
}

export function learnDelay(rt: ChainRuntime, now: number, blockTimestamp: number): void {
  const seen = now - blockTimestamp;
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
export function expectedDelay(rt: ChainRuntime, now: number, refreshMs: number): number | undefined {
  if (rt.solidDelayMs === undefined) return undefined;
  const probing = rt.solidDelayMs - rt.solidDelayLowMs > 300 && now - rt.probedAt >= refreshMs;
  return probing ? Math.round((rt.solidDelayMs + rt.solidDelayLowMs) / 2) : rt.solidDelayMs;
}

/** Two consecutive blocks show the interval (never longer than TRON's 3 s: missed slots only lengthen a step). */
export function learnInterval(rt: ChainRuntime, n: number, timestamp: number): void {
  const prev = rt.lastRead;
  if (prev && prev.number === n - 1) {
    const step = timestamp - prev.timestamp;
    if (step >= 100 && step < rt.blockIntervalMs) rt.blockIntervalMs = step;
  }
  rt.lastRead = { number: n, timestamp };
  if (!rt.lastBlock || n > rt.lastBlock.number) rt.lastBlock = { number: n, timestamp };
}

/** Block number of the first block at or after `t`, estimated low (missed slots make real numbers higher). */
export function blockFor(head: BlockRef, t: number, intervalMs: number): number {
  return head.number - Math.ceil(Math.max(0, head.timestamp - t) / intervalMs);
}
