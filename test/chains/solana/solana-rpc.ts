/**
 * A loopback Solana JSON-RPC server answering from a Ledger, in the shapes and with the refusals of a
 * real node: getGenesisHash, getSlot (finalized, confirmed), getBlock (transactionDetails none; -32004
 * above the commitment's slot, -32007 for a skipped slot), getSignaturesForAddress (newest first,
 * `before`, `until`, `limit`, `minContextSlot` refused with -32016 when the finalized slot is behind
 * it, `confirmationStatus`), getTransaction (json or jsonParsed; null above the commitment's slot),
 * and batches. As a test switches it on, it lies: it rewrites a call's result, refuses a call, or
 * answers whole HTTP requests with 429 and Retry-After. Every call is recorded.
 */
import { serveJsonRpc, type RateLimit } from '../loopback-rpc.js';
import type { Ledger } from './ledger.js';

export interface Call {
  method: string;
  params: any[];
}

export interface Hostility {
  /** Answers a call with a JSON-RPC error instead, when it returns one. */
  refuse?: (call: Call) => { code: number; message: string } | undefined;
  /** Rewrites an honest result. */
  result?: (call: Call, result: any) => any;
  /** The next `times` HTTP requests get 429 with this Retry-After. */
  rateLimit?: RateLimit;
}

export interface SolanaRpcServer {
  url: string;
  readonly calls: Call[];
  /** HTTP requests received, refused ones included. */
  readonly requests: number[];
  readonly bytesSent: number;
  set(h: Hostility): void;
  close(): Promise<void>;
}

class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function commitmentSlot(ledger: Ledger, config: any): bigint {
  return config?.commitment === 'confirmed' || config?.commitment === 'processed' ? ledger.confirmed : ledger.finalized;
}

function answer(ledger: Ledger, method: string, params: any[]): unknown {
  switch (method) {
    case 'getGenesisHash':
      return ledger.genesisHash;
    case 'getSlot':
      return Number(commitmentSlot(ledger, params[0]));
    case 'getBlock': {
      const slot = BigInt(params[0]);
      if (slot > commitmentSlot(ledger, params[1])) throw new RpcFailure(-32004, `Block not available for slot ${slot}`);
      const block = ledger.block(slot);
      if (!block) throw new RpcFailure(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
      return { ...block, previousBlockhash: ledger.block(BigInt(block.parentSlot))?.blockhash ?? block.blockhash };
    }
    case 'getSignaturesForAddress': {
      const [address, config = {}] = params;
      if (config.minContextSlot !== undefined && BigInt(config.minContextSlot) > ledger.finalized) {
        throw new RpcFailure(-32016, 'Minimum context slot has not been reached');
      }
      let list = ledger.signaturesOf(address, commitmentSlot(ledger, config));
      if (config.before !== undefined) {
        const i = list.findIndex((t) => t.signature === config.before);
        list = i === -1 ? [] : list.slice(i + 1);
      }
      if (config.until !== undefined) {
        const i = list.findIndex((t) => t.signature === config.until);
        if (i !== -1) list = list.slice(0, i);
      }
      return list.slice(0, Math.min(config.limit ?? 1000, 1000)).map((t) => ({
        signature: t.signature,
        slot: Number(t.slot),
        err: t.err,
        memo: null,
        blockTime: t.blockTime,
        confirmationStatus: t.slot <= ledger.finalized ? 'finalized' : 'confirmed',
      }));
    }
    case 'getTransaction': {
      const [signature, config = {}] = params;
      const tx = ledger.transactions.get(signature);
      if (!tx || tx.slot > commitmentSlot(ledger, config)) return null;
      return structuredClone(config.encoding === 'jsonParsed' && tx.parsed ? tx.parsed : tx.json);
    }
    default:
      throw new RpcFailure(-32601, `Method not found: ${method}`);
  }
}

export async function startSolanaRpc(ledger: Ledger): Promise<SolanaRpcServer> {
  let hostility: Hostility = {};
  const calls: Call[] = [];
  function one(raw: any): unknown {
    const call: Call = { method: raw.method, params: raw.params ?? [] };
    calls.push(call);
    const refusal = hostility.refuse?.(call);
    if (refusal) return { jsonrpc: '2.0', id: raw.id, error: refusal };
    try {
      const honest = answer(ledger, call.method, call.params);
      return { jsonrpc: '2.0', id: raw.id, result: hostility.result ? hostility.result(call, honest) : honest };
    } catch (err) {
      if (!(err instanceof RpcFailure)) throw err;
      return { jsonrpc: '2.0', id: raw.id, error: { code: err.code, message: err.message } };
    }
  }
  const loopback = await serveJsonRpc(
    (body) => (Array.isArray(body) ? body.map(one) : one(body)),
    () => hostility.rateLimit,
  );
  return {
    url: loopback.url,
    calls,
    requests: loopback.requestTimes,
    get bytesSent() {
      return loopback.bytesSent();
    },
    set(h) {
      hostility = h;
    },
    close: loopback.close,
  };
}
