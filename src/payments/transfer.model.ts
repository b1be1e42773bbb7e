/**
 * A recorded chain transfer (confirmed, review paid, late or unmatched); its JSON views live beside
 * their schemas in transfer.schemas.ts.
 */
import type { NetworkId, TokenSymbol } from '../chains/networks.js';
import type { ChainTransferKind, UnmatchedReason } from '../db/schema.js';
import type { Micros } from '../lib/amounts.js';

export interface ChainTransfer {
  id: string;
  network: NetworkId;
  token: TokenSymbol;
  txHash: string;
  logIndex: number;
  from: string;
  to: string;
  /** Micro-units; for a value with digits below the micro-unit (an 18-decimal token) the micro-units below it. */
  amount: Micros;
  /** The on-chain integer (amount x 10^(decimals-6) for an exact amount). */
  rawAmount: bigint;
  /** The token contract that emitted the Transfer log. */
  tokenContract: string;
  kind: ChainTransferKind;
  invoiceId: string | null;
  blockNumber: number;
  /** The hash of the block it was read in; null where the chain's reads carry none (TRON) or on older rows. */
  blockHash: string | null;
  blockTimestamp: number;
  recordedAt: number;
  /** Why an unmatched transfer paid no invoice; null otherwise. */
  reason: UnmatchedReason | null;
}
