/** The recorded on-chain transfers as the Dashboard shows them (late payments, unmatched transfers). */
import { z } from '@hono/zod-openapi';
import { DateTime } from '../http/openapi.js';

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
