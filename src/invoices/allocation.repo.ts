/**
 * Exact-amount allocation (docs/payments.md, Amounts). Runs inside the creation transaction
 * (BEGIN IMMEDIATE), so allocations are serialized; the primary key of amount_reservations is the
 * last line of defence against two invoices sharing a final amount on one address.
 *
 * Cost: a cursor per (network, contract, address, base price) remembers the smallest adjustment
 * never tried. Amounts below it are all used, and a used amount stays used (reservation rows are
 * never deleted), so each allocation does a few primary-key probes from the cursor on, whatever
 * the number of reservations. Amounts taken by other base prices are skipped once and for all.
 */
import { compileQuery, type Param } from '../db/compiled.js';
import type { TxSqlite } from '../db/database.js';
import type { AmountReservationsTable } from '../db/schema.js';
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

type CursorKey = { network: string; token_contract: string; address: string; base_amount: number };
type RangeKey = { network: string; token_contract: string; address: string; from: number; to: number };

const cursorQuery = compileQuery((db, p: Param<CursorKey>) =>
  db
    .selectFrom('amount_cursors')
    .select(['next_adjustment', 'reusable_from'])
    .where((eb) => eb.and({ network: p('network'), token_contract: p('token_contract'), address: p('address'), base_amount: p('base_amount') })),
);

/** The used amounts in [from, to], ascending, at most PROBE_CHUNK. */
const usedAmountsQuery = compileQuery((db, p: Param<RangeKey>) =>
  db
    .selectFrom('amount_reservations')
    .select('amount')
    .where((eb) => eb.and({ network: p('network'), token_contract: p('token_contract'), address: p('address') }))
    .where('amount', '>=', p('from'))
    .where('amount', '<=', p('to'))
    .orderBy('amount')
    .limit(PROBE_CHUNK),
);

const saveCursorQuery = compileQuery((db, p: Param<CursorKey & { next: number }>) =>
  db
    .insertInto('amount_cursors')
    .values({ network: p('network'), token_contract: p('token_contract'), address: p('address'), base_amount: p('base_amount'), next_adjustment: p('next') })
    .onConflict((oc) => oc.columns(['network', 'token_contract', 'address', 'base_amount']).doUpdateSet({ next_adjustment: p('next') })),
);

/** The reservation of the range that ends first (ties: the smallest amount). */
const oldestReservationQuery = compileQuery((db, p: Param<RangeKey>) =>
  db
    .selectFrom('amount_reservations')
    .select(['amount', 'reserved_until'])
    .where((eb) => eb.and({ network: p('network'), token_contract: p('token_contract'), address: p('address') }))
    .where('amount', '>=', p('from'))
    .where('amount', '<=', p('to'))
    .orderBy('reserved_until')
    .orderBy('amount')
    .limit(1),
);

const reusableFromQuery = compileQuery((db, p: Param<CursorKey & { reusableFrom: number }>) =>
  db
    .updateTable('amount_cursors')
    .set({ reusable_from: p('reusableFrom') })
    .where((eb) => eb.and({ network: p('network'), token_contract: p('token_contract'), address: p('address'), base_amount: p('base_amount') })),
);

/**
 * Picks the adjustment for `base` in [1, maxAdjustment] micro-units and advances the cursor.
 * Synchronous (compiled queries): call inside the caller's immediate transaction.
 */
export function chooseAmount(tx: TxSqlite, target: AmountTarget, base: bigint, maxAdjustment: bigint, now: number): Allocation {
  const key: CursorKey = { network: target.network, token_contract: target.tokenContract, address: target.address, base_amount: toDbAmount(base) };
  const cursor = cursorQuery.first(tx, key);
  let adjustment = cursor ? BigInt(cursor.next_adjustment) : 1n;
  let found: bigint | undefined;
  // The used amounts from the cursor on, in ascending chunks: the first gap is the answer. Usually
  // the first chunk is empty at the cursor (one indexed probe); a long run of amounts taken by
  // other prices is crossed PROBE_CHUNK at a time and never again.
  while (found === undefined && adjustment <= maxAdjustment) {
    const used = usedAmountsQuery.all(tx, { ...key, from: toDbAmount(base + adjustment), to: toDbAmount(base + maxAdjustment) });
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
  if (!cursor || BigInt(cursor.next_adjustment) !== BigInt(next)) saveCursorQuery.run(tx, { ...key, next });
  if (found !== undefined) return { kind: 'fresh', adjustment: found };

  // Range used up. Known to be fully reserved until `reusable_from`: answer without a scan.
  if (cursor && now < cursor.reusable_from) return { kind: 'exhausted' };
  // The reservation of the range that ends first (every reservation lasts the same 90 days, so it
  // is also the least recently reserved). The scan is bounded by the size of the adjustment range
  // (a primary-key range), never by all reservations of the address.
  const oldest = oldestReservationQuery.first(tx, { ...key, from: toDbAmount(base + 1n), to: toDbAmount(base + maxAdjustment) });
  if (oldest && oldest.reserved_until <= now) return { kind: 'reuse', adjustment: BigInt(oldest.amount) - base };
  if (oldest) reusableFromQuery.run(tx, { ...key, reusableFrom: oldest.reserved_until });
  return { kind: 'exhausted' };
}

/** One row of amount_reservations, every column given. */
type ReservationRow = AmountReservationsTable;

const insertReservationQuery = compileQuery((db, p: Param<ReservationRow>) =>
  db.insertInto('amount_reservations').values({
    network: p('network'),
    token_contract: p('token_contract'),
    address: p('address'),
    amount: p('amount'),
    invoice_id: p('invoice_id'),
    reserved_at: p('reserved_at'),
    reserved_until: p('reserved_until'),
  }),
);

/** Records the reservation of a fresh amount; the primary key refuses a double allocation. */
export function insertReservation(tx: TxSqlite, target: AmountTarget, amount: bigint, invoiceId: string, now: number, until: number): void {
  insertReservationQuery.run(tx, reservationRow(target, amount, invoiceId, now, until));
}

function reservationRow(target: AmountTarget, amount: bigint, invoiceId: string, now: number, until: number): ReservationRow {
  return {
    network: target.network,
    token_contract: target.tokenContract,
    address: target.address,
    amount: toDbAmount(amount),
    invoice_id: invoiceId,
    reserved_at: now,
    reserved_until: until,
  };
}

const takeOverQuery = compileQuery((db, p: Param<ReservationRow>) =>
  db
    .updateTable('amount_reservations')
    .set({ invoice_id: p('invoice_id'), reserved_at: p('reserved_at'), reserved_until: p('reserved_until') })
    .where('network', '=', p('network'))
    .where('token_contract', '=', p('token_contract'))
    .where('address', '=', p('address'))
    .where('amount', '=', p('amount'))
    // reserved_at is now: only a reservation that has run out moves.
    .where('reserved_until', '<=', p('reserved_at')),
);

/** Moves an expired reservation to a new invoice; false when it is not expired any more (guard). */
export function takeOverReservation(tx: TxSqlite, target: AmountTarget, amount: bigint, invoiceId: string, now: number, until: number): boolean {
  return takeOverQuery.run(tx, reservationRow(target, amount, invoiceId, now, until)) === 1;
}
