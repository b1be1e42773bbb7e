/** The Invoice resources and their requests (docs/api.md, Invoices; amounts in docs/payments.md). */
import { z } from '@hono/zod-openapi';
import { DateTime, INSTANCE_MARK } from '../http/openapi.js';
import { formatAmount, parseAmount } from '../lib/amounts.js';
import { NETWORK_IDS, type NetworkId, type TokenSymbol } from '../chains/networks.js';
import { iso, isoOrNull } from '../lib/clock.js';
import { NETWORK_IDS as CHAIN_NETWORK_IDS, type NetworkId as ChainNetworkId } from '../chains/networks.js';
import { checkoutUrl, type Invoice, type InvoiceOption, type PaymentSeen } from './invoice.model.js';
import type { InvoicePrice } from '../pricing/pricing.service.js';
import { markupPercentSchema } from '../pricing/pricing.schemas.js';
import { USDT } from '../pricing/currencies.js';
import { canonicalUri, uriPattern, type UriRule } from '../lib/uri.js';
import {
  InvoiceOptionSchema,
  invoiceOptions,
  MONEY,
  createInvoiceOptionRules,
  optionIssues,
  optionRequestFields,
  requestedChoices,
  TOKEN_SYMBOLS,
  toOptionResponse,
  type OptionChoice,
} from './invoice-options.schemas.js';

export const AMOUNT_PATTERN = '^(0|[1-9][0-9]{0,9})(\\.[0-9]{1,6})?$';
/**
 * The same rule with its bounds, for the document: 0.000001 to 1000000000 with at most six
 * fractional digits. The server checks the shape and the bounds apart, to name which one failed.
 */
export const BOUNDED_AMOUNT_PATTERN =
  '^([1-9][0-9]{0,8}(\\.[0-9]{1,6})?|0\\.([1-9][0-9]{0,5}|0[1-9][0-9]{0,4}|00[1-9][0-9]{0,3}|000[1-9][0-9]{0,2}|0000[1-9][0-9]?|00000[1-9])|1000000000(\\.0{1,6})?)$';
/** A return URL: https, a host name (and port), a fragment allowed; docs/api.md, URLs. */
export const RETURN_URL_RULE: UriRule = { http: false, host: 'name', fragment: true };
export const RETURN_URL_PATTERN = uriPattern(RETURN_URL_RULE);
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
export const INVOICE_ID_EXAMPLE = 'inv_Nw1Xk8cYq0pJv3sTzR5aLg';
export const STATUSES = ['pending', 'confirmed', 'expired', 'review'] as const;
export const InvoiceStatusSchema = z.enum(STATUSES).openapi({
  description:
    'pending: awaiting payment; confirmed: paid; expired: unpaid at expiry, rejected after review, or cancelled; review: the amount was reused, the owner decides',
  example: 'pending',
});
export const REDIRECT_URL_MAX = 2048;
export const DEFAULT_EXPIRES_IN_MINUTES = 20;

export const PriceSchema = z
  .object({
    amount: z.string().openapi({ description: "The price in its currency, with the currency's own decimals (JPY none)", example: '100.00' }),
    currency: z.string().openapi({ description: 'ISO 4217 code', example: 'CNY' }),
    rate: z.string().openapi({ description: 'Units of the currency per 1 USDT: the median of the fresh rates, exact', example: '7.115' }),
    markup_percent: z.string().openapi({ description: 'The markup added before rounding up to pricing.round_to', example: '0' }),
    sources: z.array(z.string()).openapi({ description: 'The rate sources whose rates made the median', example: ['coinbase', 'coingecko'] }),
    rate_at: DateTime.openapi({ description: 'When the oldest rate used was read', example: '2026-01-01T10:42:05.000Z' }),
  })
  .openapi('Price', { description: 'The fiat price the invoice was created from, fixed at creation' });

function toPriceResponse(price: InvoicePrice | null) {
  if (price === null) return null;
  return {
    amount: price.amount,
    currency: price.currency,
    rate: price.rate,
    markup_percent: price.markupPercent,
    sources: [...price.sources],
    rate_at: iso(price.rateAt),
  };
}

