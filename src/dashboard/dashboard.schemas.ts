/** The Dashboard resource (GET and PATCH /me) and its mapper from the read model. */
import { toPaymentSettingsResponse } from '../accounts/accounts.schemas.js';
import { z } from '@hono/zod-openapi';
import { OwnMerchantSchema, toMerchantResponse } from '../accounts/accounts.schemas.js';
import { ApiKeySchema, toApiKeyResponse } from '../api-keys/api-keys.schemas.js';
import { ChainTransferSchema, toChainTransferResponse } from '../payments/transfer.schemas.js';
import type { Config } from '../config.js';
import { EventSchema, toEventResponse } from '../events/events.schemas.js';
import type { InvoiceStats } from '../invoices/invoice-stats.repo.js';
import { InvoiceSchema, toInvoiceResponse } from '../invoices/invoices.schemas.js';
import { formatAmount } from '../lib/amounts.js';
import { toWalletResponse, WalletSchema } from '../wallets/wallets.schemas.js';
import { DeliverySchema, toDeliveryResponse, toWebhookResponse, WebhookSchema } from '../webhooks/webhooks.schemas.js';
import type { Dashboard } from './dashboard.js';

const Amount = z
  .string()
  .regex(/^[0-9]+\.[0-9]{6}$/)
  .openapi({ example: '125.000000' });

export const DashboardStatsSchema = z
  .object({
    invoice_counts: z
      .object({
        total: z.number().int(),
        pending: z.number().int(),
        confirmed: z.number().int(),
        expired: z.number().int(),
        review: z.number().int(),
      })
      .openapi({ description: 'Number of invoices of the merchant, all time, by status' }),
    confirmed_totals: z
      .object({
        base_amount: Amount,
        adjustment: Amount,
        payable_amount: Amount,
        received_amount: Amount.openapi({
          description:
            "What the confirmed invoices really received: each invoice's received_amount (a transfer applied by hand may differ from its payable_amount)",
        }),
      })
      .openapi({ description: 'Sums over confirmed invoices, all time, in USDT with six fractional digits' }),
  })
  .openapi('DashboardStats');

export const DashboardSchema = z
  .object({
    merchant: OwnMerchantSchema,
    wallets: z.array(WalletSchema),
    invoices: z.array(InvoiceSchema).openapi({ description: 'The 100 most recent invoices, newest first' }),
    events: z.array(EventSchema).openapi({ description: 'The 100 most recent events, newest first' }),
    api_keys: z.array(ApiKeySchema),
    webhooks: z.array(WebhookSchema),
    deliveries: z.array(DeliverySchema),
    late_payments: z.array(ChainTransferSchema).openapi({ description: 'Transfers of a reserved amount that arrived after their invoice window (newest 100)' }),
    unmatched_transfers: z
      .array(ChainTransferSchema)
      .openapi({ description: 'USDT transfers to your watched addresses that match no invoice amount (newest 100)' }),
    stats: DashboardStatsSchema,
  })
  .openapi('Dashboard');

export type DashboardResponse = z.infer<typeof DashboardSchema>;

export function toDashboardStatsResponse(stats: InvoiceStats): DashboardResponse['stats'] {
  const { byStatus, confirmed } = stats;
  return {
    invoice_counts: { total: byStatus.pending + byStatus.confirmed + byStatus.expired + byStatus.review, ...byStatus },
    confirmed_totals: {
      base_amount: formatAmount(confirmed.base),
      adjustment: formatAmount(confirmed.adjustment),
      payable_amount: formatAmount(confirmed.payable),
      received_amount: formatAmount(confirmed.received),
    },
  };
}

/** Every list through its feature's response mapper. */
export function toDashboardResponse(d: Dashboard, config: Config): DashboardResponse {
  return {
    merchant: { ...toMerchantResponse(d.merchant, config), ...toPaymentSettingsResponse(d.paymentSettings) },
    wallets: d.wallets.map(toWalletResponse),
    invoices: d.invoices.map((inv) => toInvoiceResponse(inv, config.server.public_url)),
    events: d.events.map(toEventResponse),
    api_keys: d.apiKeys.map((key) => toApiKeyResponse(key, d.now)),
    webhooks: d.webhooks.map((w) => toWebhookResponse(w, d.now)),
    deliveries: d.deliveries.map(toDeliveryResponse),
    late_payments: d.latePayments.map(toChainTransferResponse),
    unmatched_transfers: d.unmatchedTransfers.map(toChainTransferResponse),
    stats: toDashboardStatsResponse(d.stats),
  };
}
