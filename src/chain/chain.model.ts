/**
 * A recorded chain transfer (confirmed, review paid, late or unmatched); its JSON views live beside
 * their schemas in chain.schemas.ts.
 */
import type { ChainTransferKind } from '../db/schema.js';
import type { Micros } from '../lib/amounts.js';

export interface ChainTransfer {
  id: string;
  txHash: string;
  logIndex: number;
  from: string;
  to: string;
  amount: Micros;
  /** The USDT contract that emitted the Transfer log. */
  tokenContract: string;
  kind: ChainTransferKind;
  invoiceId: string | null;
  blockNumber: number;
  blockTimestamp: number;
  recordedAt: number;
}
