/**
 * The simulated solana-devnet of `gatewayd dev`: a JSON-RPC server on loopback answering the calls
 * the Solana reader (src/chains/solana/reader.ts) makes, in a real node's shapes:
 *   getGenesisHash (the registry's solana-devnet hash, which no real cluster has),
 *   getSlot {commitment} (a slot every dev.block_interval_ms; finalized `finalityLag` slots behind confirmed),
 *   getBlock [slot, {commitment, transactionDetails: none}] (-32004 above the commitment's slot),
 *   getSignaturesForAddress [address, {limit, before, until, minContextSlot}] (newest first; -32016
 *     while the finalized slot is below minContextSlot),
 *   getTransaction [signature, {encoding: jsonParsed}] (null above the commitment's slot),
 * and batches of them. A payment (`pay`) is an SPL Token `transferChecked` from a payer's token
 * account into the owner's associated token account of the mint, in the next slot, with the
 * pre and post token balances a node reports (the reader checks that they add up), a Solana Pay
 * reference carried as an extra account of the instruction (what a node's parser shows as
 * multisigAuthority + signers), and meta.err null, or an InstructionError that moves nothing.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SOLANA_GENESIS_HASHES } from '../chains/solana/reader.js';
import { associatedTokenAddress, TOKEN_PROGRAM_ID } from '../chains/solana/address.js';
import { encodeBase58 } from '../lib/base58.js';
import { closeServer, listenLoopback, readBody } from './loopback.js';

export interface SimulatedSolanaOptions {
  port?: number;
  blockIntervalMs: number;
  /** Slots between the confirmed slot and the finalized one (at least 1). */
  finalityLag: number;
  now?: () => number;
}

export interface SolanaPayment {
  /** The receiving wallet (owner); the tokens go to its associated token account of `mint`. */
  owner: string;
  mint: string;
  decimals: number;
  raw: bigint;
  /** A Solana Pay reference key the wallet adds to the instruction. */
  reference?: string;
  /** The payer (owner of the source token account); default a fixed devnet payer. */
  from?: string;
  failed?: boolean;
}

export interface SolanaPaymentResult {
  signature: string;
  slot: number;
  blockTimeMs: number;
  /** When the slot is finalized: from then on the watcher can confirm it. */
  finalizedAtMs: number;
  tokenAccount: string;
}

export interface SimulatedSolana {
  url: string;
  /** The confirmed slot now. */
  slot(): number;
  readonly finalityLag: number;
  readonly blockIntervalMs: number;
  pay(p: SolanaPayment): SolanaPaymentResult;
  close(): Promise<void>;
}

/** The payer of a payment that names none: base58 of sha256("gatewayd solana-devnet payer"). */
export const DEFAULT_SOLANA_PAYER = encodeBase58(createHash('sha256').update('gatewayd solana-devnet payer').digest());
/** A mint that calls itself USDT but is not the devnet's: base58 of sha256("gatewayd solana-devnet fake USDT"). */
export const FAKE_SOLANA_MINT = encodeBase58(createHash('sha256').update('gatewayd solana-devnet fake USDT').digest());

interface Tx {
  signature: string;
  slot: number;
  accounts: string[];
  parsed: Record<string, unknown>;
}

class Refusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const blockhashOf = (slot: number) => encodeBase58(createHash('sha256').update(`gatewayd solana-devnet block ${slot}`).digest());

