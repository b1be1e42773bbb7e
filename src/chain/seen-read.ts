/**
 * Seen, then final, on TRON (docs/payments.md). While an invoice is open on the network, every
 * SEEN_POLL_MS the watcher asks one provider (they take turns) for the latest, unsolidified blocks
 * since its last such read, in one `/wallet/getblockbylimitnext` call (one or two 3 s blocks at a
 * 5 s poll). A successful USDT `transfer` or `transferFrom` call there to an open invoice's address,
 * of an amount it waits for, is seen: src/payments/seen.ts records it and tells
 * invoice.payment_seen. It confirms nothing: the solidified read (follower.ts) records it as today.
 *
 * A block's transactions carry the call, not its logs: the call's recipient and amount are the
 * sender's words, good enough to say "seen" and never more. A payment made through another
 * contract is not seen early; it confirms as before when its block solidifies.
 *
 * Dropped: a seen transfer whose block a later read shows with another blockID at its height (or
 * whose child names another parent), or that the solidified read of its block does not hold
 * (settleTronSeen, after each committed pass), left the chain: invoice.payment_dropped.
 */
import type { VerifiedTransfer as NeutralTransfer } from '../chains/family.js';
import { findNetwork, type Network } from '../chains/networks.js';
import { SECOND } from '../lib/clock.js';
import { hexToTronAddress, tronAddressToHex } from '../lib/tron.js';
import { micros } from '../lib/amounts.js';
import { openInvoiceAddresses } from '../invoices/invoice-payments.js';
import { listWaitingSeen, type SeenRow } from '../payments/seen.repo.js';
import { dropSeen, noteSeen, settleFinalRange } from '../payments/seen.js';
import { TronApiError } from './tron.client.js';
import type { ChainRuntime } from './chain.runtime.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { chain: ChainRuntime };

/** How often the latest blocks are read while an invoice is open. */
export const SEEN_POLL_MS = 5 * SECOND;
/** Latest blocks asked for at most in one read (a watcher that fell behind skips to the newest: the solidified read still covers every block). */
const MAX_SEEN_BLOCKS = 4;
/** Block ids kept to notice a replaced block (a little more than the solidification lag). */
const KEEP_BLOCKS = 64;

const TRANSFER = 'a9059cbb';
const TRANSFER_FROM = '23b872dd';
const WORD = /^[0-9a-f]{64}$/;

interface SeenBlock {
  number: number;
  id: string;
  parent: string;
  timestamp: number;
  txs: unknown[];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v.toLowerCase() : '';
}

/** One block of the answer, or undefined when it is not in java-tron's shape. */
function toBlock(raw: unknown): SeenBlock | undefined {
  const b = raw as { blockID?: unknown; block_header?: { raw_data?: { number?: unknown; timestamp?: unknown; parentHash?: unknown } }; transactions?: unknown };
  const h = b?.block_header?.raw_data;
  const number = Number(h?.number);
  const timestamp = Number(h?.timestamp);
  if (!Number.isSafeInteger(number) || !Number.isSafeInteger(timestamp) || !/^[0-9a-f]{64}$/.test(str(b.blockID))) return undefined;
  return { number, id: str(b.blockID), parent: str(h?.parentHash), timestamp, txs: Array.isArray(b.transactions) ? b.transactions : [] };
}

/** The USDT calls of a block's successful transactions to a watched address, as seen transfers. */
export function seenInBlock(network: Readonly<Network>, block: SeenBlock, watched: ReadonlyMap<string, string>): NeutralTransfer[] {
  const usdt = network.tokens[0]!;
  const usdtHex = tronAddressToHex(usdt.contract)!.toLowerCase();
  const out: NeutralTransfer[] = [];
  for (const raw of block.txs) {
    const tx = raw as { txID?: unknown; ret?: Array<{ contractRet?: unknown }>; raw_data?: { contract?: unknown[] } };
    const call = tx?.raw_data?.contract;
    if (!Array.isArray(call) || call.length !== 1 || str(tx.ret?.[0]?.contractRet) !== 'success') continue;
    const c = call[0] as { type?: unknown; parameter?: { value?: { contract_address?: unknown; data?: unknown; owner_address?: unknown } } };
    const v = c?.parameter?.value;
    if (c?.type !== 'TriggerSmartContract' || str(v?.contract_address) !== usdtHex || !/^[0-9a-f]{64}$/.test(str(tx.txID))) continue;
    const data = str(v?.data);
    const words = data.slice(8).match(/.{64}/g) ?? [];
    const [fromWord, toWord, amountWord] =
      data.startsWith(TRANSFER) && words.length === 2
        ? [`${'0'.repeat(24)}${str(v?.owner_address).slice(2)}`, words[0]!, words[1]!]
        : data.startsWith(TRANSFER_FROM) && words.length === 3
          ? words
          : [];
    if (!fromWord || !toWord || !amountWord || !WORD.test(amountWord) || !toWord.startsWith('0'.repeat(24))) continue;
    const to = watched.get(toWord.slice(24));
    if (to === undefined) continue;
    const amount = BigInt(`0x${amountWord}`);
    out.push({
      network: network.id,
      token: usdt.symbol,
      contract: usdt.contract,
      from: hexToTronAddress(`41${fromWord.slice(24)}`) ?? '',
      to,
      raw: amount,
      amount: { exact: true, micros: micros(amount) },
      txHash: str(tx.txID),
      // The USDT contract emits one Transfer log for such a call: index 0 of its transaction's logs, as the solidified read will record it.
      logIndex: 0,
      blockNumber: BigInt(block.number),
      blockHash: block.id,
      blockTimeMs: block.timestamp,
      finality: 'seen',
    });
  }
  return out;
}

