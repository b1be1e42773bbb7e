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
 * The wallets, in the API's order (newest first), with their open invoices counted on every network
 * each receives on (wallet_networks, not only its first) and in every token given (the instance's
 * token contracts): the invoices the wallet's row asks for, and those that offer it as another
 * option (invoice_options, still open). Counted through the partial index of open invoices (isOpen:
 * with bound statuses SQLite cannot use a partial index, and the count read every invoice of the
 * merchant) and the options' payable-amount index.
 */
export function walletViewsQuery(db: Db, merchantId: string, tokenContracts: string | readonly string[]) {
  const contracts = typeof tokenContracts === 'string' ? [tokenContracts] : [...new Set(tokenContracts)];
  return db
    .selectFrom('wallets as w')
    .select(['w.id', 'w.label', 'w.address', 'w.created_at', 'w.archived_at'])
    .select((eb) =>
      eb
        .selectFrom('wallet_networks as wn')
        .innerJoin('invoices as i', (j) => j.onRef('i.network', '=', 'wn.network').onRef('i.wallet_address', '=', 'wn.address'))
        .select(sql<number>`count(*)`.as('n'))
        .whereRef('wn.wallet_id', '=', 'w.id')
        .where('i.token_contract', 'in', contracts)
        .where(isOpen('i.status'))
        .whereRef('i.wallet_id', '=', 'w.id')
        .as('open'),
    )
    .select((eb) =>
      eb
        .selectFrom('wallet_networks as wn')
        .innerJoin('invoice_options as o', (j) => j.onRef('o.network', '=', 'wn.network').onRef('o.wallet_address', '=', 'wn.address'))
        .innerJoin('invoices as oi', 'oi.id', 'o.invoice_id')
        .select(sql<number>`count(distinct o.invoice_id)`.as('n'))
        .whereRef('wn.wallet_id', '=', 'w.id')
        .where('o.token_contract', 'in', contracts)
        .where('o.status', '=', 'open')
        .whereRef('o.wallet_id', '=', 'w.id')
        .whereRef('oi.wallet_id', '!=', 'w.id')
        .as('open_options'),
    )
    .where('w.merchant_id', '=', merchantId)
    .orderBy('w.created_at', 'desc')
    .orderBy('w.id');
}

/** The wallets with their open invoices counted (walletViewsQuery), `tokenContracts` those of the instance's networks. */
export async function listWalletViews(db: Db, merchantId: string, tokenContracts: string | readonly string[]): Promise<WalletView[]> {
  const rows = await walletViewsQuery(db, merchantId, tokenContracts).execute();
  return rows.map((r) => ({
    id: r.id,
    label: r.label,
    address: r.address,
    createdAt: r.created_at,
    archivedAt: r.archived_at,
    openInvoices: Number(r.open ?? 0) + Number(r.open_options ?? 0),
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
