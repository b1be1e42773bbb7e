/**
 * The Event resource: one schema for the API (GET /events), the Dashboard and the webhook body, with
 * `data` typed per event type (the OpenAPI document's `webhooks` section names each one).
 */
import { z } from '@hono/zod-openapi';
import { TransactionSchema } from '../payments/transfer.schemas.js';
import { NETWORK_IDS } from '../chains/networks.js';
import { DateTime, Mode } from '../http/openapi.js';
import { iso } from '../lib/clock.js';
import { InvoiceSchema } from '../invoices/invoices.schemas.js';
import { InvoiceOptionSchema } from '../invoices/invoice-options.schemas.js';
import { TransferSchema } from '../transfers/transfers.schemas.js';
import { EVENT_TYPES, type EventType, type StoredEvent } from './events.repo.js';

export const EVENT_ID_EXAMPLE = 'evt_Jd8Kq2Lw5Rt0Yx3Bn6Cv9m';

export const InvoiceEventDataSchema = z
  .object({
    invoice: InvoiceSchema.openapi({ description: 'The invoice as it stood when the event happened' }),
    transaction: TransactionSchema.optional().openapi({
      description:
        'invoice.confirmed and a paid invoice.review: the transfer that paid it; invoice.partially_paid and invoice.late_payment: the transfer recorded against it',
    }),
    option: InvoiceOptionSchema.optional().openapi({
      description:
        'invoice.confirmed, a paid invoice.review, invoice.partially_paid and invoice.late_payment of an invoice with several options: ' +
        'the option the transfer paid (its network, token, address and amount; `released` for a late payment on an option another one had paid)',
    }),
    resolution: z
      .enum(['manual', 'tolerance'])
      .optional()
      .openapi({
        description:
          'invoice.confirmed only, when the invoice was not paid by a transfer of its exact amount: `manual` (the owner applied `transaction` by hand, ' +
          "POST /invoices/{id}/resolve) or `tolerance` (a partial payment within the merchant's underpayment_tolerance, accepted automatically). " +
          'Absent for an exact payment',
        example: 'manual',
      }),
  })
  .openapi('InvoiceEventData');

/** The transfer of invoice.payment_seen and invoice.payment_dropped: in a block not final yet. */
export const SeenTransferSchema = z
  .object({
    network: z.enum(NETWORK_IDS).openapi({ example: 'ethereum-mainnet' }),
    token: z.enum(['USDT', 'USDC']).openapi({ example: 'USDC' }),
    tx_hash: z.string().openapi({ example: '0x5e1f3c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f' }),
    log_index: z.number().int().openapi({ example: 87 }),
    block_number: z.number().int().openapi({ example: 21500000 }),
    amount: z.string().openapi({ description: 'Six decimals', example: '25.000137' }),
    raw_amount: z.string().openapi({ description: 'The on-chain integer value', example: '25000137' }),
  })
  .openapi('SeenTransfer');

export const PaymentSeenDataSchema = z
  .object({
    invoice: InvoiceSchema.openapi({ description: 'The invoice (still pending), with its payment_seen' }),
    transfer: SeenTransferSchema,
    final_in_seconds: z
      .number()
      .int()
      .min(0)
      .openapi({ description: "About how long until the block is final by the network's rule and the invoice confirms", example: 780 }),
  })
  .openapi('PaymentSeenData');

export const PaymentDroppedDataSchema = z
  .object({
    invoice: InvoiceSchema.openapi({
      description:
        'The invoice as it stands: pending again without payment_seen (or confirmed, when a confirmation count was the rule and the block went after)',
    }),
    transfer: SeenTransferSchema,
  })
  .openapi('PaymentDroppedData');

export const TransferEventDataSchema = z
  .object({ transfer: TransferSchema.openapi({ description: 'The transfer as GET /transfers lists it' }) })
  .openapi('TransferEventData');

export const WebhookTestDataSchema = z
  .object({ webhook_id: z.string().openapi({ description: 'The webhook this test was sent to', example: 'whk_Vx2Lm8Qr4Tz6Kp0Jn3Hb7a' }) })
  .openapi('WebhookTestData');

const eventFields = {
  id: z.string().openapi({ description: 'Also sent as X-Gateway-Event-Id; deduplicate on it', example: EVENT_ID_EXAMPLE }),
  created_at: DateTime,
  mode: Mode,
};

export const EventTypeSchema = z.enum(EVENT_TYPES).openapi({ example: 'invoice.confirmed' });

