/**
 * The reads of the merchant's overview that join several features' tables (wallets with their open
 * invoices, deliveries with their webhook and event) or only count them. Reads only: every state
 * change stays with the feature that owns the table. Each function is scoped to one merchant.
 */
import type { Invoice } from '../invoices/invoice.model.js';
import { withOptions } from '../invoices/invoice-options.repo.js';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { isOpen } from '../invoices/invoices.repo.js';

export interface WalletView {
  id: string;
  label: string;
  address: string;
  createdAt: number;
  /** Archived wallets take no new invoices (the new-invoice form leaves them out). */
  archivedAt: number | null;
  openInvoices: number;
}

/**
 * The wallets, in the API's order (newest first), with their open invoices counted through the
 * partial index of open invoices (isOpen: with bound statuses SQLite cannot use a partial index,
 * and the count read every invoice of the merchant).
 */
export function walletViewsQuery(db: Db, merchantId: string, tokenContract: string) {
  return db
    .selectFrom('wallets as w')
    .select(['w.id', 'w.label', 'w.address', 'w.created_at', 'w.archived_at'])
    .select((eb) =>
      eb
        .selectFrom('invoices as i')
        .select(sql<number>`count(*)`.as('n'))
        .whereRef('i.network', '=', 'w.network')
        .where('i.token_contract', '=', tokenContract)
        .whereRef('i.wallet_address', '=', 'w.address')
        .where(isOpen('i.status'))
        .whereRef('i.wallet_id', '=', 'w.id')
        .as('open'),
    )
    .where('w.merchant_id', '=', merchantId)
    .orderBy('w.created_at', 'desc')
    .orderBy('w.id');
}

export async function listWalletViews(db: Db, merchantId: string, tokenContract: string): Promise<WalletView[]> {
  const rows = await walletViewsQuery(db, merchantId, tokenContract).execute();
  return rows.map((r) => ({
    id: r.id,
    label: r.label,
    address: r.address,
    createdAt: r.created_at,
    archivedAt: r.archived_at,
    openInvoices: Number(r.open ?? 0),
  }));
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

/** Deliveries with their webhook's URL and event's type, in the API's order (newest first); of one invoice's events when invoiceId is given. */
export async function listDeliveryViews(db: Db, merchantId: string, opts: { invoiceId?: string; limit?: number } = {}): Promise<DeliveryView[]> {
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
  const rows = await q
    .orderBy('deliveries.created_at', 'desc')
    .orderBy('deliveries.id')
    .limit(opts.limit ?? 100)
    .execute();
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

const n = sql<number>`count(*)`.as('n');

/** How many wallets, active webhooks and failed deliveries the merchant has. */
export async function countResources(db: Db, merchantId: string): Promise<{ wallets: number; activeWebhooks: number; failedDeliveries: number }> {
  const [wallets, activeWebhooks, failedDeliveries] = await Promise.all([
    db.selectFrom('wallets').select(n).where('merchant_id', '=', merchantId).executeTakeFirstOrThrow(),
    db.selectFrom('webhooks').select(n).where('merchant_id', '=', merchantId).where('active', '=', 1).executeTakeFirstOrThrow(),
    db.selectFrom('deliveries').select(n).where('merchant_id', '=', merchantId).where('status', '=', 'failed').executeTakeFirstOrThrow(),
  ]);
  return { wallets: Number(wallets.n), activeWebhooks: Number(activeWebhooks.n), failedDeliveries: Number(failedDeliveries.n) };
}

/** Invoices a wrong payment may be applied to (unpaid: pending, expired or review), newest first. */
export async function listUnpaidInvoices(db: Db, merchantId: string, limit = 200): Promise<Invoice[]> {
  const rows = await db
    .selectFrom('invoices')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('tx_hash', 'is', null)
    .where('status', 'in', ['pending', 'expired', 'review'])
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return withOptions(db, rows);
}
