/**
 * Expiry by the scan, owned by the invoices feature: pending (or unpaid review) -> expired, with
 * invoice.expired, for every open, unpaid invoice whose whole window lies in blocks its networks
 * have read (an invoice with options on several networks once each of them has). The payments
 * layer calls it in the transaction that records a scan's transfers and moves its cursor.
 */
import type { Db, Trx, Tx } from '../db/database.js';
import { insertEvent } from '../events/events.repo.js';
import { parseAmount } from '../lib/amounts.js';
import { releaseOpenOptions, withOptions } from './invoice-options.repo.js';
import type { Invoice } from './invoice.model.js';
import { toInvoiceResponse } from './invoices.schemas.js';
import { isOpen } from './invoices.repo.js';
import { transition } from './invoice.states.js';
import type { PaymentDeps } from './invoice-payments.js';

const expire = transition('expire');

/** Block times not scanned yet: every unscanned block's time lies in one of these open intervals (ms). */
export interface Unscanned {
  /** Every block up to this time (ms, inclusive) is scanned, except in `gaps`. */
  scannedUntil: number;
  gaps: Array<{ after: number; before: number }>;
  /**
   * The network whose scan this is: the invoices asking on it, or offering an open option on it,
   * may expire (absent: every network's, as when TRON was the only one).
   */
  network?: string;
  /**
   * Where another network's scan stands (undefined: it has not scanned yet), for an invoice with
   * options on several networks: it expires only once every network it may be paid on has scanned
   * its whole window, whichever of them commits last. Absent: the other networks are not asked.
   */
  elsewhere?: (network: string) => Promise<Omit<Unscanned, 'network' | 'elsewhere'> | undefined>;
}

/** Whether a scan covers an invoice's whole window: read up to its end, and no unread range meets it. */
function covers(scan: Omit<Unscanned, 'network' | 'elsewhere'>, inv: Pick<Invoice, 'createdAt' | 'expiresAt'>): boolean {
  return inv.expiresAt <= scan.scannedUntil && !scan.gaps.some((g) => g.after < inv.expiresAt && g.before > inv.createdAt);
}

/**
 * The query behind expireScanned (exported for the query-plan test): through the partial index of
 * open invoices by expires_at (every invoice of a database is USDT of its one network).
 */
export function expirableQuery(db: Db | Trx, scannedUntil: number, now: number, network?: string) {
  let q = db
    .selectFrom('invoices')
    .selectAll()
    .where(isOpen('status'))
    .where('expires_at', '<=', scannedUntil)
    .where('expires_at', '<', now)
    .where('tx_hash', 'is', null);
  if (network !== undefined) q = q.where('network', '=', network);
  return q;
}

/** Open invoices offering an open option on `network` whose window ended by `scannedUntil` (invoice_options' index by network). */
export function expirableByOptionQuery(db: Db | Trx, scannedUntil: number, now: number, network: string) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('id', 'in', db.selectFrom('invoice_options').select('invoice_id').where('network', '=', network).where('status', '=', 'open'))
    .where(isOpen('status'))
    .where('expires_at', '<=', scannedUntil)
    .where('expires_at', '<', now)
    .where('tx_hash', 'is', null);
}

/**
 * pending (or unpaid review) -> expired, with invoice.expired, for every invoice whose whole window
 * has been scanned with no payment: its end is at or before `scannedUntil` and no unscanned range
 * meets its window. A paid review invoice waits for its owner and never expires here.
 */
export async function expireScanned(deps: PaymentDeps, trx: Trx, tx: Tx, unscanned: Unscanned, now: number): Promise<Invoice[]> {
  const rows = await expirableQuery(trx, unscanned.scannedUntil, now, unscanned.network).execute();
  // An invoice offering an open option on this network expires by this network's scan too, not
  // only by its own (option 0's) network's.
  if (unscanned.network !== undefined) {
    const seen = new Set(rows.map((r) => r.id));
    for (const row of await expirableByOptionQuery(trx, unscanned.scannedUntil, now, unscanned.network).execute()) {
      if (!seen.has(row.id)) rows.push(row);
    }
  }
  const expired: Invoice[] = [];
  const maxAdjustment = parseAmount(deps.config.invoices.max_adjustment)!;
  const scans = new Map<string, Omit<Unscanned, 'network' | 'elsewhere'> | undefined>();
  const scanOf = async (network: string) => {
    if (!scans.has(network)) scans.set(network, await unscanned.elsewhere!(network));
    return scans.get(network);
  };
  candidates: for (const inv of await withOptions(trx, rows)) {
    if (!covers(unscanned, inv)) continue;
    if (unscanned.network !== undefined && unscanned.elsewhere) {
      // Every other network it may still be paid on has read its window too.
      const others = new Set([inv.network, ...inv.options.filter((o) => o.status === 'open').map((o) => o.network)]);
      others.delete(unscanned.network);
      for (const network of others) {
        const scan = await scanOf(network);
        if (!scan || !covers(scan, inv)) continue candidates;
      }
    }
    const r = await trx
      .updateTable('invoices')
      .set({ status: expire.to })
      .where('id', '=', inv.id)
      // isOpen is expire.from (OPEN_STATUSES) written as literals.
      .where(isOpen('status'))
      .where('tx_hash', 'is', null)
      .executeTakeFirst();
    if (r.numUpdatedRows !== 1n) continue;
    await releaseOpenOptions(trx, inv, now, maxAdjustment);
    const options = inv.options.map((o) => (o.status === 'open' ? { ...o, status: 'released' as const } : o));
    const updated: Invoice = { ...inv, status: expire.to, options };
    await insertEvent(
      tx,
      { merchantId: inv.merchantId, type: 'invoice.expired', invoiceId: inv.id, data: { invoice: toInvoiceResponse(updated, deps.config.server.public_url) } },
      now,
    );
    expired.push(updated);
  }
  return expired;
}