export async function startSimulatedSolana(options: SimulatedSolanaOptions): Promise<SimulatedSolana> {
  const now = options.now ?? Date.now;
  const interval = options.blockIntervalMs;
  const lag = Math.max(1, options.finalityLag);
  const genesisMs = now() - (lag + 1) * interval;
  const transactions = new Map<string, Tx>();
  const byAddress = new Map<string, Tx[]>();
  const balances = new Map<string, bigint>();
  const slotTimeMs = (slot: number) => genesisMs + slot * interval;
  // A block's time in whole seconds as a node reports it, rounded up so that a payment made after an
  // invoice never carries an earlier time than the invoice (the gateway matches by time too).
  const blockTimeOf = (slot: number) => Math.ceil(slotTimeMs(slot) / 1000);
  const confirmed = () => Math.floor((now() - genesisMs) / interval);
  const finalized = () => confirmed() - lag;
  const commitmentSlot = (config: unknown) => {
    const c = (config as { commitment?: unknown } | undefined)?.commitment;
    return c === 'confirmed' || c === 'processed' ? confirmed() : finalized();
  };

  function answer(method: string, params: unknown[]): unknown {
    switch (method) {
      case 'getGenesisHash':
        return SOLANA_GENESIS_HASHES['solana-devnet'];
      case 'getSlot':
        return commitmentSlot(params[0]);
      case 'getBlock': {
        const slot = params[0];
        if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0) throw new Refusal(-32602, 'Invalid params: expected a slot');
        if (slot > commitmentSlot(params[1])) throw new Refusal(-32004, `Block not available for slot ${slot}`);
        if (slot < 1) throw new Refusal(-32009, `Slot ${slot} was skipped, or missing in long-term storage`);
        return {
          blockhash: blockhashOf(slot),
          previousBlockhash: blockhashOf(slot - 1),
          parentSlot: slot - 1,
          blockTime: blockTimeOf(slot),
          blockHeight: slot,
        };
      }
      case 'getSignaturesForAddress': {
        const [address, config = {}] = params as [unknown, Record<string, unknown> | undefined];
        if (typeof address !== 'string') throw new Refusal(-32602, 'Invalid params: expected an address');
        if (typeof config.minContextSlot === 'number' && config.minContextSlot > finalized()) {
          throw new Refusal(-32016, 'Minimum context slot has not been reached');
        }
        const top = commitmentSlot(config);
        let list = (byAddress.get(address) ?? []).filter((t) => t.slot <= top).reverse();
        if (typeof config.before === 'string') {
          const i = list.findIndex((t) => t.signature === config.before);
          list = i === -1 ? [] : list.slice(i + 1);
        }
        if (typeof config.until === 'string') {
          const i = list.findIndex((t) => t.signature === config.until);
          if (i !== -1) list = list.slice(0, i);
        }
        const limit = typeof config.limit === 'number' ? Math.min(config.limit, 1000) : 1000;
        const fin = finalized();
        return list.slice(0, limit).map((t) => ({
          signature: t.signature,
          slot: t.slot,
          err: (t.parsed.meta as { err: unknown }).err,
          memo: null,
          blockTime: blockTimeOf(t.slot),
          confirmationStatus: t.slot <= fin ? 'finalized' : 'confirmed',
        }));
      }
      case 'getTransaction': {
        const [signature, config] = params;
        const tx = typeof signature === 'string' ? transactions.get(signature) : undefined;
        if (!tx || tx.slot > commitmentSlot(config)) return null;
        return structuredClone(tx.parsed);
      }
      default:
        throw new Refusal(-32601, 'Method not found');
    }
  }

  function one(raw: unknown): unknown {
    const call = raw as { id?: unknown; method?: unknown; params?: unknown };
    const id = call?.id ?? null;
    if (typeof call?.method !== 'string') return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } };
    try {
      return { jsonrpc: '2.0', id, result: answer(call.method, Array.isArray(call.params) ? call.params : []) };
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message } };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const { text, tooLarge } = await readBody(req, 1_000_000);
    if (tooLarge) {
      res.writeHead(413).end();
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      return;
    }
    const out = Array.isArray(body) ? body.map(one) : one(body);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  }

  const { server, url } = await listenLoopback(options.port ?? 0, handle);

  function pay(p: SolanaPayment): SolanaPaymentResult {
    // A transaction sent now lands in the next slot (served once that slot is produced).
    const slot = confirmed() + 1;
    const payer = p.from ?? DEFAULT_SOLANA_PAYER;
    const source = associatedTokenAddress(payer, p.mint);
    const destination = associatedTokenAddress(p.owner, p.mint);
    const signature = encodeBase58(randomBytes(64));
    const sourceBefore = balances.get(source) ?? 1_000_000_000_000n;
    const destBefore = balances.get(destination) ?? 0n;
    const moved = p.failed ? 0n : p.raw;
    balances.set(source, sourceBefore - moved);
    balances.set(destination, destBefore + moved);
    // Account keys as a jsonParsed answer lists them: the fee payer and signer first, then the writable token accounts.
    const keys = [payer, source, destination, p.mint, TOKEN_PROGRAM_ID, ...(p.reference ? [p.reference] : [])];
    const accountKeys = keys.map((pubkey, i) => ({ pubkey, signer: i === 0, writable: i <= 2, source: 'transaction' }));
    const ui = (raw: bigint) => {
      const unit = 10n ** BigInt(p.decimals);
      const text = p.decimals === 0 ? raw.toString() : `${raw / unit}.${(raw % unit).toString().padStart(p.decimals, '0')}`.replace(/\.?0+$/, '');
      return { amount: raw.toString(), decimals: p.decimals, uiAmount: Number(text), uiAmountString: text };
    };
    const balance = (accountIndex: number, owner: string, raw: bigint) => ({
      accountIndex,
      mint: p.mint,
      owner,
      programId: TOKEN_PROGRAM_ID,
      uiTokenAmount: ui(raw),
    });
    const err = p.failed ? { InstructionError: [0, { Custom: 1 }] } : null;
    const info: Record<string, unknown> = { source, mint: p.mint, destination, tokenAmount: ui(p.raw) };
    // A reference is one more account of the instruction: a node's parser shows the authority as a multisig and the reference as its signer.
    if (p.reference) Object.assign(info, { multisigAuthority: payer, signers: [p.reference] });
    else info.authority = payer;
    const blockTime = blockTimeOf(slot);
    const parsed = {
      slot,
      blockTime,
      version: 0,
      meta: {
        err,
        status: err === null ? { Ok: null } : { Err: err },
        fee: 5000,
        preBalances: [1_000_000_000, 2_039_280, 2_039_280, 1_461_600, 1],
        postBalances: [999_995_000, 2_039_280, 2_039_280, 1_461_600, 1],
        innerInstructions: [],
        logMessages: [
          `Program ${TOKEN_PROGRAM_ID} invoke [1]`,
          'Program log: Instruction: TransferChecked',
          `Program ${TOKEN_PROGRAM_ID} ${err === null ? 'success' : 'failed: custom program error: 0x1'}`,
        ],
        preTokenBalances: [balance(1, payer, sourceBefore), balance(2, p.owner, destBefore)],
        postTokenBalances: [balance(1, payer, sourceBefore - moved), balance(2, p.owner, destBefore + moved)],
        rewards: [],
        loadedAddresses: { writable: [], readonly: [] },
        computeUnitsConsumed: 6200,
      },
      transaction: {
        signatures: [signature],
        message: {
          accountKeys,
          recentBlockhash: blockhashOf(slot - 1),
          instructions: [{ programId: TOKEN_PROGRAM_ID, program: 'spl-token', parsed: { type: 'transferChecked', info }, stackHeight: null }],
        },
      },
    };
    const tx: Tx = { signature, slot, accounts: keys, parsed };
    transactions.set(signature, tx);
    for (const a of new Set(keys)) byAddress.set(a, [...(byAddress.get(a) ?? []), tx]);
    const blockTimeMs = blockTime * 1000;
    return { signature, slot, blockTimeMs, finalizedAtMs: slotTimeMs(slot + lag), tokenAccount: destination };
  }

  return {
    url,
    slot: confirmed,
    finalityLag: lag,
    blockIntervalMs: interval,
    pay,
    close: () => closeServer(server, []),
  };
}
