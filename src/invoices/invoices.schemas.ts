/** The Invoice resources and their requests (docs/api.md, Invoices; amounts in docs/payments.md). */
import { z } from '@hono/zod-openapi';
import { DateTime } from '../http/openapi.js';
import { formatAmount, parseAmount } from '../lib/amounts.js';
import { iso, isoOrNull } from '../lib/clock.js';
import { checkoutUrl, type Invoice } from './invoice.model.js';

export const AMOUNT_PATTERN = '^(0|[1-9][0-9]{0,9})(\\.[0-9]{1,6})?$';
export const MAX_INVOICE_AMOUNT = 1_000_000_000_000_000n; // 1 000 000 000 USDT in micro-units
export const METADATA_MAX_BYTES = 16 * 1024;
/**
 * Nesting levels metadata may use (the object itself is level 1). 16 KiB of brackets nest thousands
 * deep, and every JSON.stringify that later handles it (this size check, storage, responses,
 * webhooks) would overflow the stack: such a body was a 500.
 */
export const METADATA_MAX_DEPTH = 32;

/** Iterative, so the check itself cannot overflow the stack. */
function nestsAtMost(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return false;
    for (const child of Object.values(v)) pending.push([child, depth + 1]);
  }
  return true;
}
const MONEY = z.string().regex(/^[0-9]+\.[0-9]{6}$/).openapi({ example: '12.500001' });

const invoiceCommon = {
  id: z.string(),
  base_amount: MONEY,
  adjustment: MONEY.openapi({ description: 'Identification adjustment, paid to the merchant' }),
  payable_amount: MONEY.openapi({ description: 'The exact amount the payer must send' }),
  wallet_address: z.string(),
  status: z.enum(['pending', 'confirmed', 'expired', 'review']),
  created_at: DateTime.optional(),
  expires_at: DateTime.optional(),
  reserved_until: DateTime.optional().openapi({ description: 'End of the 90-day amount reservation' }),
  description: z.string().optional(),
  tx_hash: z.string().nullable().optional().openapi({ description: 'Hash of the matched USDT transfer, 64 hex characters' }),
  mode: z.literal('live'),
  network: z.literal('tron-mainnet').optional(),
  token: z.literal('USDT').optional(),
  token_contract: z.string().optional().openapi({ description: 'The USDT TRC20 contract of the network' }),
  amount_reuse_review: z.boolean().optional(),
};

export const InvoiceSchema = z
  .object({
    ...invoiceCommon,
    confirmed_at: DateTime.nullable().optional(),
    checkout_url: z.string().openapi({ format: 'uri', description: 'Confidential payment link' }).optional(),
    checkout_token: z.string().optional().openapi({ description: 'Capability token of the checkout link' }),
    merchant_order_id: z.string(),
    wallet_id: z.string(),
    metadata: z.record(z.string(), z.unknown()),
  })
  .openapi('Invoice');

export const CheckoutInvoiceSchema = z
  .object({ ...invoiceCommon, merchant_name: z.string() })
  .openapi('CheckoutInvoice');

export const InvoiceEnvelopeSchema = z
  .object({ invoice: InvoiceSchema, idempotent_replay: z.boolean().optional() })
  .openapi('InvoiceEnvelope');

export const InvoiceListSchema = z.object({ invoices: z.array(InvoiceSchema) }).openapi('InvoiceList');

export const CreateInvoiceSchema = z
  .strictObject({
    merchant_order_id: z.string().min(1).max(120),
    amount: z
      .string()
      .regex(new RegExp(AMOUNT_PATTERN), 'expected a decimal string with at most 6 fractional digits, e.g. "12.5"')
      .refine((v) => {
        const micro = parseAmount(v);
        return micro === undefined || (micro >= 1n && micro <= MAX_INVOICE_AMOUNT);
      }, 'the amount must be between 0.000001 and 1000000000')
      .openapi({ pattern: AMOUNT_PATTERN, example: '25.00', description: 'Base price in USDT, 0.000001 to 1000000000' }),
    wallet_id: z.string().min(1).max(100),
    description: z.string().min(1).max(1000).optional(),
    metadata: z
      .record(z.string(), z.unknown())
      .superRefine((m, ctx) => {
        if (!nestsAtMost(m, METADATA_MAX_DEPTH)) ctx.addIssue({ code: 'custom', message: `metadata must nest at most ${METADATA_MAX_DEPTH} levels deep` });
        else if (Buffer.byteLength(JSON.stringify(m), 'utf8') > METADATA_MAX_BYTES)
          ctx.addIssue({ code: 'custom', message: `metadata must be at most ${METADATA_MAX_BYTES} bytes serialized` });
      })
      .optional()
      .openapi({ description: `At most 16 KiB serialized (UTF-8 JSON) and ${METADATA_MAX_DEPTH} levels deep; never customer secrets` }),
    expires_in_minutes: z.number().int().min(1).max(1440).default(20),
  })
  .openapi('CreateInvoice');

export type CreateInvoiceBody = z.infer<typeof CreateInvoiceSchema>;

export const IdempotencyHeaderSchema = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7E]+$/, 'expected 1 to 255 printable ASCII characters')
    .openapi({ param: { name: 'idempotency-key', in: 'header' }, description: 'One unique key per invoice attempt, reused on retries' }),
});

export const InvoiceIdParamSchema = z.object({ id: z.string().min(1).max(100).openapi({ param: { name: 'id', in: 'path' } }) });

export const ReviewDecisionSchema = z.strictObject({ decision: z.enum(['accept', 'reject']) }).openapi('ReviewDecision');

/** Fields shared by the merchant's and the payer's view. */
function commonFields(inv: Invoice) {
  return {
    id: inv.id,
    base_amount: formatAmount(inv.baseAmount),
    adjustment: formatAmount(inv.adjustment),
    payable_amount: formatAmount(inv.payableAmount),
    wallet_address: inv.walletAddress,
    status: inv.status,
    created_at: iso(inv.createdAt),
    expires_at: iso(inv.expiresAt),
    reserved_until: iso(inv.reservedUntil),
    ...(inv.description !== null ? { description: inv.description } : {}),
    tx_hash: inv.txHash,
    mode: 'live' as const,
    network: inv.network as 'tron-mainnet',
    token: inv.token as 'USDT',
    token_contract: inv.tokenContract,
    amount_reuse_review: inv.amountReuseReview,
  };
}

/** The Invoice resource (merchant view). */
export function toInvoiceResponse(inv: Invoice, publicUrl: string) {
  return {
    ...commonFields(inv),
    confirmed_at: isoOrNull(inv.confirmedAt),
    checkout_url: checkoutUrl(publicUrl, inv.checkoutToken),
    checkout_token: inv.checkoutToken,
    merchant_order_id: inv.merchantOrderId,
    wallet_id: inv.walletId,
    metadata: inv.metadata,
  };
}

export type InvoiceResponse = ReturnType<typeof toInvoiceResponse>;

/** The CheckoutInvoice resource (payer-safe: no order id, wallet id, metadata or checkout link). */
export function toCheckoutInvoiceResponse(inv: Invoice, merchantName: string) {
  return { ...commonFields(inv), merchant_name: merchantName };
}