const invoiceCommon = {
  id: z.string().openapi({ example: INVOICE_ID_EXAMPLE }),
  base_amount: MONEY.openapi({ description: 'The price asked', example: '25.000000' }),
  adjustment: MONEY.openapi({ description: 'Identification adjustment, paid to the merchant', example: '0.000137' }),
  payable_amount: MONEY.openapi({
    description: "The exact amount the payer must send: option 0's until the invoice is paid, then the paying option's",
    example: '25.000137',
  }),
  wallet_address: z.string().openapi({
    description: "The receiving address (base58 on TRON, EIP-55 on EVM networks): option 0's until the invoice is paid, then the paying option's",
    example: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
  }),
  status: InvoiceStatusSchema,
  created_at: DateTime,
  expires_at: DateTime.openapi({ description: 'End of the payment window (the cancel time for a cancelled invoice)', example: '2026-01-01T00:20:00.000Z' }),
  reserved_until: DateTime.openapi({ description: 'End of the 90-day amount reservation', example: '2026-04-01T00:00:00.000Z' }),
  description: z.string().optional().openapi({ example: 'Order 1042: 2 t-shirts' }),
  tx_hash: z.string().nullable().openapi({
    description: 'Hash of the transaction that paid it, 64 hex characters',
    example: 'c5d1a3f0e8b94c7d2a6f1e0b3c9d8a7f6e5d4c3b2a1908f7e6d5c4b3a2918070',
  }),
  mode: z.literal('live'),
  network: z.enum(NETWORK_IDS).openapi({
    description: "The network the invoice asks to be paid on (option 0's) until it is paid, then the paying option's",
    example: 'tron-mainnet',
  }),
  token: z.enum(TOKEN_SYMBOLS).openapi({ description: "The token asked (option 0's) until paid, then the paying option's", example: 'USDT' }),
  token_contract: z.string().openapi({
    description: "That token's pinned contract on that network (base58 on TRON, EIP-55 on EVM networks)",
    example: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  }),
  options: z.array(InvoiceOptionSchema).openapi({
    description:
      "Every network and token the payer may use, option 0 first (the invoice's own `network`, `token`, `wallet_address` and `payable_amount` while unpaid); " +
      'one entry for an invoice created without `options`. Once an option paid, it is `paid` and the others `released`',
  }),
  amount_reuse_review: z.boolean().openapi({ description: 'Created in review because the amount was reused after 90 days', example: false }),
  price: PriceSchema.nullable().openapi({ description: 'The fiat price the invoice was created from; null when priced in USDT' }),
  amount_received: z.string().openapi({
    pattern: '^[0-9]+\\.[0-9]{6}$',
    description:
      "Received so far, six decimals, in the invoice's token (a late payment on another option in that option's): every verified transfer recorded against the invoice (the one that paid it, partial and late payments) " +
      'and a transfer applied to it by hand. "0.000000" until something arrives; below payable_amount on a pending invoice after a partial payment',
    example: '24.000137',
  }),
  resolution: z
    .enum(['manual', 'tolerance'])
    .nullable()
    .openapi({
      description:
        'How a confirmed invoice was settled when not by a transfer of its exact amount: `manual` (the owner applied a transfer by hand), ' +
        "`tolerance` (a partial payment within the merchant's underpayment_tolerance, accepted automatically); null otherwise",
      example: null,
    }),
};

/** The invoice's `payment_seen`: the transfer that will pay it once its block is final. */
export const PaymentSeenSchema = z
  .object({
    network: z.enum(CHAIN_NETWORK_IDS).openapi({ example: 'ethereum-mainnet' }),
    tx_hash: z.string().openapi({ example: '0x5e1f3c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f' }),
    block_number: z.number().int().openapi({ example: 21500000 }),
    seen_at: DateTime.openapi({ description: 'When the gateway saw it in a block not final yet' }),
    expected_final_at: DateTime.openapi({ description: "About when its block will be final by the network's rule (the invoice confirms then)" }),
  })
  .openapi('PaymentSeen');

