/**
 * The Solana reader: per watched token account (an owner's associated token account for a pinned
 * mint), the signatures of a slot window `[from, to]` at finalized commitment, then each transaction
 * (src/chains/solana/transaction.ts says what counts). Solana has no log filter over blocks, so the
 * cost is per watched account, not per block: one `getSignaturesForAddress` per account and poll
 * (batched), one `getTransaction` per new transaction, one `getBlock` per slot that pays.
 *
 * Positions are slots, so the core's cursor stays one number per network: the window is what the
 * reader is asked, and the reader remembers per account the newest signature it read at or below a
 * window's end, to pass as `until` when the next window starts above it (the provider then stops
 * there instead of answering a full page of older history); a re-read of the same window does not
 * use it. `minContextSlot` = the window's end makes a node whose finalized slot is behind refuse
 * (-32016) rather than answer short. Heads are evidence: the finalized slot is read with the
 * confirmed one from the same node and believed only if it trails it by the network's least
 * finality lag and never goes back.
 */
import type { ChainHead, DroppedLog, ReadResult, TransferReader, VerifiedTransfer } from '../family.js';
import { transferKey } from '../family.js';
import type { FinalityRule, Network, SolanaNetworkId } from '../networks.js';
import { ReadRefused } from '../evm/reader.js';
import { associatedTokenAddress, parseSolanaAddress } from './address.js';
import { type SignatureInfo, type SolanaRpc } from './rpc.js';
import { MalformedTransaction, readTransaction, type SolanaTransfer, type WatchedAccount } from './transaction.js';

/**
 * getGenesisHash of each network: mainnet-beta's, and for the simulated devnet the base58 of
 * sha256("gatewayd solana-devnet genesis"), which no real cluster has.
 */
export const SOLANA_GENESIS_HASHES: Readonly<Record<SolanaNetworkId, string>> = Object.freeze({
  'solana-mainnet': '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
  'solana-devnet': '46muiszbNGUWftXRRZsWaR4v69tD3tutQSCBSzi5ZJN9',
});

export interface SolanaReaderOptions {
  network: Readonly<Network>;
  rpc: SolanaRpc;
  /** Signatures per getSignaturesForAddress page (default 100; the RPC allows 1 000). */
  pageSize?: number;
  /** Pages of one account in one window before the window is refused as unreadable (default 50). */
  maxPages?: number;
  /** Accounts' first pages in one JSON-RPC batch, and transactions per batch (default 20). */
  batchSize?: number;
  /** Only `finalized` is offered: Solana's confirmed blocks can still be skipped. */
  finality?: FinalityRule;
}

/** Every pinned token's associated token account of each owner: what `readTransfers` watches. */
export function watchedAccounts(network: Readonly<Network>, owners: readonly string[], tokens?: readonly string[]): WatchedAccount[] {
  const pinned = tokens ? network.tokens.filter((t) => tokens.includes(t.contract)) : network.tokens;
  return owners.flatMap((owner) => {
    if (!parseSolanaAddress(owner).ok) throw new Error(`watched owner ${owner} is not a Solana address`);
    return pinned.map((token) => ({ account: associatedTokenAddress(owner, token.contract), owner, token }));
  });
}

interface Listed extends SignatureInfo {
  order: number;
}

export class SolanaReader implements TransferReader {
  private lastFinal: ChainHead | undefined;
  private readonly hints = new Map<string, { signature: string; slot: bigint }>();

  constructor(private readonly options: SolanaReaderOptions) {
    if (options.network.family !== 'solana') throw new Error(`${options.network.id} is not a Solana network`);
    if (options.finality && !(options.finality.kind === 'tag' && options.finality.tag === 'finalized')) {
      throw new Error('a Solana network is read at finalized commitment only');
    }
  }

  get network(): Readonly<Network> {
    return this.options.network;
  }

  private get rpc(): SolanaRpc {
    return this.options.rpc;
  }

  async checkNetwork(): Promise<void> {
    const expected = SOLANA_GENESIS_HASHES[this.network.id as SolanaNetworkId];
    const hash = await this.rpc.genesisHash();
    if (hash !== expected) {
      throw new ReadRefused('wrong_chain', `${this.rpc.name} serves the chain of genesis ${hash}, not ${this.network.id} (${expected})`);
    }
  }

