/** The Transfer resource of GET /transfers: a wrong payment (unmatched, late or dust) as one merchant sees it. */
import { z } from '@hono/zod-openapi';
import { TransactionSchema, toTransactionResponse, UnmatchedReasonSchema } from '../payments/transfer.schemas.js';
import type { ChainTransfer } from '../payments/transfer.model.js';
import { DateTime } from '../http/openapi.js';
import { iso } from '../lib/clock.js';
import { TRANSFER_KINDS, type AppliedTransfer, type TransferKind } from '../dashboard/transfers.repo.js';

export const TRANSFER_ID_EXAMPLE = 'trf_Hq3Lm7Nx2Vb8Kc4Zr0Tj6w';

export const TransferKindSchema = z.enum(TRANSFER_KINDS).openapi({
  description:
    '`unmatched`: an amount that paid no invoice (a partial payment of an invoice too, with its `invoice_id`); `late`: the exact amount of an ' +
    'invoice that arrived after its window or after it was settled; `dust`: an unmatched transfer below `tron.dust_threshold` (mostly address poisoning)',
  example: 'unmatched',
});

export const TransferApplicationSchema = z
  .object({
    by_you: z.boolean().openapi({ description: 'You applied it; otherwise another merchant of this shared address did', example: true }),
    merchant_name: z.string().openapi({ description: 'The display name of the merchant who applied it', example: 'Example Shop' }),
    invoice_id: z
      .string()
      .nullable()
      .openapi({ description: 'Your invoice it paid; null when another merchant applied it', example: 'inv_Jd8Kq2Lw5Rt0Yx3Bn6Cv9m' }),
    applied_at: DateTime,
    contested_by: z
      .array(z.string())
      .openapi({ description: 'Display names of the other merchants of the address who contest it (POST /transfers/{id}/contest)', example: [] }),
  })
  .openapi('TransferApplication');

export const TransferSchema = z
  .object({
    id: z.string().openapi({ example: TRANSFER_ID_EXAMPLE }),
    kind: TransferKindSchema,
    invoice_id: z.string().nullable().openapi({
      description: 'The invoice it relates to when known: the invoice of a late or partial payment, or your invoice it was applied to by hand',
      example: null,
    }),
    ...TransactionSchema.shape,
    reason: UnmatchedReasonSchema,
    created_at: DateTime.openapi({ description: 'When the gateway recorded it (the list order and the created_gte / created_lt filters)' }),
    applied: TransferApplicationSchema.nullable().openapi({ description: 'Applied by hand to an invoice (POST /invoices/{id}/resolve); null otherwise' }),
  })
  .openapi('Transfer');

export const TransferListSchema = z
  .object({
    transfers: z.array(TransferSchema).openapi({ description: 'Newest recorded first' }),
    has_more: z
      .boolean()
      .openapi({ description: 'More transfers lie beyond this page: older ones, or newer ones when paging with ending_before', example: false }),
  })
  .openapi('TransferList');

export const TransferEnvelopeSchema = z.object({ transfer: TransferSchema }).openapi('TransferEnvelope');

export const TransferIdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path', description: 'The transfer id' }, example: TRANSFER_ID_EXAMPLE }),
});

export function toTransferResponse(
  t: ChainTransfer,
  kind: TransferKind,
  merchantId: string,
  applied: AppliedTransfer | undefined,
): z.infer<typeof TransferSchema> {
  const mine = applied?.merchantId === merchantId;
  return {
    id: t.id,
    kind,
    invoice_id: t.invoiceId ?? (mine ? applied!.invoiceId : null),
    ...toTransactionResponse(t),
    reason: t.kind === 'unmatched' ? t.reason : null,
    created_at: iso(t.recordedAt),
    applied: applied
      ? {
          by_you: mine,
          merchant_name: applied.merchantName,
          invoice_id: mine ? applied.invoiceId : null,
          applied_at: iso(applied.resolvedAt),
          contested_by: applied.contests.map((c) => c.merchantName),
        }
      : null,
  };
}
