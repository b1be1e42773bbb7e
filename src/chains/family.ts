/**
 * What every chain family (TRON, the EVM chains, later Solana and TON) hands the chain-neutral core:
 * verified transfers in one shape, and the five parts a family supplies (its reader, address codec,
 * scale, finality rule and payment link). docs/architecture.md, "Chain families (in progress)",
 * gives the plan; nothing here knows a database, an invoice or an HTTP route.
 */
import type { Micros } from '../lib/amounts.js';
import { findNetwork, type FamilyName, type FinalityRule, type NetworkId, type Network, type Token } from './networks.js';

export type { FamilyName, FinalityRule };

/**
 * A transfer's value in micro-units, or why it has none: a raw value with non-zero digits below
 * the sixth decimal (possible on an 18-decimal token) matches no payable amount and is never rounded.
 */
export type ScaledAmount = { exact: true; micros: Micros } | { exact: false; reason: 'below_micro_unit' };

/**
 * `seen`: in a block the provider reports, above the network's finality rule (it may still vanish);
 * `final`: at or below it. Nothing confirms an invoice before `final`.
 */
export type Finality = 'seen' | 'final';

/**
 * One token transfer that passed every check of its family's reader. Addresses are in the family's
 * canonical printed form (EIP-55 on EVM, base58check on TRON); the raw value is the on-chain integer
 * as a decimal string's bigint; `micros` is the scaled amount or `inexact`.
 */
export interface VerifiedTransfer {
  network: NetworkId;
  token: Token['symbol'];
  contract: string;
  from: string;
  to: string;
  raw: bigint;
  amount: ScaledAmount;
  txHash: string;
  /** The log's index in its block (EVM `logIndex`); with txHash and network the dedupe key. */
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  /** Block time in ms since the epoch, from the block header, never from the log or the clock. */
  blockTimeMs: number;
  finality: Finality;
  /**
   * What the payer's wallet put in the payment to name it, where the chain carries one (a TON
   * transfer's text comment); matching may use it beside the exact amount, never instead of it.
   */
  reference?: string;
  /** Solana: the accounts a transfer instruction carries after its authority (Solana Pay reference keys). */
  references?: readonly string[];
}

/** Families whose transaction hashes are hex, where letter case carries nothing (TRON's ids, EVM's 0x hashes). */
const HEX_HASH_FAMILIES: ReadonlySet<FamilyName> = new Set<FamilyName>(['tron', 'evm']);

/**
 * The dedupe key of a transfer: (network, transaction hash, log index), never the transaction alone.
 * A hex hash (TRON, EVM) is compared in lower case; any other family's is kept as it is: a Solana
 * signature is base58, where `a` and `A` are different digits, so two signatures that differ only
 * in case are two transactions.
 */
export function transferKey(t: Pick<VerifiedTransfer, 'network' | 'txHash' | 'logIndex'>): string {
  const family = findNetwork(t.network)?.family;
  const hash = family !== undefined && HEX_HASH_FAMILIES.has(family) ? t.txHash.toLowerCase() : t.txHash;
  return `${t.network}:${hash}:${t.logIndex}`;
}

/** Addresses of one family: parse what a merchant or a provider gives, print the canonical form. */
export interface AddressCodec {
  /** The canonical form, or an error saying what is wrong (checksum, length, another family). */
  parse(text: string): { ok: true; address: string } | { ok: false; error: string };
  /** True when `text` is already in canonical form. */
  isCanonical(text: string): boolean;
}

/** Micro-units to the token's raw integer and back, for one token's decimals. */
export interface Scale {
  toRaw(amount: Micros, decimals: number): bigint;
  fromRaw(raw: bigint, decimals: number): ScaledAmount;
}

/** The payer's wallet link (and QR code) for an exact amount of a token to an address. */
export interface PaymentLinkBuilder {
  paymentLink(network: Network, token: Token, to: string, amount: Micros): string;
}

/** A head the reader accepted: its number, hash and time. */
export interface ChainHead {
  number: bigint;
  hash: string;
  timeMs: number;
}

/**
 * What a family's reader answers for one range of one network. `complete` is false when something in
 * the range could not be settled (a log whose block is no longer canonical, a provider that changed
 * its answer): the caller then reads the range again and never moves its cursor past it.
 */
export interface ReadResult {
  transfers: VerifiedTransfer[];
  dropped: DroppedLog[];
  complete: boolean;
}

/** A log that was not taken, and why (for metrics and tests; never a payment). */
export interface DroppedLog {
  reason: DropReason;
  txHash?: string;
  logIndex?: number;
  blockNumber?: bigint;
}

export type DropReason =
  | 'other_contract'
  | 'not_transfer'
  | 'topic_count'
  | 'data_length'
  | 'removed'
  | 'not_canonical'
  | 'not_in_bloom'
  | 'not_watched'
  | 'outside_range'
  | 'malformed'
  | 'duplicate'
  // Solana: a transaction with meta.err (its instructions moved nothing), a Token-2022 instruction
  // (no pinned mint is one), instructions that do not add up to the account's balance change, a
  // transfer from the account to itself, a signature the provider lists but whose transaction it does
  // not give, or one it does not list as finalized.
  | 'failed'
  | 'other_program'
  | 'balance_mismatch'
  | 'self_transfer'
  | 'unavailable'
  | 'not_final'
  // TON: the transaction aborted (or its compute phase failed), the message bounced, the jetton went
  // to another jetton wallet than the owner's, the receiving transaction is not (yet) committed in
  // the masterchain, or one provider's parts of a transfer disagree with each other.
  | 'aborted'
  | 'bounced'
  | 'wrong_wallet'
  | 'not_committed'
  | 'mismatch';

/** A family's reader for one network through one provider. */
export interface TransferReader {
  /** The provider's chain id (EVM) or genesis (TRON) checked against the registry; throws on another network. */
  checkNetwork(): Promise<void>;
  /** The head the finality rule names, checked for plausibility against the latest head. */
  finalHead(): Promise<ChainHead>;
  latestHead(): Promise<ChainHead>;
  /** Verified transfers of the network's pinned tokens to the watched addresses in [from, to]. */
  readTransfers(range: {
    from: bigint;
    to: bigint;
    recipients: readonly string[];
    finalAtOrBelow: bigint;
    /** Only these pinned tokens (by contract; all when absent): a reader that reads per token account reads only theirs. */
    tokens?: readonly string[];
  }): Promise<ReadResult>;
  /** Which of the given transfers' blocks are still canonical at their height (a reorg check). */
  recheck(transfers: readonly VerifiedTransfer[]): Promise<{ canonical: VerifiedTransfer[]; reorged: VerifiedTransfer[] }>;
}

/** A chain family: what the core needs of TRON, the EVM chains, Solana or TON. */
export interface ChainFamily {
  name: FamilyName;
  codec: AddressCodec;
  scale: Scale;
  /** The rule a network of this family follows unless the operator chooses another. */
  defaultFinality(network: Network): FinalityRule;
  links: PaymentLinkBuilder;
}
