/** Receiving wallets. Several merchants may register one address; each gets its own wallet row. */
import { sql, type RawBuilder, type Selectable } from 'kysely';
import { compileQuery, type Lookup, type Param } from '../db/compiled.js';
import { writeTransaction, type Conn, type Db, type Trx } from '../db/database.js';
import type { WalletsTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import type { NetworkId } from '../chains/networks.js';

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
 * Registers an address for a merchant on `networks` (the first is the wallet's own network; an EVM
 * address may list several EVM networks, once). `created` is false when this merchant already had
 * the address, on whichever networks (an address belongs to one family, and a merchant has one
 * wallet per address): that wallet, label and networks unchanged, is returned. Writes are
 * serialized (writeTransaction), and the unique index settles anything else.
 */
export async function registerWallet(
  db: Db,
  networks: readonly NetworkId[] | NetworkId,
  merchantId: string,
  label: string,
  address: string,
  now: number,
): Promise<{ wallet: Wallet; created: boolean }> {
  const list = typeof networks === 'string' ? [networks] : [...new Set(networks)];
  const first = list[0]!;
  const id = newId('wal');
  return writeTransaction(db, async (trx) => {
    const existing = await findMerchantWalletOfAddress(trx, merchantId, address);
    if (existing) return { wallet: existing, created: false };
    const inserted = await trx
      .insertInto('wallets')
      .values({ id, merchant_id: merchantId, label, address, network: first, created_at: now, archived_at: null })
      .onConflict((oc) => oc.columns(['merchant_id', 'network', 'address']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted !== undefined) {
      await trx
        .insertInto('wallet_networks')
        .values(list.map((network) => ({ wallet_id: id, network, address })))
        .execute();
    }
    // The row inserted now, or the one this merchant already had (the insert did nothing).
    const wallet = (await findMerchantWalletByAddress(trx, first, merchantId, address))!;
    return { wallet, created: wallet.id === id };
  });
}

/** This merchant's wallet of `address` on any network (the oldest, should there be two), if any. */
export async function findMerchantWalletOfAddress(db: Db | Trx, merchantId: string, address: string): Promise<Wallet | undefined> {
  const row = await db
    .selectFrom('wallets')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('address', '=', address)
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst();
  return row ? rowToWallet(row) : undefined;
}

/** The networks a wallet receives on, its own (first) network first, then the others by name. */
export async function listWalletNetworks(db: Db | Trx, walletId: string): Promise<NetworkId[]> {
  const rows = await db
    .selectFrom('wallet_networks')
    .innerJoin('wallets', 'wallets.id', 'wallet_networks.wallet_id')
    .select(['wallet_networks.network', 'wallets.network as first'])
    .where('wallet_networks.wallet_id', '=', walletId)
    .orderBy('wallet_networks.network')
    .execute();
  return ownFirst(
    rows[0]?.first ?? '',
    rows.map((r) => r.network as NetworkId),
  );
}

/**
 * Replaces the networks a wallet receives on (the first becomes its own network). Undefined when
 * the wallet is not this merchant's. The caller has checked that each network fits the address;
 * `beforeRemoving`, given the networks about to go, may refuse (throw) inside the same
 * transaction, so nothing that needs them slips in between its check and the change.
 */
export async function setWalletNetworks(
  db: Db,
  merchantId: string,
  walletId: string,
  networks: readonly NetworkId[],
  beforeRemoving?: (trx: Trx, removed: NetworkId[]) => Promise<void>,
): Promise<Wallet | undefined> {
  const list = [...new Set(networks)];
  return writeTransaction(db, async (trx) => {
    const row = await trx.selectFrom('wallets').selectAll().where('id', '=', walletId).where('merchant_id', '=', merchantId).executeTakeFirst();
    if (!row || list.length === 0) return row ? rowToWallet(row) : undefined;
    const removed = (await listWalletNetworks(trx, walletId)).filter((n) => !list.includes(n));
    if (removed.length > 0 && beforeRemoving) await beforeRemoving(trx, removed);
    await trx.deleteFrom('wallet_networks').where('wallet_id', '=', walletId).execute();
    await trx
      .insertInto('wallet_networks')
      .values(list.map((network) => ({ wallet_id: walletId, network, address: row.address })))
      .execute();
    if (row.network !== list[0]) await trx.updateTable('wallets').set({ network: list[0]! }).where('id', '=', walletId).execute();
    return rowToWallet({ ...row, network: list[0]! });
  });
}

/** Every address some wallet receives on `network` (archived wallets too: they are still watched). */
export async function listNetworkAddresses(db: Db | Trx, network: string): Promise<string[]> {
  const rows = await db.selectFrom('wallet_networks').select('address').distinct().where('network', '=', network).execute();
  return rows.map((r) => r.address);
}

/** This merchant's wallets that receive on `network` and take new invoices (not archived), newest first. */
export async function listMerchantWalletsOn(db: Db | Trx, merchantId: string, network: string): Promise<Wallet[]> {
  const rows = await db
    .selectFrom('wallets')
    .innerJoin('wallet_networks', 'wallet_networks.wallet_id', 'wallets.id')
    .selectAll('wallets')
    .where('wallets.merchant_id', '=', merchantId)
    .where('wallet_networks.network', '=', network)
    .where('wallets.archived_at', 'is', null)
    .orderBy('wallets.created_at', 'desc')
    .orderBy('wallets.id')
    .execute();
  return rows.map(rowToWallet);
}

const walletNetworksQuery = compileQuery((db, p: Param<{ merchantId: string; walletId: string }>) =>
  db
    .selectFrom('wallet_networks')
    .innerJoin('wallets', 'wallets.id', 'wallet_networks.wallet_id')
    .select('wallet_networks.network')
    .where('wallets.id', '=', p('walletId'))
    .where('wallets.merchant_id', '=', p('merchantId')),
);

/** The networks this merchant's wallet receives on (none for another merchant's): a lookup for compiled paths (invoice creation). */
export function walletNetworksLookup(merchantId: string, walletId: string): Lookup<string[]> {
  return walletNetworksQuery.lookup({ merchantId, walletId }, (rows) => rows.map((r) => r.network));
}

const newestWalletOnQuery = compileQuery((db, p: Param<{ merchantId: string; network: string }>) =>
  db
    .selectFrom('wallets')
    .innerJoin('wallet_networks', 'wallet_networks.wallet_id', 'wallets.id')
    .select(['wallets.id', 'wallets.merchant_id', 'wallets.label', 'wallets.address', 'wallets.network', 'wallets.created_at', 'wallets.archived_at'])
    .where('wallets.merchant_id', '=', p('merchantId'))
    .where('wallet_networks.network', '=', p('network'))
    .where('wallets.archived_at', 'is', null)
    .orderBy('wallets.created_at', 'desc')
    .orderBy('wallets.id')
    .limit(1),
);

/** listMerchantWalletsOn's first (newest) wallet, as a lookup for compiled paths (invoice creation). */
export function newestWalletOnLookup(merchantId: string, network: string): Lookup<Wallet | undefined> {
  return newestWalletOnQuery.lookup({ merchantId, network }, (rows) => (rows[0] ? rowToWallet(rows[0]) : undefined));
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
    .selectFrom('wallet_networks')
    .innerJoin('wallets', 'wallets.id', 'wallet_networks.wallet_id')
    .select('wallets.id')
    .where('wallet_networks.network', '=', p('network'))
    .where('wallet_networks.address', '=', p('address'))
    .where('wallets.merchant_id', '!=', p('merchantId'))
    .limit(1),
);

/**
 * Whether another merchant registered `address` too on `network` (archived wallets count): on any
 * network their wallet receives on, not only its first. Compiled query.
 */
export async function addressHasOtherOwner(conn: Conn, network: string, address: string, merchantId: string): Promise<boolean> {
  return (await otherOwnerQuery.first(conn, { network, address, merchantId })) !== undefined;
}

/** A wallet with the networks it receives on, its own network first. */
export interface WalletWithNetworks extends Wallet {
  networks: NetworkId[];
}

/** The merchant's wallets, newest first, each with its networks (its own first, then the others by name). */
export async function listMerchantWallets(db: Db, merchantId: string): Promise<WalletWithNetworks[]> {
  const [rows, networkRows] = await Promise.all([
    db.selectFrom('wallets').selectAll().where('merchant_id', '=', merchantId).orderBy('created_at', 'desc').orderBy('id').execute(),
    db
      .selectFrom('wallet_networks')
      .innerJoin('wallets', 'wallets.id', 'wallet_networks.wallet_id')
      .select(['wallet_networks.wallet_id', 'wallet_networks.network'])
      .where('wallets.merchant_id', '=', merchantId)
      .orderBy('wallet_networks.network')
      .execute(),
  ]);
  const byWallet = new Map<string, NetworkId[]>();
  for (const r of networkRows) byWallet.set(r.wallet_id, [...(byWallet.get(r.wallet_id) ?? []), r.network as NetworkId]);
  return rows.map((row) => {
    const wallet = rowToWallet(row);
    return { ...wallet, networks: ownFirst(wallet.network, byWallet.get(wallet.id) ?? []) };
  });
}

/** The wallet's own network first, then the others in the order given. */
function ownFirst(own: string, networks: readonly NetworkId[]): NetworkId[] {
  return [...networks.filter((n) => n === own), ...networks.filter((n) => n !== own)];
}
/** Every merchant with a wallet on `address` of `network` (archived wallets too): who owns money sent there. */
export async function listAddressOwners(db: Db | Trx, network: NetworkId, address: string): Promise<string[]> {
  const rows = await db
    .selectFrom('wallets')
    .innerJoin('wallet_networks', 'wallet_networks.wallet_id', 'wallets.id')
    .select('wallets.merchant_id')
    .distinct()
    .where('wallet_networks.network', '=', network)
    .where('wallet_networks.address', '=', address)
    .execute();
  return rows.map((r) => r.merchant_id);
}

/**
 * This merchant's wallet receiving on `network` at `address` (any network it receives on, not only
 * its first), if any (a merchant has at most one per address).
 */
export async function findMerchantWalletByAddress(db: Db | Trx, network: NetworkId, merchantId: string, address: string): Promise<Wallet | undefined> {
  const row = await db
    .selectFrom('wallets')
    .innerJoin('wallet_networks', 'wallet_networks.wallet_id', 'wallets.id')
    .selectAll('wallets')
    .where('wallets.merchant_id', '=', merchantId)
    .where('wallet_networks.network', '=', network)
    .where('wallet_networks.address', '=', address)
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