  private async head(slot: bigint, commitment: 'finalized' | 'confirmed'): Promise<ChainHead> {
    const block = await this.rpc.block(slot, commitment);
    if (!block) throw new ReadRefused('missing_block', `${this.rpc.name} has no ${commitment} block at slot ${slot}`);
    return { number: slot, hash: block.blockhash, timeMs: block.blockTime * 1000 };
  }

  async latestHead(): Promise<ChainHead> {
    return this.head(await this.rpc.confirmedSlot(), 'confirmed');
  }

  /**
   * The finalized slot, read with the confirmed one in one batch, believed only if it is not above
   * it, trails it by the network's least finality lag (a provider that calls every slot final is
   * refused), and does not go back from, or change the hash of, the last one this reader accepted.
   */
  async finalHead(): Promise<ChainHead> {
    const { finalized, confirmed } = await this.rpc.slots();
    const minLag = BigInt(this.network.minFinalityLagBlocks);
    if (finalized > confirmed) throw new ReadRefused('implausible_head', `finalized slot ${finalized} is above the confirmed slot ${confirmed}`);
    if (confirmed - finalized < minLag && confirmed >= minLag) {
      throw new ReadRefused(
        'implausible_head',
        `finalized slot ${finalized} is ${confirmed - finalized} slots behind the confirmed one (${confirmed}); ${this.network.id} finalizes at least ${minLag} behind`,
      );
    }
    const head = await this.head(finalized, 'finalized');
    const last = this.lastFinal;
    if (last && (head.number < last.number || (head.number === last.number && head.hash !== last.hash))) {
      throw new ReadRefused('implausible_head', `finalized slot went back from ${last.number} (${last.hash}) to ${head.number} (${head.hash})`);
    }
    this.lastFinal = head;
    return head;
  }

  /** The TransferReader form: recipients are owners, every pinned token's account of each is read (or those of `tokens`). */
  readTransfers(range: { from: bigint; to: bigint; recipients: readonly string[]; finalAtOrBelow: bigint; tokens?: readonly string[] }): Promise<ReadResult> {
    return this.readAccounts({ ...range, accounts: watchedAccounts(this.network, range.recipients, range.tokens) });
  }

  /**
   * Verified transfers into the given token accounts in slots `[from, to]`. `complete` is false when
   * a listed transaction could not be settled (not given, not well formed, not listed as finalized,
   * its block missing): the window must be read again before the cursor passes it.
   */
  async readAccounts(range: { from: bigint; to: bigint; accounts: readonly WatchedAccount[]; finalAtOrBelow: bigint }): Promise<ReadResult> {
    const dropped: DroppedLog[] = [];
    const watched = new Map(range.accounts.map((a) => [a.account, a]));
    if (watched.size === 0 || range.to < range.from) return { transfers: [], dropped, complete: true };
    let complete = true;
    const listed = new Map<string, Listed>();
    const newest = new Map<string, { signature: string; slot: bigint }>();
    for (const [account, entries] of await this.listWindow([...watched.keys()], range.from, range.to)) {
      if (entries[0]) newest.set(account, { signature: entries[0].signature, slot: entries[0].slot });
      for (const e of entries) {
        if (e.confirmationStatus !== null && e.confirmationStatus !== 'finalized') {
          // Asked at finalized commitment, the provider lists a signature it does not call final.
          dropped.push({ reason: 'not_final', txHash: e.signature, blockNumber: e.slot });
          complete = false;
          continue;
        }
        const known = listed.get(e.signature);
        if (known && known.slot !== e.slot) throw new ReadRefused('malformed', `${this.rpc.name} lists ${e.signature} in slots ${known.slot} and ${e.slot}`);
        if (!known) listed.set(e.signature, { ...e, order: listed.size });
      }
    }
    const wanted = [...listed.values()].filter((e) => {
      if (e.err === null) return true;
      dropped.push({ reason: 'failed', txHash: e.signature, blockNumber: e.slot });
      return false;
    });
    const answers = await this.rpc.transactions(
      wanted.map((e) => e.signature),
      this.options.batchSize ?? 20,
    );
    const candidates: Array<{ transfer: Omit<SolanaTransfer, 'blockHash' | 'blockTimeMs' | 'finality'>; blockTime: number | null; order: number }> = [];
    wanted.forEach((e, i) => {
      const where = { txHash: e.signature, blockNumber: e.slot };
      if (answers[i] === null || answers[i] === undefined) {
        dropped.push({ reason: 'unavailable', ...where });
        complete = false;
        return;
      }
      try {
        const read = readTransaction(answers[i], { network: this.network, signature: e.signature, slot: e.slot, watched });
        dropped.push(...read.dropped);
        for (const transfer of read.transfers) candidates.push({ transfer, blockTime: read.blockTime, order: e.order });
      } catch (err) {
        if (!(err instanceof MalformedTransaction)) throw err;
        dropped.push({ reason: 'malformed', ...where });
        complete = false;
      }
    });
    const blocks = await this.rpc.blocks([...new Set(candidates.map((c) => c.transfer.blockNumber))], this.options.batchSize ?? 20);
    const transfers: SolanaTransfer[] = [];
    const keys = new Set<string>();
    for (const { transfer, blockTime } of candidates.sort((a, b) => b.order - a.order)) {
      const where = { txHash: transfer.txHash, logIndex: transfer.logIndex, blockNumber: transfer.blockNumber };
      const block = blocks.get(transfer.blockNumber);
      if (!block || (blockTime !== null && blockTime !== block.blockTime)) {
        dropped.push({ reason: block ? 'malformed' : 'unavailable', ...where });
        complete = false;
        continue;
      }
      const key = transferKey(transfer);
      if (keys.has(key)) continue;
      keys.add(key);
      transfers.push({
        ...transfer,
        blockHash: block.blockhash,
        blockTimeMs: block.blockTime * 1000,
        finality: transfer.blockNumber <= range.finalAtOrBelow ? 'final' : 'seen',
      });
    }
    transfers.sort((a, b) => (a.blockNumber === b.blockNumber ? 0 : a.blockNumber < b.blockNumber ? -1 : 1));
    if (complete) for (const [account, hint] of newest) this.hints.set(account, hint);
    return { transfers, dropped, complete };
  }

