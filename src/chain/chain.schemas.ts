/** The recorded on-chain transfers as the Dashboard shows them (late payments, unmatched transfers). */
import { z } from '@hono/zod-openapi';
import { DateTime } from '../http/openapi.js';
import { formatAmount } from '../lib/amounts.js';
import { iso } from '../lib/clock.js';
import { USDT_CONTRACT } from '../lib/tron.js';
import type { ChainTransfer } from './chain.model.js';

export const ChainTransferSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['confirmed', 'review_paid', 'late', 'unmatched']).openapi({
      description: 'late: a reserved amount paid outside its invoice window; unmatched: an amount no invoice of this address holds',
    }),
    invoice_id: z.string().nullable(),
    tx_hash: z.string(),
    log_index: z.number().int(),
    from: z.string(),
    to: z.string(),
    amount: z.string(),
    token_contract: z.string(),
    block_number: z.number().int(),
    block_timestamp: DateTime,
    recorded_at: DateTime,
  })
  .openapi('ChainTransfer');

/** The `transaction` object of invoice events and of the console views (docs/api.md, Webhooks: receiving events). */
export function toTransactionResponse(t: Pick<ChainTransfer, 'txHash' | 'logIndex' | 'from' | 'to' | 'amount' | 'blockNumber' | 'blockTimestamp'>) {
  return {
    tx_hash: t.txHash,
    log_index: t.logIndex,
    from: t.from,
    to: t.to,
    amount: formatAmount(t.amount),
    token_contract: USDT_CONTRACT,
    block_number: t.blockNumber,
    block_timestamp: iso(t.blockTimestamp),
  };
}

/** A recorded transfer as the Dashboard shows it. */
export function toChainTransferResponse(t: ChainTransfer) {
  return { id: t.id, kind: t.kind, invoice_id: t.invoiceId, ...toTransactionResponse(t), recorded_at: iso(t.recordedAt) };
}
