/**
 * Exact-amount allocation (decisions.md section 3). Runs inside the creation transaction
 * (BEGIN IMMEDIATE), so allocations are serialized; the primary key of amount_reservations is the
 * last line of defence against two invoices sharing a final amount on one address.
 *
 * Cost: a cursor per (network, contract, address, base price) remembers the smallest adjustment
 * never tried. Amounts below it are all used, and a used amount stays used (reservation rows are
 * never deleted), so each allocation does a few primary-key probes from the cursor on, whatever
 * the number of reservations. Amounts taken by other base prices are skipped once and for all.
 */
import type { Trx } from '../db/database.js';
import { toDbAmount } from '../lib/amounts.js';

export interface AmountTarget {
  network: string;
  tokenContract: string;
  address: string;
}

export type Allocation =
  | { kind: 'fresh'; adjustment: bigint }
  /** Every final amount of the range was used; this one's reservation expired longest ago. */
  | { kind: 'reuse'; adjustment: bigint }
  | { kind: 'exhausted' };

const PROBE_CHUNK = 512;

/** Picks the adjustment for `base` in [1, maxAdjustment] micro-units and advances the cursor. */
export async function chooseAmount(trx: Trx, target: AmountTarget, base: bigint, maxAdjustment: bigint, now: number): Promise<Allocation> {
  const key = { network: target.network, token_contract: target.tokenContract, address: target.address, base_amount: toDbAmount(base) };
  const cursor = await trx
    .selectFrom('amount_cursors')
    .select(['next_adjustment', 'reusable_from'])
    .where('network', '=', key.network)
    .where('token_contract', '=', key.token_contract)
    .where('address', '=', key.address)
    .where('base_amount', '=', key.base_amount)
    .executeTakeFirst();
  let adjustment = cursor ? BigInt(cursor.next_adjustment) : 1n;
  let found: bigint | undefined;
  // The used amounts from the cursor on, in ascending chunks: the first gap is the answer. Usually
  // the first chunk is empty at the cursor (one indexed probe); a long run of amounts taken by
  // other prices is crossed PROBE_CHUNK at a time and never again.
  while (found === undefined && adjustment <= maxAdjustment) {
    const used = await trx
      .selectFrom('amount_reservations')
      .select('amount')
      .where('network', '=', key.network)
      .where('token_contract', '=', key.token_contract)
      .where('address', '=', key.address)
      .where('amount', '>=', toDbAmount(base + adjustment))
      .where('amount', '<=', toDbAmount(base + maxAdjustment))
      .orderBy('amount')
      .limit(PROBE_CHUNK)
      .execute();
    for (const row of used) {
      if (BigInt(row.amount) !== base + adjustment) break;
      adjustment += 1n;
    }
    if (used.length < PROBE_CHUNK || BigInt(used[used.length - 1]!.amount) !== base + adjustment - 1n) {
      if (adjustment <= maxAdjustment) found = adjustment;
    }
  }
  // The cursor moves past the chosen amount (it is about to be reserved) or to the end of the range.
  const next = toDbAmount(found === undefined ? adjustment : found + 1n);
  if (!cursor || BigInt(cursor.next_adjustment) !== BigInt(next)) {
    await trx
      .insertInto('amount_cursors')
      .values({ ...key, next_adjustment: next })
      .onConflict((oc) => oc.columns(['network', 'token_contract', 'address', 'base_amount']).doUpdateSet({ next_adjustment: next }))
      .execute();
  }
  if (found !== undefined) return { kind: 'fresh', adjustment: found };

  // Range used up. Known to be fully reserved until `reusable_from`: answer without a scan.
  if (cursor && now < cursor.reusable_from) return { kind: 'exhausted' };
  // The reservation of the range that ends first (every reservation lasts the same 90 days, so it
  // is also the least recently reserved). The scan is bounded by the size of the adjustment range
  // (a primary-key range), never by all reservations of the address.
  const oldest = await trx
    .selectFrom('amount_reservations')
    .select(['amount', 'reserved_until'])
    .where('network', '=', key.network)
    .where('token_contract', '=', key.token_contract)
    .where('address', '=', key.address)
    .where('amount', '>=', toDbAmount(base + 1n))
    .where('amount', '<=', toDbAmount(base + maxAdjustment))
    .orderBy('reserved_until')
    .orderBy('amount')
    .limit(1)
    .executeTakeFirst();
  if (oldest && oldest.reserved_until <= now) return { kind: 'reuse', adjustment: BigInt(oldest.amount) - base };
  if (oldest) {
    await trx
      .updateTable('amount_cursors')
      .set({ reusable_from: oldest.reserved_until })
      .where('network', '=', key.network)
      .where('token_contract', '=', key.token_contract)
      .where('address', '=', key.address)
      .where('base_amount', '=', key.base_amount)
      .execute();
  }
  return { kind: 'exhausted' };
}

/** Records the reservation of a fresh amount; the primary key refuses a double allocation. */
export async function insertReservation(trx: Trx, target: AmountTarget, amount: bigint, invoiceId: string, now: number, until: number): Promise<void> {
  await trx
    .insertInto('amount_reservations')
    .values({ network: target.network, token_contract: target.tokenContract, address: target.address, amount: toDbAmount(amount), invoice_id: invoiceId, reserved_at: now, reserved_until: until })
    .execute();
}

/** Moves an expired reservation to a new invoice; false when it is not expired any more (guard). */
export async function takeOverReservation(trx: Trx, target: AmountTarget, amount: bigint, invoiceId: string, now: number, until: number): Promise<boolean> {
  const result = await trx
    .updateTable('amount_reservations')
    .set({ invoice_id: invoiceId, reserved_at: now, reserved_until: until })
    .where('network', '=', target.network)
    .where('token_contract', '=', target.tokenContract)
    .where('address', '=', target.address)
    .where('amount', '=', toDbAmount(amount))
    .where('reserved_until', '<=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
