/**
 * The wrong payments as merchants see them: a view over the chain's recorded transfers, the
 * invoices and their resolutions (one home for GET /transfers and the console).
 *
 * GET /transfers: the wrong payments a merchant may see, newest recorded first, paged like GET
 * /invoices (src/db/paging.ts over `recorded_at` as the list's creation time).
 *
 * A merchant sees an unmatched transfer (invoice_id NULL) to any address one of their wallets
 * registered (archived too; a shared address shows it to each merchant of it), and a late or
 * partial payment recorded against one of their own invoices. Kinds as the API names them:
 * `late`; `unmatched` (at least tron.dust_threshold, or a partial payment of an invoice);
 * `dust` (an unmatched transfer below the threshold).
 */
import { sql, type SqlBool } from 'kysely';
import type { Db, Trx } from '../db/database.js';
import { readPage, type Cursor, type Page, type PageRequest } from '../db/paging.js';
import { rowToTransfer } from '../payments/transfers.repo.js';
import type { ChainTransfer } from '../payments/transfer.model.js';

export const TRANSFER_KINDS = ['unmatched', 'late', 'dust'] as const;

/** The networks whose transfers are listed (every network the instance watches). */
type Networks = ReadonlyArray<{ readonly id: string }>;
export type TransferKind = (typeof TRANSFER_KINDS)[number];

export interface TransferFilter {
  kinds?: readonly TransferKind[];
  /** The address of one of the merchant's wallets (undefined: every address). */
  address?: string;
  invoiceId?: string;
}

/** The merchant's visible transfers as a derived table with the paging columns created_at (= recorded_at) and id. */
function visible(db: Db, networks: Networks, merchantId: string, dustBelow: number, filter: TransferFilter, kind: TransferKind | undefined) {
  let q = db
    .selectFrom('chain_transfers as t')
    .selectAll('t')
    .select('t.recorded_at as created_at')
    .where(
      't.network',
      'in',
      networks.map((n) => n.id),
    )
    .where(sql<SqlBool>`t.kind in ('unmatched', 'late')`)
    .where((eb) =>
      eb.or([
        eb.and([
          eb('t.invoice_id', 'is', null),
          // An address of one of the merchant's wallets on the transfer's network (one EVM wallet receives on several).
          eb.exists(
            eb
              .selectFrom('wallet_networks as wn')
              .innerJoin('wallets as w', 'w.id', 'wn.wallet_id')
              .select('wn.address')
              .where('w.merchant_id', '=', merchantId)
              .whereRef('wn.network', '=', 't.network')
              .whereRef('wn.address', '=', 't.to_address'),
          ),
        ]),
        eb('t.invoice_id', 'in', eb.selectFrom('invoices').select('id').where('merchant_id', '=', merchantId)),
      ]),
    );
  if (kind === 'late') q = q.where('t.kind', '=', 'late');
  if (kind === 'unmatched') q = q.where('t.kind', '=', 'unmatched').where((eb) => eb.or([eb('t.amount', '>=', dustBelow), eb('t.invoice_id', 'is not', null)]));
  if (kind === 'dust') q = q.where('t.kind', '=', 'unmatched').where('t.amount', '<', dustBelow).where('t.invoice_id', 'is', null);
  if (filter.address !== undefined) q = q.where('t.to_address', '=', filter.address);
  if (filter.invoiceId !== undefined) {
    const id = filter.invoiceId;
    q = q.where((eb) =>
      eb.or([
        eb('t.invoice_id', '=', id),
        eb('t.id', 'in', eb.selectFrom('invoice_resolutions').select('transfer_id').where('invoice_id', '=', id).where('merchant_id', '=', merchantId)),
      ]),
    );
  }
  return db.selectFrom(q.as('x')).selectAll();
}

function parts(db: Db, networks: Networks, merchantId: string, dustBelow: number, filter: TransferFilter) {
  const kinds = filter.kinds && filter.kinds.length > 0 ? [...new Set(filter.kinds)] : [undefined];
  return kinds.map((kind) => visible(db, networks, merchantId, dustBelow, filter, kind));
}

export function transferKind(t: ChainTransfer, dustBelow: number): TransferKind {
  if (t.kind === 'late') return 'late';
  return t.invoiceId === null && t.amount < BigInt(dustBelow) ? 'dust' : 'unmatched';
}

export async function listTransferPage(
  db: Db,
  networks: Networks,
  merchantId: string,
  dustBelow: number,
  filter: TransferFilter,
  page: PageRequest,
): Promise<Page<ChainTransfer>> {
  const { items, hasMore } = await readPage(parts(db, networks, merchantId, dustBelow, filter), page);
  return { items: items.map(({ created_at: _, ...row }) => rowToTransfer(row)), hasMore };
}

/** Where a transfer the merchant may see stands in the list (a paging cursor). */
export async function findTransferCursor(db: Db, networks: Networks, merchantId: string, id: string): Promise<Cursor | undefined> {
  const row = await visible(db, networks, merchantId, 0, {}, undefined).where('id', '=', id).executeTakeFirst();
  return row ? { createdAt: row.created_at, id: row.id } : undefined;
}

/** One transfer the merchant may see (POST /transfers/{id}/contest). */
export async function findVisibleTransfer(db: Db, networks: Networks, merchantId: string, id: string): Promise<ChainTransfer | undefined> {
  const row = await visible(db, networks, merchantId, 0, {}, undefined).where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const { created_at: _, ...rest } = row;
  return rowToTransfer(rest);
}

/** A transfer applied by hand, as every merchant of its address sees it. */
export interface AppliedTransfer {
  invoiceId: string;
  /** The merchant who applied it, and their display name (shown to every merchant of the address). */
  merchantId: string;
  merchantName: string;
  /** The invoice's order id: shown to the merchant who applied it only. */
  orderId: string;
  resolvedAt: number;
  /** Other merchants of the address who contest it, oldest first. */
  contests: Array<{ merchantId: string; merchantName: string; createdAt: number }>;
}

/** transfer id -> who applied it to which invoice, for the transfers of a page that were applied by hand. */
export async function appliedTransfers(db: Db | Trx, transferIds: readonly string[]): Promise<Map<string, AppliedTransfer>> {
  const out = new Map<string, AppliedTransfer>();
  if (transferIds.length === 0) return out;
  const ids = [...new Set(transferIds)];
  const rows = await db
    .selectFrom('invoice_resolutions as r')
    .innerJoin('invoices as i', 'i.id', 'r.invoice_id')
    .innerJoin('merchants as m', 'm.id', 'r.merchant_id')
    .select(['r.transfer_id', 'r.invoice_id', 'r.merchant_id', 'r.resolved_at', 'm.name', 'i.merchant_order_id'])
    .where('r.transfer_id', 'in', ids)
    .execute();
  for (const r of rows) {
    out.set(r.transfer_id, {
      invoiceId: r.invoice_id,
      merchantId: r.merchant_id,
      merchantName: r.name,
      orderId: r.merchant_order_id,
      resolvedAt: r.resolved_at,
      contests: [],
    });
  }
  const contests = await db
    .selectFrom('transfer_contests as c')
    .innerJoin('merchants as m', 'm.id', 'c.merchant_id')
    .select(['c.transfer_id', 'c.merchant_id', 'c.created_at', 'm.name'])
    .where('c.transfer_id', 'in', ids)
    .orderBy('c.created_at')
    .execute();
  for (const c of contests) out.get(c.transfer_id)?.contests.push({ merchantId: c.merchant_id, merchantName: c.name, createdAt: c.created_at });
  return out;
}
