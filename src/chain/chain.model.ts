/**
 * A recorded chain transfer (confirmed, review paid, late or unmatched) and its JSON views: the
 * `transaction` object of invoice events and the Dashboard's transfer rows.
 */
import type { ChainTransferKind } from '../db/schema.js';

export interface ChainTransfer {
  id: string;
  txHash: string;
  logIndex: number;
  from: string;
  to: string;
  amount: bigint;
  kind: ChainTransferKind;
  invoiceId: string | null;
  blockNumber: number;
  blockTimestamp: number;
  recordedAt: number;
}
