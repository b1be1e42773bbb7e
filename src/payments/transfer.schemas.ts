/**
 * A recorded on-chain transfer as the API shows it: the `transaction` object of invoice events, and
 * the transfers of the Dashboard (late payments, unmatched transfers).
 */
import { z } from '@hono/zod-openapi';
import { NETWORK_IDS } from '../chains/networks.js';
import { DateTime } from '../http/openapi.js';
import { formatAmount } from '../lib/amounts.js';
import { iso } from '../lib/clock.js';
import type { ChainTransfer } from './transfer.model.js';

export const UNMATCHED_REASONS = ['inexact_amount', 'wrong_network', 'other_token', 'no_invoice'] as const;

export const UnmatchedReasonSchema = z
  .enum(UNMATCHED_REASONS)
  .nullable()
  .openapi({
    description:
      'Why an unmatched transfer paid no invoice (null for any other kind, for a partial payment of an invoice, and for transfers recorded before gatewayd knew): ' +
      '`inexact_amount`: a value with digits below the sixth decimal (possible on an 18-decimal token), which never matches a payable amount; ' +
      '`wrong_network`: an open invoice of this address and amount waits on another network; `other_token`: one waits for the other token on this network; ' +
      '`no_invoice`: no open invoice of this address has this amount',
    example: 'no_invoice',
  });

/** The USDT or USDC transfer that paid an invoice (data.transaction of invoice.confirmed and of a paid invoice.review). */
export const TransactionSchema = z
  .object({
    network: z.enum(NETWORK_IDS).openapi({ description: 'The network the transfer was made on', example: 'tron-mainnet' }),
    token: z.enum(['USDT', 'USDC']).openapi({ example: 'USDT' }),
    tx_hash: z.string().openapi({ example: 'c5d1a3f0e8b94c7d2a6f1e0b3c9d8a7f6e5d4c3b2a1908f7e6d5c4b3a2918070' }),
    log_index: z.number().int().openapi({ example: 0 }),
    from: z
      .string()
      .openapi({ description: "The payer address (the network's own form: base58 on TRON, EIP-55 on EVM)", example: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL' }),
    to: z.string().openapi({ description: 'The receiving address', example: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' }),
    amount: z.string().openapi({
      description: 'The transferred amount, six decimals (for a value with digits below the sixth decimal: those six decimals, `raw_amount` has the rest)',
      example: '25.000137',
    }),
    raw_amount: z.string().openapi({
      description: "The on-chain integer value as a decimal string (the amount x 10^decimals of the token: 6 decimals, 18 on BNB Smart Chain's)",
      example: '25000137',
    }),
    token_contract: z.string().openapi({ example: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }),
    block_number: z.number().int().openapi({ example: 68123456 }),
    block_timestamp: DateTime.openapi({ example: '2026-01-01T00:04:09.000Z' }),
  })
  .openapi('Transaction');

export const ChainTransferSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['confirmed', 'review_paid', 'late', 'unmatched']).openapi({
      description: 'late: a reserved amount paid outside its invoice window; unmatched: an amount no invoice of this address holds',
    }),
    invoice_id: z.string().nullable(),
    ...TransactionSchema.shape,
    reason: UnmatchedReasonSchema,
    recorded_at: DateTime,
  })
  .openapi('ChainTransfer');

/** What toTransactionResponse needs of a transfer, recorded or about to be. */
export type TransactionFields = Pick<
  ChainTransfer,
  'network' | 'token' | 'txHash' | 'logIndex' | 'from' | 'to' | 'amount' | 'rawAmount' | 'tokenContract' | 'blockNumber' | 'blockTimestamp'
>;

/** The `transaction` object of invoice events and of the console views (docs/api.md, Webhooks: receiving events). */
export function toTransactionResponse(t: TransactionFields) {
  return {
    network: t.network,
    token: t.token,
    tx_hash: t.txHash,
    log_index: t.logIndex,
    from: t.from,
    to: t.to,
    amount: formatAmount(t.amount),
    raw_amount: t.rawAmount.toString(),
    token_contract: t.tokenContract,
    block_number: t.blockNumber,
    block_timestamp: iso(t.blockTimestamp),
  };
}

/** A recorded transfer as the Dashboard shows it. */
export function toChainTransferResponse(t: ChainTransfer) {
  return { id: t.id, kind: t.kind, invoice_id: t.invoiceId, ...toTransactionResponse(t), reason: t.reason, recorded_at: iso(t.recordedAt) };
}