export const InvoiceSchema = z
  .object({
    ...invoiceCommon,
    confirmed_at: DateTime.nullable().openapi({ example: '2026-01-01T00:04:12.000Z' }),
    checkout_url: z
      .string()
      .openapi({ format: 'uri', description: 'Confidential payment link', example: 'https://pay.shop.example/pay/q3Vb7Yk2mN8xP0rT5wZ1aC4dF6gH9jL2' }),
    checkout_token: z.string().openapi({ description: 'Capability token of the checkout link', example: 'q3Vb7Yk2mN8xP0rT5wZ1aC4dF6gH9jL2' }),
    merchant_order_id: z.string().openapi({ example: 'order-1042' }),
    wallet_id: z.string().openapi({ example: 'wal_Qm4Zr8Tn2Vb6Xc0Lk5Jh1g' }),
    metadata: z.record(z.string(), z.unknown()).openapi({ example: { customer_ref: 'c-88' } }),
    redirect_url: z.string().nullable().openapi({
      format: 'uri',
      description: 'Where the checkout offers to send the payer once the invoice is confirmed or expired',
      example: 'https://shop.example/orders/1042',
    }),
    cancelled_at: DateTime.nullable().openapi({ description: 'When the merchant cancelled the invoice (status expired)', example: null }),
    received_amount: z
      .string()
      .nullable()
      .openapi({
        pattern: '^[0-9]+\\.[0-9]{6}$',
        deprecated: true,
        description:
          'Deprecated: use `amount_received`, its replacement (the running sum of what arrived, "0.000000" rather than null before anything did). ' +
          'Sent unchanged for the rest of API version 0.x and removed in 1.0.0, not before 2027-07-01 (docs/api.md, Deprecations). ' +
          "USDT actually received: payable_amount when a matching transfer paid the invoice, the transfer's own amount when the owner applied a payment by hand (POST /invoices/{id}/resolve); null while unpaid",
        example: '25.000137',
      }),
    payment_seen: PaymentSeenSchema.nullable().openapi({
      description:
        'A transfer of the payable amount seen in a block the network does not call final yet (invoice.payment_seen): the invoice stays pending until ' +
        'it is final, then confirms; null when none waits (before one is seen, once it is final, or when its block left the chain: invoice.payment_dropped)',
    }),
  })
  .openapi('Invoice');

export const CheckoutInvoiceSchema = z.object({ ...invoiceCommon, merchant_name: z.string().openapi({ example: 'Example Shop' }) }).openapi('CheckoutInvoice');

export const InvoiceEnvelopeSchema = z
  .object({
    invoice: InvoiceSchema,
    idempotent_replay: z.boolean().openapi({ description: 'true when this answer replays an earlier request with the same Idempotency-Key' }),
  })
  .openapi('InvoiceEnvelope');

export const InvoiceListSchema = z
  .object({
    invoices: z.array(InvoiceSchema).openapi({ description: 'Newest first' }),
    has_more: z.boolean().openapi({
      description: 'More invoices lie beyond this page: older ones, or newer ones when paging with ending_before',
      example: true,
    }),
  })
  .openapi('InvoiceList');

/** The superRefine of CreateInvoiceSchema, for the document: markup_percent only with a fiat currency (a JSON Schema 2020-12 keyword zod's types lack). */
const MARKUP_NEEDS_FIAT = {
  dependentSchemas: { markup_percent: { required: ['currency'], properties: { currency: { not: { const: USDT } } } } },
} as unknown as Record<string, never>;

