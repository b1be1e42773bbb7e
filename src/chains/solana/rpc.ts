/**
 * The Solana JSON-RPC calls the reader makes, each answer checked for shape before it is used. The
 * transport (HTTP, batches, 429 and Retry-After honoured per provider, a pause shared by every call
 * to that provider) is the chain-neutral JSON-RPC client of `../evm/rpc.ts`; Solana's own refusals
 * come back as its RpcError with the provider's code: -32004 block not available, -32007 and -32009
 * slot skipped, -32014 block status not yet available, -32016 minimum context slot not reached.
 */
import type { EvmRpcClient, RpcCall } from '../evm/rpc.js';
import { RpcError } from '../evm/rpc.js';
import { solanaAddressBytes } from './address.js';
import { decodeBase58 } from '../../lib/base58.js';

/** The provider answered, but not in the shape Solana's RPC answers. */
export class SolanaAnswerError extends Error {
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'SolanaAnswerError';
  }
}

/** Codes of a block (or its status) that this provider cannot give now, or that has no block. */
const NO_BLOCK_CODES = new Set([-32004, -32007, -32009, -32014]);
/** The node has not reached the slot a read needs (its finalized slot is behind `minContextSlot`). */
export const MIN_CONTEXT_SLOT_NOT_REACHED = -32016;

export interface SignatureInfo {
  signature: string;
  slot: bigint;
  /** The transaction's error as the list shows it (null when it succeeded). */
  err: unknown;
  /** 'finalized' for an honest answer at finalized commitment; null is allowed for old history. */
  confirmationStatus: string | null;
}

export interface BlockInfo {
  slot: bigint;
  blockhash: string;
  parentSlot: bigint;
  /** Seconds since the epoch, from the block (the leader's estimate voted by the cluster). */
  blockTime: number;
}

export interface SignaturesQuery {
  address: string;
  limit: number;
  before?: string;
  until?: string;
  /** The node must have finalized at least this slot, or it refuses (-32016) instead of answering short. */
  minContextSlot?: bigint;
}

/** A transaction signature: 64 bytes in base58. */
export function isSignature(text: unknown): text is string {
  return typeof text === 'string' && /^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(text) && decodeBase58(text)?.length === 64;
}

function slotOf(value: unknown): bigint | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined;
}

export class SolanaRpc {
  constructor(readonly client: EvmRpcClient) {}

  get name(): string {
    return this.client.name;
  }

  private malformed(message: string): SolanaAnswerError {
    return new SolanaAnswerError(this.name, message);
  }

  async genesisHash(): Promise<string> {
    const hash = await this.client.call('getGenesisHash', []);
    if (typeof hash !== 'string' || !solanaAddressBytes(hash)) throw this.malformed('getGenesisHash did not answer a hash');
    return hash;
  }

  /** The finalized and the confirmed slot, read in one request so they come from the same node. */
  async slots(): Promise<{ finalized: bigint; confirmed: bigint }> {
    const [finalized, confirmed] = (
      await this.client.batch([
        { method: 'getSlot', params: [{ commitment: 'finalized' }] },
        { method: 'getSlot', params: [{ commitment: 'confirmed' }] },
      ])
    ).map(slotOf);
    if (finalized === undefined || confirmed === undefined) throw this.malformed('getSlot did not answer a slot');
    return { finalized, confirmed };
  }

  async confirmedSlot(): Promise<bigint> {
    const slot = slotOf(await this.client.call('getSlot', [{ commitment: 'confirmed' }]));
    if (slot === undefined) throw this.malformed('getSlot did not answer a slot');
    return slot;
  }

  private blockCall(slot: bigint, commitment: 'finalized' | 'confirmed'): RpcCall {
    return {
      method: 'getBlock',
      params: [Number(slot), { commitment, transactionDetails: 'none', rewards: false, maxSupportedTransactionVersion: 0 }],
    };
  }

  private parseBlock(slot: bigint, raw: unknown): BlockInfo | undefined {
    if (raw === null) return undefined;
    const b = raw as { blockhash?: unknown; parentSlot?: unknown; blockTime?: unknown };
    const parentSlot = slotOf(b.parentSlot);
    if (typeof b.blockhash !== 'string' || !solanaAddressBytes(b.blockhash) || parentSlot === undefined || parentSlot >= slot) {
      throw this.malformed(`getBlock ${slot} is not a block`);
    }
    if (typeof b.blockTime !== 'number' || !Number.isSafeInteger(b.blockTime)) throw this.malformed(`block ${slot} has no blockTime`);
    return { slot, blockhash: b.blockhash, parentSlot, blockTime: b.blockTime };
  }

