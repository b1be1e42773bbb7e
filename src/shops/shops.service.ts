/**
 * The rules of shop connections: at most 16 active per merchant, a short numeric pid, a shared key
 * shown once (created or rolled), deletion that stops the shop's orders and its pending callbacks.
 */
import { randomInt } from 'node:crypto';
import { writeTransaction } from '../db/database.js';
import type { ShopProtocol } from '../db/schema.js';
import { AppError, notFound } from '../lib/errors.js';
import { priceCurrencies, requireCurrency } from '../pricing/currencies.js';
import { findMerchantWallet } from '../wallets/wallets.repo.js';
import { cancelPendingNotifies } from './shop-notifies.repo.js';
import { countActiveConnections, deactivateConnection, findConnection, insertConnection, pidTaken, replaceSecret, type ShopConnection } from './shops.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'>;

export const MAX_ACTIVE_CONNECTIONS = 16;
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 32 letters and digits (about 190 bits): what Epay installs hand out, safe in every shop's settings form and in PHP strings. */
export const KEY_LENGTH = 32;

export function newShopKey(): string {
  let key = '';
  for (let i = 0; i < KEY_LENGTH; i++) key += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return key;
}

/** The currencies a connection may price in: USDT, plus the fiat currencies pricing is configured for. */
export function connectionCurrencies(deps: Pick<Deps, 'config'>): string[] {
  return priceCurrencies(deps.config.pricing.currencies);
}

export interface CreateConnectionInput {
  protocol: ShopProtocol;
  name: string;
  walletId: string;
  currency: string;
  allowHttpNotify: boolean;
}

export async function createConnection(deps: Deps, merchantId: string, input: CreateConnectionInput): Promise<{ connection: ShopConnection; key: string }> {
  requireCurrency(input.currency, connectionCurrencies(deps));
  const key = newShopKey();
  const connection = await writeTransaction(deps.db, async (trx, tx) => {
    const wallet = await findMerchantWallet(tx, merchantId, input.walletId);
    if (!wallet) throw notFound('Wallet');
    if (wallet.archivedAt !== null) {
      throw new AppError('wallet_archived', 'This wallet is archived and takes no new invoices; restore it or use another wallet', [
        { path: 'wallet_id', message: 'archived' },
      ]);
    }
    if ((await countActiveConnections(trx, merchantId)) >= MAX_ACTIVE_CONNECTIONS) {
      throw new AppError('shop_connection_limit_reached', `At most ${MAX_ACTIVE_CONNECTIONS} active shop connections per account; delete one first`);
    }
    let pid = randomInt(100_000, 1_000_000);
    while (await pidTaken(trx, pid)) pid = randomInt(100_000, 1_000_000);
    return insertConnection(trx, { merchantId, ...input, pid, secret: key }, deps.clock.now());
  });
  deps.log.info({ merchant_id: merchantId, shop_connection_id: connection.id, protocol: connection.protocol, pid: connection.pid }, 'shop connected');
  return { connection, key };
}

/** Deactivates the connection: its shop can create nothing more and its pending callbacks are cancelled. Deleting again is a no-op. */
export async function deleteConnection(deps: Deps, merchantId: string, id: string): Promise<void> {
  const cancelled = await writeTransaction(deps.db, async (trx) => {
    const connection = await findConnection(trx, merchantId, id);
    if (!connection) throw notFound('Shop connection');
    const now = deps.clock.now();
    if (!(await deactivateConnection(trx, connection.id, now))) return 0;
    return cancelPendingNotifies(trx, connection.id, now);
  });
  deps.log.info({ merchant_id: merchantId, shop_connection_id: id, cancelled }, 'shop disconnected');
}

/** A new key for an active connection; the old one stops working at once. */
export async function rollConnectionKey(deps: Deps, merchantId: string, id: string): Promise<{ connection: ShopConnection; key: string }> {
  const key = newShopKey();
  const connection = await writeTransaction(deps.db, async (trx) => {
    const found = await findConnection(trx, merchantId, id);
    if (!found) throw notFound('Shop connection');
    if (!(await replaceSecret(trx, found.id, key, deps.clock.now()))) throw notFound('Shop connection');
    return (await findConnection(trx, merchantId, id))!;
  });
  deps.log.info({ merchant_id: merchantId, shop_connection_id: id }, 'shop key rolled');
  return { connection, key };
}