export const CreateInvoiceSchema = z
  .strictObject({
    merchant_order_id: z.string().min(1).max(120).openapi({ description: 'Your order reference; unique per merchant', example: 'order-1042' }),
    amount: z
      .string()
      .regex(new RegExp(AMOUNT_PATTERN), 'expected a decimal string with at most 6 fractional digits, e.g. "12.5"')
      .refine((v) => {
        const micro = parseAmount(v);
        return micro === undefined || (micro >= 1n && micro <= MAX_INVOICE_AMOUNT);
      }, 'the amount must be between 0.000001 and 1000000000')
      .openapi({
        pattern: BOUNDED_AMOUNT_PATTERN,
        example: '25.00',
        description:
          'The price in `currency`: in USDT (the default) 0.000001 to 1000000000; in a fiat currency greater than 0 with at most its own decimals (JPY none, most 2; ' +
          'the document says which with one `if`/`then` per number of decimals), and at most 1000000000 USDT at the current rate. ' +
          'Every option asks this base amount in its own token, USDT or USDC alike (one to one), plus its own adjustment',
      }),
    currency: z
      .string()
      .regex(/^([A-Z]{3}|USDT)$/, 'expected USDT or an ISO 4217 code in upper case, e.g. "EUR"')
      .optional()
      .openapi({
        // The enum is this instance's: USDT and its pricing.currencies (src/openapi-instance.ts).
        [INSTANCE_MARK]: 'price_currency',
        description:
          "USDT (the default), or an ISO 4217 code from pricing.currencies (the enum is this instance's; another is 400 `validation_error` naming them): " +
          'the amount is converted at the current rate (503 `rate_unavailable` when there is no honest one)',
        example: 'CNY',
      }),
    markup_percent: markupPercentSchema("Fiat prices only: the markup in percent, 0 to 20; the merchant's markup_percent when absent").optional(),
    wallet_id: z.string().min(1).max(100).openapi({
      description:
        'One of your wallets (GET /wallets): it receives every option on a network it receives on; an option on another network is received by your newest wallet there',
      example: 'wal_Qm4Zr8Tn2Vb6Xc0Lk5Jh1g',
    }),
    ...optionRequestFields,
    description: z.string().min(1).max(1000).optional().openapi({ description: 'Shown to the payer', example: 'Order 1042: 2 t-shirts' }),
    metadata: z
      .record(z.string(), z.unknown())
      .superRefine((m, ctx) => {
        if (!nestsAtMost(m, METADATA_MAX_DEPTH)) ctx.addIssue({ code: 'custom', message: `metadata must nest at most ${METADATA_MAX_DEPTH} levels deep` });
        else if (Buffer.byteLength(JSON.stringify(m), 'utf8') > METADATA_MAX_BYTES)
          ctx.addIssue({ code: 'custom', message: `metadata must be at most ${METADATA_MAX_BYTES} bytes serialized` });
      })
      .optional()
      .openapi({
        description: `At most 16 KiB serialized (UTF-8 JSON) and ${METADATA_MAX_DEPTH} levels deep; never customer secrets`,
        example: { customer_ref: 'c-88' },
      }),
    // Optional without a zod default: generated clients would otherwise make the field required.
    expires_in_minutes: z
      .number()
      .int()
      .min(1)
      .max(1440)
      .optional()
      .openapi({ description: `Length of the payment window; ${DEFAULT_EXPIRES_IN_MINUTES} when absent`, example: 30 }),
    redirect_url: z
      .string()
      .max(REDIRECT_URL_MAX)
      .refine(
        (v) => canonicalUri(v, RETURN_URL_RULE) !== undefined,
        'expected an absolute https:// URL with a host name, no user name or password, and only the characters RFC 3986 allows (percent-encode the rest)',
      )
      .optional()
      .openapi({
        pattern: RETURN_URL_PATTERN,
        format: 'uri',
        description:
          `https URL (at most ${REDIRECT_URL_MAX} characters) the checkout offers as "Return to {merchant}" once the invoice is confirmed or expired. ` +
          'Only characters RFC 3986 allows as they are (percent-encode the rest); stored and answered in its WHATWG serialisation (lower-case host, no default port), which may differ from the text sent',
        example: 'https://shop.example/orders/1042',
      }),
  })
  .superRefine((body, ctx) => {
    if (body.markup_percent !== undefined && (body.currency ?? USDT) === USDT) {
      ctx.addIssue({ code: 'custom', path: ['markup_percent'], message: 'a markup applies to prices in a fiat currency only' });
    }
    for (const issue of optionIssues(body)) ctx.addIssue({ code: 'custom', ...issue });
  })
  .openapi('CreateInvoice', {
    ...MARKUP_NEEDS_FIAT,
    // A token its network has, and network and token equal to options[0]'s when both are given.
    allOf: createInvoiceOptionRules(),
    // Each currency's own decimals (JPY none), for this instance's currencies (src/openapi-instance.ts).
    [INSTANCE_MARK]: 'price_decimals',
  });

/**
 * The validated body with its defaults applied (the fingerprint of a replay is taken from this):
 * the networks and tokens asked are `options` (tokens filled in), or, when no network is named,
 * at most `token` (on the wallet's first network).
 */
export type CreateInvoiceBody = Omit<z.infer<typeof CreateInvoiceSchema>, 'network' | 'options'> & {
  expires_in_minutes: number;
  options?: OptionChoice[];
  token?: TokenSymbol;
};

/**
 * Defaults applied; `currency: "USDT"` is dropped, so it fingerprints like an absent currency (and
 * like every invoice created before fiat prices existed). A body naming no network and no token
 * keeps no such field, so it fingerprints like every invoice created before there were several.
 */
