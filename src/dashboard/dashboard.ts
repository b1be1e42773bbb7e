/**
 * The merchant's overview, one read model for the API's Dashboard (GET and PATCH /me) and the
 * console pages: each list comes from the feature that owns it, in that feature's order, so the
 * two never disagree about what a merchant has.
 */
import { findPaymentSettings, type PaymentSettings } from '../accounts/underpayment.js';
import type { Merchant } from '../accounts/merchants.repo.js';
import { isKeyActive, listMerchantKeys, type ApiKeyRecord } from '../api-keys/api-keys.repo.js';
import { listMerchantLatePayments, listUnmatchedTransfers } from '../payments/transfers.repo.js';
import type { ChainTransfer } from '../payments/transfer.model.js';
import { listMerchantEvents, type StoredEvent } from '../events/events.repo.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { readInvoiceStats, type InvoiceStats } from '../invoices/invoice-stats.repo.js';
import { listMerchantInvoices } from '../invoices/invoices.repo.js';
import { listMerchantWallets, type WalletWithNetworks } from '../wallets/wallets.repo.js';
import { listDeliveries, listWebhooks, type Delivery, type Webhook } from '../webhooks/webhooks.repo.js';
import { countResources } from './dashboard.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock'>;

export const DASHBOARD_EVENTS = 100;
export const DASHBOARD_INVOICES = 100;

export interface Dashboard {
  merchant: Merchant;
  wallets: WalletWithNetworks[];
  invoices: Invoice[];
  events: StoredEvent[];
  apiKeys: ApiKeyRecord[];
  webhooks: Webhook[];
  deliveries: Delivery[];
  latePayments: ChainTransfer[];
  unmatchedTransfers: ChainTransfer[];
  stats: InvoiceStats;
  paymentSettings: PaymentSettings;
  /** The moment it was read (API keys show whether they have expired by then). */
  now: number;
}

/** Every list of the Dashboard, newest first. */
export async function readDashboard(deps: Deps, merchant: Merchant): Promise<Dashboard> {
  const now = deps.clock.now();
  const [events, stats, webhooks, deliveries, wallets, invoices, apiKeys, latePayments, unmatchedTransfers] = await Promise.all([
    listMerchantEvents(deps.db, merchant.id, DASHBOARD_EVENTS),
    readInvoiceStats(deps.db, merchant.id),
    listWebhooks(deps.db, merchant.id),
    listDeliveries(deps.db, merchant.id),
    listMerchantWallets(deps.db, merchant.id),
    listMerchantInvoices(deps.db, merchant.id, DASHBOARD_INVOICES),
    listMerchantKeys(deps.db, merchant.id),
    listMerchantLatePayments(deps.db, merchant.id),
    listUnmatchedTransfers(deps.db, deps.config.network, merchant.id),
  ]);
  const paymentSettings = await findPaymentSettings(deps.db, merchant.id);
  return { merchant, wallets, invoices, events, apiKeys, webhooks, deliveries, latePayments, unmatchedTransfers, stats, paymentSettings, now };
}

/** The console overview's figures: the Dashboard's invoice stats and the counts beside them. */
export interface OverviewFigures {
  stats: InvoiceStats;
  wallets: number;
  activeKeys: number;
  activeWebhooks: number;
  failedDeliveries: number;
}

export async function readOverviewFigures(deps: Deps, merchantId: string): Promise<OverviewFigures> {
  const now = deps.clock.now();
  const [stats, keys, counts] = await Promise.all([
    readInvoiceStats(deps.db, merchantId),
    listMerchantKeys(deps.db, merchantId),
    countResources(deps.db, merchantId),
  ]);
  return { stats, activeKeys: keys.filter((k) => isKeyActive(k, now)).length, ...counts };
}