const WHEN: Record<EventType, string> = {
  'invoice.created': 'An invoice was created.',
  'invoice.confirmed': 'A verified transfer of the exact payable amount paid the invoice in time, or the owner accepted a paid review invoice.',
  'invoice.expired': 'The invoice window ended unpaid, the owner rejected a paid review invoice, or the merchant cancelled it (cancelled_at set).',
  'invoice.review': 'The invoice needs the owner: its amount was reused after 90 days (at creation), or such an invoice was paid (with transaction).',
  'invoice.partially_paid':
    "A transfer short of the invoice's amount, within the merchant's underpayment_tolerance and with the invoice's last six decimals, was recorded against it " +
    '(amount_received grows; the invoice stays pending unless underpayment_auto_accept confirms it, with invoice.confirmed after this event).',
  'invoice.late_payment':
    "A transfer of the invoice's exact amount (or of one of its options') arrived after its window, or after it was already paid or closed, " +
    'for example on an option the payment of another released; the invoice keeps its status (amount_received grows; `data.option` names the option on an invoice with several).',
  'invoice.payment_seen':
    "A transfer of the invoice's exact amount is in a block the network does not call final yet; the invoice stays pending and confirms once it is " +
    '(invoice.confirmed), or the block leaves the chain first (invoice.payment_dropped). Never ship on this event alone.',
  'invoice.payment_dropped':
    'The block of a seen payment left the chain before it was final (a reorganization): the payment is not there any more and the invoice waits ' +
    "on. Also sent for a confirmed invoice whose transfer's block left the chain after it confirmed under a confirmation-count rule (the invoice stays confirmed).",
  'transfer.unmatched':
    'A verified transfer of at least tron.dust_threshold reached one of your addresses and paid no invoice (a wrong amount); sent to every merchant of the address.',
  'webhook.test': 'A test sent from the console or POST /webhooks/{id}/test, to that webhook only.',
};

function dataSchema(type: EventType) {
  if (type === 'webhook.test') return WebhookTestDataSchema;
  if (type === 'transfer.unmatched') return TransferEventDataSchema;
  if (type === 'invoice.payment_seen') return PaymentSeenDataSchema;
  if (type === 'invoice.payment_dropped') return PaymentDroppedDataSchema;
  return InvoiceEventDataSchema;
}

function typedEvent<T extends EventType>(type: T) {
  const name = type.replace(/(^|[._])([a-z])/g, (_, __, c: string) => c.toUpperCase());
  return z
    .object({
      ...eventFields,
      type: z.literal(type),
      data: dataSchema(type),
    })
    .openapi(`${name}Event`, { description: WHEN[type] });
}

const TYPED_EVENTS = {
  'invoice.created': typedEvent('invoice.created'),
  'invoice.confirmed': typedEvent('invoice.confirmed'),
  'invoice.expired': typedEvent('invoice.expired'),
  'invoice.review': typedEvent('invoice.review'),
  'invoice.partially_paid': typedEvent('invoice.partially_paid'),
  'invoice.late_payment': typedEvent('invoice.late_payment'),
  'invoice.payment_seen': typedEvent('invoice.payment_seen'),
  'invoice.payment_dropped': typedEvent('invoice.payment_dropped'),
  'transfer.unmatched': typedEvent('transfer.unmatched'),
  'webhook.test': typedEvent('webhook.test'),
} satisfies Record<EventType, unknown>;

/** The webhook body of one event type, with its `data` typed. */
export function eventOfType(type: EventType) {
  return TYPED_EVENTS[type];
}

/**
 * Any event: a oneOf discriminated by `type`, so generated clients narrow `data` by testing `type`
 * (invoice.* events: {invoice}, and {transaction} for invoice.confirmed, a paid invoice.review,
 * invoice.partially_paid and invoice.late_payment; invoice.payment_seen: {invoice, transfer, final_in_seconds};
 * invoice.payment_dropped: {invoice, transfer}; transfer.unmatched: {transfer}; webhook.test: {webhook_id}).
 */
export const EventSchema = z
  .discriminatedUnion('type', [
    TYPED_EVENTS['invoice.created'],
    TYPED_EVENTS['invoice.confirmed'],
    TYPED_EVENTS['invoice.expired'],
    TYPED_EVENTS['invoice.review'],
    TYPED_EVENTS['invoice.partially_paid'],
    TYPED_EVENTS['invoice.late_payment'],
    TYPED_EVENTS['invoice.payment_seen'],
    TYPED_EVENTS['invoice.payment_dropped'],
    TYPED_EVENTS['transfer.unmatched'],
    TYPED_EVENTS['webhook.test'],
  ])
  .openapi('Event', { description: 'One of the event types; `type` says which, and the shape of `data`' });

export const EventEnvelopeSchema = z.object({ event: EventSchema }).openapi('EventEnvelope');

export const EventListSchema = z
  .object({
    events: z.array(EventSchema).openapi({ description: 'Newest first' }),
    has_more: z
      .boolean()
      .openapi({ description: 'More events lie beyond this page: older ones, or newer ones when paging with ending_before', example: false }),
  })
  .openapi('EventList');

export const EventIdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path', description: 'The event id' }, example: EVENT_ID_EXAMPLE }),
});

export { WHEN as EVENT_DESCRIPTIONS };

/** The Event resource as the API and the webhook body show it. */
export function toEventResponse(event: StoredEvent): z.infer<typeof EventSchema> {
  // data is stored exactly as the change that caused the event built it (typed in EventSchema).
  return { id: event.id, type: event.type, created_at: iso(event.createdAt), mode: 'live' as const, data: event.data } as z.infer<typeof EventSchema>;
}