export function withInvoiceDefaults(body: z.infer<typeof CreateInvoiceSchema>): CreateInvoiceBody {
  const { currency, network: _network, token, options: _options, ...rest } = body;
  const choices = requestedChoices(body);
  return {
    ...rest,
    ...(currency !== undefined && currency !== USDT ? { currency } : {}),
    ...(choices !== undefined ? { options: choices } : token !== undefined ? { token } : {}),
    expires_in_minutes: body.expires_in_minutes ?? DEFAULT_EXPIRES_IN_MINUTES,
  };
}

export const IdempotencyHeaderSchema = z.object({
  'idempotency-key': z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? 'The Idempotency-Key header is required: send one unique key per invoice (e.g. a UUID) and the same key when you retry'
          : undefined,
    })
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7E]+$/, 'expected 1 to 255 printable ASCII characters')
    .openapi({ param: { name: 'idempotency-key', in: 'header' }, description: 'One unique key per invoice attempt, reused on retries' }),
});

export const InvoiceIdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path', description: 'The invoice id' }, example: INVOICE_ID_EXAMPLE }),
});

export const ReviewDecisionSchema = z
  .strictObject({ decision: z.enum(['accept', 'reject']).openapi({ description: 'accept: confirmed; reject: expired', example: 'accept' }) })
  .openapi('ReviewDecision');

export const ResolveInvoiceSchema = z
  .strictObject({
    tx_hash: z
      .string()
      .regex(/^(0x)?[0-9a-f]{64}$/, 'expected 64 lower-case hex characters (TRON), or 0x and 64 (EVM)')
      .openapi({
        description:
          'The verified unmatched or late transfer to apply: its transaction hash as the transfer list shows it (64 hex digits on TRON, 0x and 64 on the EVM networks)',
        example: 'c5d1a3f0e8b94c7d2a6f1e0b3c9d8a7f6e5d4c3b2a1908f7e6d5c4b3a2918070',
      }),
    log_index: z.number().int().min(0).max(100_000).openapi({ description: 'Its Transfer log within the transaction', example: 0 }),
  })
  .openapi('ResolveInvoice');

/** Fields shared by the merchant's and the payer's view. */
function commonFields(inv: Invoice, label?: string) {
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
    network: inv.network as NetworkId,
    token: inv.token as TokenSymbol,
    token_contract: inv.tokenContract,
    options: invoiceOptions(inv).map((o) => toOptionResponse(o, inv.id, label)),
    amount_reuse_review: inv.amountReuseReview,
    price: toPriceResponse(inv.price),
    amount_received: formatAmount(inv.amountReceived),
    resolution: inv.resolution,
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
    redirect_url: inv.redirectUrl,
    cancelled_at: isoOrNull(inv.cancelledAt),
    received_amount: inv.receivedAmount === null ? null : formatAmount(inv.receivedAmount),
    payment_seen: inv.paymentSeen ? toPaymentSeenResponse(inv.paymentSeen) : null,
  };
}

export function toPaymentSeenResponse(s: PaymentSeen) {
  return {
    network: s.network as ChainNetworkId,
    tx_hash: s.txHash,
    block_number: s.blockNumber,
    seen_at: iso(s.seenAt),
    expected_final_at: iso(s.expectedFinalAt),
  };
}

export type InvoiceResponse = ReturnType<typeof toInvoiceResponse>;

/** The CheckoutInvoice resource (payer-safe: no order id, wallet id, metadata or checkout link). */
export function toCheckoutInvoiceResponse(inv: Invoice, merchantName: string) {
  return { ...commonFields(inv, merchantName), merchant_name: merchantName };
}

/**
 * `data` of an event a transfer causes: the invoice, the transfer and, on an invoice with several
 * options, the option the transfer paid (`through`; undefined: the one the invoice row holds), so
 * the event says on which network and token the money came.
 */
export function paymentEventData(inv: Invoice, publicUrl: string, transaction: Record<string, unknown>, through: InvoiceOption | undefined) {
  const invoice = toInvoiceResponse(inv, publicUrl);
  if (inv.options.length === 0) return { invoice, transaction };
  const all = invoiceOptions(inv);
  const paid = through?.position ?? inv.options.find((o) => o.status === 'paid')?.position ?? 0;
  const option = all.find((o) => o.position === paid) ?? all[0]!;
  return { invoice, transaction, option: toOptionResponse(option, inv.id) };
}