/** When the next seen read is due, while one is wanted (undefined otherwise). */
export function seenDueAt(deps: Deps): number | undefined {
  return deps.chain.seen.next === undefined ? undefined : deps.chain.seen.readAt + SEEN_POLL_MS;
}

/** One read of the latest blocks for the open invoices' addresses, when due. */
export async function seenRead(deps: Deps, openCount: number): Promise<void> {
  const rt = deps.chain;
  const now = deps.clock.now();
  const network = findNetwork(deps.config.network.id);
  if (openCount === 0 || !rt.head || !network) {
    rt.seen.next = undefined;
    return;
  }
  if (rt.seen.next !== undefined && now < rt.seen.readAt + SEEN_POLL_MS - 200) return;
  const latest = rt.head.number + Math.floor((now - rt.head.timestamp) / rt.blockIntervalMs);
  const from = Math.max(rt.seen.next ?? 0, latest - MAX_SEEN_BLOCKS + 1, rt.head.number + 1);
  rt.seen.readAt = now;
  rt.seen.next ??= from;
  const addresses = await openInvoiceAddresses(deps.db, deps.config.network);
  const watched = new Map<string, string>();
  for (const a of addresses) {
    const h = tronAddressToHex(a);
    if (h) watched.set(h.slice(2).toLowerCase(), a);
  }
  // Straight to one provider's client, in turns, never through the pool: a refused or failed seen
  // read waits for the next poll and never backs a provider off for the solidified reads.
  // Not one backing off or set aside (outvoted): a seen read never asks a provider the solidified reads avoid.
  const ready = rt.pool.providers.filter((p) => p.until <= now && p.asideUntil <= now && !rt.seen.unserved.has(p.health.name));
  if (ready.length === 0) return;
  const p = ready[rt.seen.turn++ % ready.length]!;
  let blocks: SeenBlock[];
  try {
    // One block past the predicted head: a provider answers what it has up to its head.
    const got = await p.client.latestBlocks(from, latest + 2);
    blocks = got.map(toBlock).filter((b): b is SeenBlock => b !== undefined && b.number >= from && b.number <= latest + 1);
  } catch (err) {
    if (!(err instanceof TronApiError)) throw err;
    if (err.kind === 'bad_response' && (err.status === 404 || err.status === 405 || err.message.startsWith('provider error:'))) {
      rt.seen.unserved.add(p.health.name);
      deps.log.warn(
        { provider: p.health.name, detail: err.message },
        'chain: provider does not serve the latest blocks; payments on it are told when solidified only',
      );
    }
    return;
  }
  if (blocks.length === 0) return;
  blocks.sort((a, b) => a.number - b.number);
  const replaced = new Set<number>();
  for (const b of blocks) {
    const known = rt.seen.blocks.get(b.number);
    if (known !== undefined && known !== b.id) replaced.add(b.number);
    const parent = rt.seen.blocks.get(b.number - 1);
    if (parent !== undefined && b.parent !== '' && parent !== b.parent) replaced.add(b.number - 1);
    rt.seen.blocks.set(b.number, b.id);
  }
  for (const n of [...rt.seen.blocks.keys()]) if (n < blocks.at(-1)!.number - KEEP_BLOCKS) rt.seen.blocks.delete(n);
  rt.seen.next = blocks.at(-1)!.number + 1;
  const byNumber = new Map(blocks.map((b) => [b.number, b]));
  const gone = (await listWaitingSeen(deps.db, network.id)).filter((r: SeenRow) => {
    const b = byNumber.get(r.blockNumber);
    return (b !== undefined && b.id !== r.blockHash) || (replaced.has(r.blockNumber) && !byNumber.has(r.blockNumber));
  });
  await dropSeen(deps, network, gone, 'its block was replaced by another at its height before solidifying');
  await noteSeen(
    deps,
    network,
    network.finality,
    blocks.flatMap((b) => seenInBlock(network, b, watched)),
  );
}

/**
 * After a committed pass: a waiting seen transfer at or below the solidified cursor that the
 * solidified read did not record (recorded ones are final already), and not in a block still
 * unread or disputed, is not in the solidified chain: dropped.
 */
export async function settleTronSeen(deps: Deps, cursorBlock: number, unread: ReadonlyArray<{ fromBlock: number; toBlock: number }>): Promise<void> {
  const network = findNetwork(deps.config.network.id);
  if (!network) return;
  const held = [...unread, ...[...deps.chain.disputes.keys()].map((n) => ({ fromBlock: n, toBlock: n }))];
  await settleFinalRange(deps, network, { to: BigInt(cursorBlock), final: [], held: [], heldBlocks: held });
}