  /** One block's header fields, or undefined when the provider has no block at that slot (skipped, or not available). */
  async block(slot: bigint, commitment: 'finalized' | 'confirmed' = 'finalized'): Promise<BlockInfo | undefined> {
    try {
      return this.parseBlock(slot, await this.client.call('getBlock', this.blockCall(slot, commitment).params));
    } catch (err) {
      if (err instanceof RpcError && err.code !== undefined && NO_BLOCK_CODES.has(err.code)) return undefined;
      throw err;
    }
  }

  /** Blocks by slot, in batches; a slot the provider has no block for is left out. */
  async blocks(slots: readonly bigint[], perBatch = 20): Promise<Map<bigint, BlockInfo>> {
    const out = new Map<bigint, BlockInfo>();
    for (let i = 0; i < slots.length; i += perBatch) {
      const part = slots.slice(i, i + perBatch);
      let answers: unknown[];
      try {
        answers = await this.client.batch(part.map((s) => this.blockCall(s, 'finalized')));
      } catch (err) {
        // One missing block fails a whole batch: ask for these one at a time.
        if (!(err instanceof RpcError) || err.code === undefined || !NO_BLOCK_CODES.has(err.code)) throw err;
        answers = await Promise.all(part.map(async (s) => (await this.block(s)) ?? null));
        part.forEach((s, j) => answers[j] !== null && out.set(s, answers[j] as BlockInfo));
        continue;
      }
      part.forEach((s, j) => {
        const block = this.parseBlock(s, answers[j]);
        if (block) out.set(s, block);
      });
    }
    return out;
  }

  private signaturesCall(q: SignaturesQuery): RpcCall {
    const config: Record<string, unknown> = { commitment: 'finalized', limit: q.limit };
    if (q.before !== undefined) config.before = q.before;
    if (q.until !== undefined) config.until = q.until;
    if (q.minContextSlot !== undefined) config.minContextSlot = Number(q.minContextSlot);
    return { method: 'getSignaturesForAddress', params: [q.address, config] };
  }

  private parseSignatures(q: SignaturesQuery, raw: unknown): SignatureInfo[] {
    if (!Array.isArray(raw)) throw this.malformed(`getSignaturesForAddress ${q.address} did not answer a list`);
    if (raw.length > q.limit) throw this.malformed(`getSignaturesForAddress ${q.address} answered ${raw.length} signatures for a limit of ${q.limit}`);
    return raw.map((e: { signature?: unknown; slot?: unknown; err?: unknown; confirmationStatus?: unknown }) => {
      const slot = slotOf(e?.slot);
      if (!isSignature(e?.signature) || slot === undefined)
        throw this.malformed(`getSignaturesForAddress ${q.address} answered an entry without signature or slot`);
      const status = typeof e.confirmationStatus === 'string' ? e.confirmationStatus : null;
      return { signature: e.signature, slot, err: e.err ?? null, confirmationStatus: status };
    });
  }

  /** One page of an address's signatures at finalized commitment for each query, newest first, in one batch. */
  async signatures(queries: readonly SignaturesQuery[]): Promise<SignatureInfo[][]> {
    if (queries.length === 0) return [];
    const answers = await this.client.batch(queries.map((q) => this.signaturesCall(q)));
    return queries.map((q, i) => this.parseSignatures(q, answers[i]));
  }

  /** Transactions by signature (jsonParsed, versioned ones included), in batches; null where the provider has none. */
  async transactions(signatures: readonly string[], perBatch = 20): Promise<unknown[]> {
    const out: unknown[] = [];
    for (let i = 0; i < signatures.length; i += perBatch) {
      const part = signatures.slice(i, i + perBatch);
      out.push(
        ...(await this.client.batch(
          part.map((s) => ({
            method: 'getTransaction',
            params: [s, { encoding: 'jsonParsed', commitment: 'finalized', maxSupportedTransactionVersion: 0 }],
          })),
        )),
      );
    }
    return out;
  }
}
