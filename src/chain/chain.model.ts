/**
 * A recorded chain transfer (confirmed, review paid, late or unmatched); its JSON views live beside
 * their schemas in chain.schemas.ts.
 */
import type { ChainTransferKind } from '../db/schema.js';

export interface ChainTransfer {
  id: string;
  txHash: string;
  logIndex: number;
  from: string;
  to: string;
  amount: bigint;
  /** The USDT contract that emitted the Transfer log. */
  tokenContract: string;
  kind: ChainTransferKind;
  invoiceId: string | null;
  blockNumber: number;
  blockTimestamp: number;
  recordedAt: number;
}
