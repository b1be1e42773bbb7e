/**
 * A recorded chain transfer (confirmed, review paid, late or unmatched) and its JSON views: the
 * `transaction` object of invoice events and the Dashboard's transfer rows.
 */
import type { ChainTransferKind } from '../db/schema.js';
import { formatAmount } from '../lib/amounts.js';
import { iso } from '../lib/clock.js';

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

/** The `transaction` object of invoice events and of the console views. */
export function toTransactionResponse(t: Pick<ChainTransfer, 'txHash' | 'logIndex' | 'from' | 'to' | 'amount' | 'tokenContract' | 'blockNumber' | 'blockTimestamp'>) {
  return {
    tx_hash: t.txHash,
    log_index: t.logIndex,
    from: t.from,
    to: t.to,
    amount: formatAmount(t.amount),
    token_contract: t.tokenContract,
    block_number: t.blockNumber,
    block_timestamp: iso(t.blockTimestamp),
  };
}

/** A recorded transfer as the Dashboard shows it. */
export function toChainTransferResponse(t: ChainTransfer) {
  return { id: t.id, kind: t.kind, invoice_id: t.invoiceId, ...toTransactionResponse(t), recorded_at: iso(t.recordedAt) };
}
