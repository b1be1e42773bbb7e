/**
 * The Dashboard (GET and PATCH /me): the merchant, its recent resources and the invoice stats.
 * Other features fill their lists here.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { InvoiceStatus } from '../db/schema.js';
import type { AppDeps } from '../deps.js';
import { formatAmount, MICRO } from '../lib/amounts.js';
import { listMerchantEvents, toEventResponse } from '../events/events.repo.js';
import type { DashboardResponse } from './accounts.schemas.js';
import type { Merchant } from './merchants.repo.js';
import { toMerchantResponse } from './merchant.view.js';
import { listDeliveries, listWebhooks } from '../webhooks/webhooks.repo.js';
import { toDeliveryResponse, toWebhookResponse } from '../webhooks/webhooks.schemas.js';
import { listWalletsForMerchant } from '../wallets/wallets.repo.js';
import { listInvoicesForMerchant } from '../invoices/invoices.repo.js';
import { listApiKeysForMerchant } from '../api-keys/api-keys.repo.js';
import { listMerchantLatePayments, listUnmatchedTransfers } from '../chain/chain.repo.js';
import { toChainTransferResponse } from '../chain/chain.model.js';

const DASHBOARD_EVENTS = 100;
const DASHBOARD_INVOICES = 100;

type Stats = DashboardResponse['stats'];

/**
 * Counts by status and confirmed totals, from the per-merchant rows the invoice triggers keep
 * (migrations/0007): at most four rows, whatever the number of invoices. Amounts are exact: read as
 * text, joined as BigInt.
 */
export async function invoiceStats(db: Db, merchantId: string): Promise<Stats> {
  const asText = (column: 'invoices' | 'base_units' | 'base_micros' | 'adjustment' | 'payable_units' | 'payable_micros') =>
    sql<string>`CAST(${sql.ref(column)} AS TEXT)`.as(column);
  const rows = await db
    .selectFrom('invoice_stats')
    .select([
      'status',
      asText('invoices'),
      asText('base_units'),
      asText('base_micros'),
      asText('adjustment'),
      asText('payable_units'),
      asText('payable_micros'),
    ])
    .where('merchant_id', '=', merchantId)
    .execute();
  const byStatus: Record<InvoiceStatus, number> = { pending: 0, confirmed: 0, expired: 0, review: 0 };
  let totals = { base: 0n, adjustment: 0n, payable: 0n };
  for (const row of rows) {
    byStatus[row.status] = Number(row.invoices);
    if (row.status === 'confirmed') {
      totals = {
        base: BigInt(row.base_units) * MICRO + BigInt(row.base_micros),
        adjustment: BigInt(row.adjustment),
        payable: BigInt(row.payable_units) * MICRO + BigInt(row.payable_micros),
      };
    }
  }
  return {
    invoice_counts: { total: byStatus.pending + byStatus.confirmed + byStatus.expired + byStatus.review, ...byStatus },
    confirmed_totals: {
      base_amount: formatAmount(totals.base),
      adjustment: formatAmount(totals.adjustment),
      payable_amount: formatAmount(totals.payable),
    },
  };
}

/** Every list of the Dashboard, newest first, each through its feature's response mapper. */
export async function composeDashboard(deps: AppDeps, merchant: Merchant): Promise<DashboardResponse> {
  const [events, stats, webhooks, deliveries, wallets, invoices, apiKeys, late, unmatched] = await Promise.all([
    listMerchantEvents(deps.db, merchant.id, DASHBOARD_EVENTS),
    invoiceStats(deps.db, merchant.id),
    listWebhooks(deps.db, merchant.id),
    listDeliveries(deps.db, merchant.id),
    listWalletsForMerchant(deps.db, merchant.id),
    listInvoicesForMerchant(deps.db, merchant.id, deps.config.server.public_url, DASHBOARD_INVOICES),
    listApiKeysForMerchant(deps.db, merchant.id, deps.clock.now()),
    listMerchantLatePayments(deps.db, merchant.id),
    listUnmatchedTransfers(deps.db, merchant.id),
  ]);
  return {
    merchant: toMerchantResponse(merchant, deps.config),
    wallets,
    invoices,
    events: events.map(toEventResponse),
    api_keys: apiKeys,
    webhooks: webhooks.map(toWebhookResponse),
    deliveries: deliveries.map(toDeliveryResponse),
    late_payments: late.map(toChainTransferResponse),
    unmatched_transfers: unmatched.map(toChainTransferResponse),
    stats,
  };
}