  /**
   * Each account's signatures in slots `[from, to]`, newest first. The first page of every account
   * goes in batches; an account whose page is full is paged on with `before` until a signature below
   * `from` (or `until`, the hint) ends it. A provider that answers pages out of slot order, or more
   * pages than `maxPages`, is refused.
   */
  private async listWindow(accounts: string[], from: bigint, to: bigint): Promise<Map<string, SignatureInfo[]>> {
    const limit = this.options.pageSize ?? 100;
    const maxPages = this.options.maxPages ?? 50;
    const batch = this.options.batchSize ?? 20;
    const out = new Map<string, SignatureInfo[]>(accounts.map((a) => [a, []]));
    const state = new Map(accounts.map((a) => [a, { before: undefined as string | undefined, pages: 0, lastSlot: undefined as bigint | undefined }]));
    let open = [...accounts];
    while (open.length > 0) {
      const next: string[] = [];
      for (let i = 0; i < open.length; i += batch) {
        const part = open.slice(i, i + batch);
        const pages = await this.rpc.signatures(
          part.map((address) => {
            const hint = this.hints.get(address);
            return {
              address,
              limit,
              before: state.get(address)!.before,
              until: hint && hint.slot < from ? hint.signature : undefined,
              minContextSlot: to,
            };
          }),
        );
        part.forEach((address, j) => {
          const s = state.get(address)!;
          const page = pages[j]!;
          let done = page.length < limit;
          for (const e of page) {
            if (s.lastSlot !== undefined && e.slot > s.lastSlot) {
              throw new ReadRefused('malformed', `${this.rpc.name} lists the signatures of ${address} out of slot order`);
            }
            s.lastSlot = e.slot;
            if (e.slot < from) {
              done = true;
              break;
            }
            if (e.slot <= to) out.get(address)!.push(e);
          }
          if (done) return;
          s.before = page.at(-1)!.signature;
          if (++s.pages >= maxPages) {
            throw new ReadRefused('range_unreadable', `${address} has more than ${maxPages * limit} signatures in slots ${from} to ${to}`);
          }
          next.push(address);
        });
      }
      open = next;
    }
    return out;
  }

  /** Which transfers' blocks are still the provider's finalized block at their slot. */
  async recheck(transfers: readonly VerifiedTransfer[]): Promise<{ canonical: VerifiedTransfer[]; reorged: VerifiedTransfer[] }> {
    const blocks = await this.rpc.blocks([...new Set(transfers.map((t) => t.blockNumber))]);
    const canonical: VerifiedTransfer[] = [];
    const reorged: VerifiedTransfer[] = [];
    for (const t of transfers) (blocks.get(t.blockNumber)?.blockhash === t.blockHash ? canonical : reorged).push(t);
    return { canonical, reorged };
  }
}
