/**
 * The price pools filling up on a merchant's wallet addresses (the console's Overview and wallet
 * list): a read of the allocation cursors (invoices) by the wallets and their networks (wallets).
 * Reads only.
 */
import type { Db } from '../db/database.js';
import { fromDbAmount, toDbAmount, type Micros } from '../lib/amounts.js';

/** A price whose pool of payable amounts on one of the merchant's wallets is largely used. */
export interface FillingPool {
  walletId: string;
  walletLabel: string;
  address: string;
  network: string;
  tokenContract: string;
  baseAmount: Micros;
  /** Adjustments of the range used so far (by any merchant sharing the address, or by other prices). */
  used: bigint;
  size: bigint;
  /** Other accounts with a wallet on the same address. */
  sharedWith: number;
}

/** Pools more than this full are shown to the merchant (the console Overview and wallet list). */
export const POOL_WARNING_SHARE = { numerator: 1n, denominator: 2n };

/**
 * The pools on this merchant's wallet addresses that are more than POOL_WARNING_SHARE used, fullest
 * first, on every network each wallet receives on (wallet_networks, not only its first network)
 * and every token. Read from the allocation cursors (one row per address and price: the cursor is
 * the smallest adjustment never tried, so everything below it is used), not from the reservations:
 * a few indexed rows whatever the number of invoices. A pool past its end stays listed: its amounts
 * come back only as `review` invoices once their 90-day reservations end.
 */
export async function findFillingPools(db: Db, merchantId: string, maxAdjustment: Micros, limit = 10): Promise<FillingPool[]> {
  const threshold = (maxAdjustment * POOL_WARNING_SHARE.numerator) / POOL_WARNING_SHARE.denominator;
  const rows = await db
    .selectFrom('wallets as w')
    .innerJoin('wallet_networks as wn', 'wn.wallet_id', 'w.id')
    .innerJoin('amount_cursors as c', (j) => j.onRef('c.address', '=', 'wn.address').onRef('c.network', '=', 'wn.network'))
    .select(['w.id', 'w.label', 'wn.address', 'wn.network', 'c.token_contract', 'c.base_amount', 'c.next_adjustment'])
    .select((eb) =>
      eb
        .selectFrom('wallet_networks as ow')
        .innerJoin('wallets as o', 'o.id', 'ow.wallet_id')
        .select((e) => e.fn.count<number>('o.merchant_id').distinct().as('n'))
        .whereRef('ow.address', '=', 'wn.address')
        .whereRef('ow.network', '=', 'wn.network')
        .where('o.merchant_id', '!=', merchantId)
        .as('shared_with'),
    )
    .where('w.merchant_id', '=', merchantId)
    .where('c.next_adjustment', '>', toDbAmount(threshold + 1n))
    .orderBy('c.next_adjustment', 'desc')
    .orderBy('w.label')
    .orderBy('wn.network')
    .limit(limit)
    .execute();
  return rows.map((r) => {
    const used = BigInt(r.next_adjustment) - 1n;
    return {
      walletId: r.id,
      walletLabel: r.label,
      address: r.address,
      network: r.network,
      tokenContract: r.token_contract,
      baseAmount: fromDbAmount(r.base_amount),
      used: used > maxAdjustment ? maxAdjustment : used,
      size: maxAdjustment,
      sharedWith: Number(r.shared_with ?? 0),
    };
  });
}
