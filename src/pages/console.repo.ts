/**
 * Reads of the console pages over the core tables (migrations/0001), each scoped to one merchant.
 * The console writes nothing itself: its forms call the JSON API (see console.pages.ts).
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { InvoiceStatus } from '../db/schema.js';
import { rowToInvoice, type Invoice } from '../invoices/invoice.model.js';
import { isOpen } from '../invoices/invoices.repo.js';
import { invoiceStats } from '../accounts/dashboard.js';
import { listWebhooks } from '../webhooks/webhooks.repo.js';
import { USDT_CONTRACT } from '../lib/tron.js';

export const CONSOLE_INVOICE_LIMIT = 500;

export interface WalletView {
  id: string;
  label: string;
  address: string;
  createdAt: number;
  openInvoices: number;
}

/**
 * The wallets with their open invoices counted through the partial index of open invoices (isOpen:
 * with bound statuses SQLite cannot use a partial index, and the count read every invoice of the
 * merchant).
 */
export function walletViewsQuery(db: Db, merchantId: string) {
  return db
    .selectFrom('wallets as w')
    .select(['w.id', 'w.label', 'w.address', 'w.created_at'])
    .select((eb) =>
      eb
        .selectFrom('invoices as i')
        .select(sql<number>`count(*)`.as('n'))
        .whereRef('i.network', '=', 'w.network')
        .where('i.token_contract', '=', USDT_CONTRACT)
        .whereRef('i.wallet_address', '=', 'w.address')
        .where(isOpen('i.status'))
        .whereRef('i.wallet_id', '=', 'w.id')
        .as('open'),
    )
    .where('w.merchant_id', '=', merchantId)
    .orderBy('w.created_at', 'asc');
}

export async function listWallets(db: Db, merchantId: string): Promise<WalletView[]> {
  const rows = await walletViewsQuery(db, merchantId).execute();
  return rows.map((r) => ({ id: r.id, label: r.label, address: r.address, createdAt: r.created_at, openInvoices: Number(r.open ?? 0) }));
}

export async function listInvoices(db: Db, merchantId: string, status: InvoiceStatus | undefined): Promise<Invoice[]> {
  let q = db.selectFrom('invoices').selectAll().where('merchant_id', '=', merchantId);
  if (status) q = q.where('status', '=', status);
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(CONSOLE_INVOICE_LIMIT).execute();
  return rows.map(rowToInvoice);
}

export interface EventView {
  id: string;
  type: string;
  createdAt: number;
  data: string;
}

export async function listInvoiceEvents(db: Db, merchantId: string, invoiceId: string): Promise<EventView[]> {
  const rows = await db
    .selectFrom('events')
    .select(['id', 'type', 'created_at', 'data'])
    .where('merchant_id', '=', merchantId)
    .where('invoice_id', '=', invoiceId)
    .orderBy('created_at', 'asc')
    .execute();
  return rows.map((r) => ({ id: r.id, type: r.type, createdAt: r.created_at, data: r.data }));
}

export interface DeliveryView {
  id: string;
  webhookId: string;
  url: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  responseStatus: number | null;
  createdAt: number;
}

/** Deliveries of the merchant, newest first; of one invoice's events when invoiceId is given. */
export async function listDeliveries(db: Db, merchantId: string, opts: { invoiceId?: string; limit?: number } = {}): Promise<DeliveryView[]> {
  let q = db
    .selectFrom('deliveries')
    .innerJoin('events', 'events.id', 'deliveries.event_id')
    .innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .select([
      'deliveries.id',
      'deliveries.webhook_id',
      'webhooks.url',
      'deliveries.event_id',
      'events.type',
      'deliveries.status',
      'deliveries.attempts',
      'deliveries.next_attempt_at',
      'deliveries.last_error',
      'deliveries.response_status',
      'deliveries.created_at',
    ])
    .where('deliveries.merchant_id', '=', merchantId);
  if (opts.invoiceId) q = q.where('events.invoice_id', '=', opts.invoiceId);
  const rows = await q.orderBy('deliveries.created_at', 'desc').limit(opts.limit ?? 100).execute();
  return rows.map((r) => ({
    id: r.id,
    webhookId: r.webhook_id,
    url: r.url,
    eventId: r.event_id,
    eventType: r.type,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastError: r.last_error,
    responseStatus: r.response_status,
    createdAt: r.created_at,
  }));
}

export interface WebhookView {
  id: string;
  url: string;
  active: boolean;
  createdAt: number;
}

/** The webhooks as the console shows them: the feature's list without the signing secret. */
export async function listWebhookViews(db: Db, merchantId: string): Promise<WebhookView[]> {
  return (await listWebhooks(db, merchantId)).map((w) => ({ id: w.id, url: w.url, active: w.active, createdAt: w.createdAt }));
}

export interface DashboardStats {
  byStatus: Record<InvoiceStatus, number>;
  /** Sum of the confirmed invoices' payable amounts (the Dashboard's confirmed_totals). */
  received: string;
  wallets: number;
  activeKeys: number;
  activeWebhooks: number;
  failedDeliveries: number;
}

const n = sql<number>`count(*)`.as('n');

/** The Dashboard's invoice stats (GET /me), plus the counts the overview page shows beside them. */
export async function dashboardStats(db: Db, merchantId: string, now: number): Promise<DashboardStats> {
  const stats = await invoiceStats(db, merchantId);
  const { total: _total, ...byStatus } = stats.invoice_counts;
  return {
    byStatus,
    received: stats.confirmed_totals.payable_amount,
    wallets: Number((await db.selectFrom('wallets').select(n).where('merchant_id', '=', merchantId).executeTakeFirstOrThrow()).n),
    activeKeys: Number(
      (
        await db
          .selectFrom('api_keys')
          .select(n)
          .where('merchant_id', '=', merchantId)
          .where('revoked_at', 'is', null)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    activeWebhooks: Number(
      (await db.selectFrom('webhooks').select(n).where('merchant_id', '=', merchantId).where('active', '=', 1).executeTakeFirstOrThrow()).n,
    ),
    failedDeliveries: Number(
      (await db.selectFrom('deliveries').select(n).where('merchant_id', '=', merchantId).where('status', '=', 'failed').executeTakeFirstOrThrow()).n,
    ),
  };
}
