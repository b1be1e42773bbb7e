/** Receiving wallets. Several merchants may register one address; each gets its own wallet row. */
import { sql, type RawBuilder, type Selectable } from 'kysely';
import { compileQuery, type Lookup, type Param } from '../db/compiled.js';
import type { Conn, Db, Trx } from '../db/database.js';
import type { WalletsTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import type { NetworkId } from '../lib/tron.js';

export interface Wallet {
  id: string;
  merchantId: string;
  label: string;
  address: string;
  network: string;
  createdAt: number;
  /** Archived wallets take no new invoices; their address is still watched for late payments. */
  archivedAt: number | null;
}

function rowToWallet(row: Selectable<WalletsTable>): Wallet {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    label: row.label,
    address: row.address,
    network: row.network,
    createdAt: row.created_at,
    archivedAt: row.archived_at,
  };
}

/**
 * Registers an address on `network` (the instance's) for a merchant. `created` is false when this merchant already had it (the
 * existing wallet, label unchanged, is returned); the unique index settles concurrent registrations.
 */
export async function registerWallet(
  db: Db,
  network: NetworkId,
  merchantId: string,
  label: string,
  address: string,
  now: number,
): Promise<{ wallet: Wallet; created: boolean }> {
  const id = newId('wal');
  await db
    .insertInto('wallets')
    .values({ id, merchant_id: merchantId, label, address, network, created_at: now, archived_at: null })
    .onConflict((oc) => oc.columns(['merchant_id', 'network', 'address']).doNothing())
    .executeTakeFirst();
  // The row inserted now, or the one this merchant already had (the insert did nothing).
  const wallet = (await findMerchantWalletByAddress(db, network, merchantId, address))!;
  return { wallet, created: wallet.id === id };
}

const merchantWalletQuery = compileQuery((db, p: Param<{ merchantId: string; walletId: string }>) =>
  db.selectFrom('wallets').selectAll().where('id', '=', p('walletId')).where('merchant_id', '=', p('merchantId')),
);

/** A wallet of this merchant (another merchant's wallet is absent): a lookup (readTogether, or `.on(conn)`). */
export function merchantWalletLookup(merchantId: string, walletId: string): Lookup<Wallet | undefined> {
  return merchantWalletQuery.lookup({ merchantId, walletId }, (rows) => (rows[0] ? rowToWallet(rows[0]) : undefined));
}

/** A wallet of this merchant; another merchant's wallet is absent. A compiled query. */
export async function findMerchantWallet(conn: Conn, merchantId: string, walletId: string): Promise<Wallet | undefined> {
  return merchantWalletLookup(merchantId, walletId).on(conn);
}

const otherOwnerQuery = compileQuery((db, p: Param<{ network: string; address: string; merchantId: string }>) =>
  db
    .selectFrom('wallets')
    .select('id')
    .where('network', '=', p('network'))
    .where('address', '=', p('address'))
    .where('merchant_id', '!=', p('merchantId'))
    .limit(1),
);

/** Whether another merchant registered `address` too (archived wallets count). Compiled query. */
export async function addressHasOtherOwner(conn: Conn, network: string, address: string, merchantId: string): Promise<boolean> {
  return (await otherOwnerQuery.first(conn, { network, address, merchantId })) !== undefined;
}

export async function listMerchantWallets(db: Db, merchantId: string): Promise<Wallet[]> {
  const rows = await db.selectFrom('wallets').selectAll().where('merchant_id', '=', merchantId).orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(rowToWallet);
}
/** Every merchant with a wallet on `address` of `network` (archived wallets too): who owns money sent there. */
export async function listAddressOwners(db: Db | Trx, network: NetworkId, address: string): Promise<string[]> {
  const rows = await db.selectFrom('wallets').select('merchant_id').distinct().where('network', '=', network).where('address', '=', address).execute();
  return rows.map((r) => r.merchant_id);
}

/** This merchant's wallet on `address` of `network`, if any (a merchant has at most one per address). */
export async function findMerchantWalletByAddress(db: Db | Trx, network: NetworkId, merchantId: string, address: string): Promise<Wallet | undefined> {
  const row = await db
    .selectFrom('wallets')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('network', '=', network)
    .where('address', '=', address)
    .executeTakeFirst();
  return row ? rowToWallet(row) : undefined;
}

/** Renames and/or archives (or restores) one of the merchant's wallets; undefined when it is not theirs. */
export async function updateWallet(
  db: Db,
  merchantId: string,
  id: string,
  change: { label?: string; archived?: boolean },
  now: number,
): Promise<Wallet | undefined> {
  const set: { label?: string; archived_at?: number | null | RawBuilder<number> } = {};
  if (change.label !== undefined) set.label = change.label;
  // Archiving an archived wallet keeps its first date.
  if (change.archived !== undefined) set.archived_at = change.archived ? sql<number>`coalesce(archived_at, ${now})` : null;
  if (Object.keys(set).length > 0) await db.updateTable('wallets').set(set).where('id', '=', id).where('merchant_id', '=', merchantId).execute();
  const row = await db.selectFrom('wallets').selectAll().where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? rowToWallet(row) : undefined;
}
