/**
 * Exact-amount allocation (docs/payments.md, Amounts). Runs inside the creation transaction, where
 * allocations of one pool are serialized (SQLite: BEGIN IMMEDIATE; PostgreSQL: the claim of the
 * pool's cursor row, claimCursor); the primary key of amount_reservations is the last line of
 * defence against two invoices sharing a final amount on one address.
 *
 * Cost: a cursor per (network, contract, address, base price) remembers the smallest adjustment
 * never tried. Amounts below it are all used, and a used amount stays used (reservation rows are
 * never deleted), so each allocation does a few primary-key probes from the cursor on, whatever
 * the number of reservations. Amounts taken by other base prices are skipped once and for all.
 */
import { compileQuery, type BoundQuery, type Param } from '../db/compiled.js';
import type { Trx, Tx } from '../db/database.js';
import type { AmountReservationsTable } from '../db/schema.js';
import { micros, toDbAmount, type Micros } from '../lib/amounts.js';
import { chosenAlongside, claimedAlongside, RunAlone, sharedOnce, type CursorKey } from './allocation-batch.js';
import { unitsRunAtOnce } from './group-commit.js';

export interface AmountTarget {
  network: string;
  tokenContract: string;
  address: string;
}

export type Allocation =
  | { kind: 'fresh'; adjustment: Micros }
  /** Every final amount of the range was used; this one's reservation expired longest ago. */
  | { kind: 'reuse'; adjustment: Micros }
  | { kind: 'exhausted' };

const PROBE_CHUNK = 512;

type RangeKey = { network: string; token_contract: string; address: string; from: number; to: number };

/**
 * Claims the pool's cursor: creates it when missing (the next adjustment to try then 1) and moves it
 * one past the adjustment it held, returning the moved row. The write takes the row's lock for the
 * rest of the transaction on PostgreSQL (a concurrent claim waits, then sees the moved row), so
 * allocations of one pool are serialized across every instance; SQLite's BEGIN IMMEDIATE serializes
 * them already. One statement for what was a read, a read (the pool share) and, nearly always, a
 * write: the common allocation takes the cursor's own adjustment, and then the cursor is already
 * where it must end.
 *
 * chooseAmount's probe of used amounts stays a statement of its own, sent after the claim, though
 * PostgreSQL could return it with the claim (a sub-select in RETURNING, one round trip fewer): a
 * statement reads from the snapshot taken when it started, so a claim that waited for another
 * transaction's lock on the cursor would not see the amounts that transaction reserved through
 * other prices of the same address (fiat prices lie close together), and would pick a taken one
 * (test/invoices/allocation-instances.test.ts).
 */
const claimCursorQuery = compileQuery((db, p: Param<CursorKey>) =>
  db
    .insertInto('amount_cursors')
    .values({ network: p('network'), token_contract: p('token_contract'), address: p('address'), base_amount: p('base_amount'), next_adjustment: 2 })
    .onConflict((oc) =>
      oc
        .columns(['network', 'token_contract', 'address', 'base_amount'])
        .doUpdateSet((eb) => ({ next_adjustment: eb('amount_cursors.next_adjustment', '+', 1) })),
    )
    .returning(['next_adjustment', 'reusable_from']),
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

/** The pool of one base price on one address, claimed for this transaction (claimCursor). */
export interface ClaimedCursor {
  key: CursorKey;
  base: Micros;
  /** The smallest adjustment not known to be used: where the allocation starts. */
  from: bigint;
  /** What the row holds now (from + 1); chooseAmount writes it again only when it must end elsewhere. */
  stored: bigint;
  /** Until when the whole range is known to be reserved (0: not known). */
  reusableFrom: number;
  /**
   * Another unit of this transaction, running at once with this one (unitsRunAtOnce), claimed the
   * same cursor first: `from` then does not count the amounts that unit's choice crossed.
   */
  claimedAfterAnother: boolean;
}

/** Claims the cursor of `base` on the target (claimCursorQuery): call it once, before holdsPoolShare and chooseAmount. */
export async function claimCursor(tx: Tx, target: AmountTarget, base: Micros): Promise<ClaimedCursor> {
  const key: CursorKey = { network: target.network, token_contract: target.tokenContract, address: target.address, base_amount: toDbAmount(base) };
  const claimedAfterAnother = claimedAlongside(tx, key);
  const row = (await claimCursorQuery.first(tx, key))!;
  const stored = BigInt(row.next_adjustment);
  return { key, base, from: stored - 1n, stored, reusableFrom: row.reusable_from, claimedAfterAnother };
}

/**
 * Picks the adjustment for the claimed pool's base in [1, maxAdjustment] micro-units and leaves the
 * cursor past it. Compiled queries: call inside the caller's write transaction, after claimCursor.
 */
export async function chooseAmount(tx: Tx, cursor: ClaimedCursor, maxAdjustment: Micros, now: number): Promise<Allocation> {
  const { key, base } = cursor;
  const taken = chosenAlongside(tx, key);
  let adjustment = cursor.from;
  let found: bigint | undefined;
  // The used amounts from the cursor on, in ascending chunks: the first gap is the answer. Usually
  // the first chunk is empty at the cursor (one indexed probe); a long run of amounts taken by
  // other prices is crossed PROBE_CHUNK at a time and never again.
  while (found === undefined && adjustment <= maxAdjustment) {
    const used = await usedAmountsQuery.all(tx, { ...key, from: toDbAmount(base + adjustment), to: toDbAmount(base + maxAdjustment) });
    // A chunk shorter than PROBE_CHUNK holds every used amount up to the end of the range.
    const toTheEnd = used.length < PROBE_CHUNK;
    let i = 0;
    while (adjustment <= maxAdjustment) {
      const amount = base + adjustment;
      if (i < used.length && BigInt(used[i]!.amount) === amount) i += 1;
      else if (i === used.length && !toTheEnd) break;
      else if (!taken?.has(amount)) {
        found = adjustment;
        break;
      }
      adjustment += 1n;
    }
  }
  if (found !== undefined) taken?.add(base + found);
  // The cursor moves past the chosen amount (it is about to be reserved) or to the end of the range.
  const next = toDbAmount(found === undefined ? adjustment : found + 1n);
  if (cursor.stored !== BigInt(next)) await saveCursorQuery.run(tx, { ...key, next });
  if (found !== undefined) return { kind: 'fresh', adjustment: micros(found) };

  // Range used up. Known to be fully reserved until `reusable_from`: answer without a scan.
  if (now < cursor.reusableFrom) return { kind: 'exhausted' };
  // The reservation of the range that ends first (every reservation lasts the same 90 days, so it
  // is also the least recently reserved). The scan is bounded by the size of the adjustment range
  // (a primary-key range), never by all reservations of the address.
  const oldest = await oldestReservationQuery.first(tx, { ...key, from: toDbAmount(base + 1n), to: toDbAmount(base + maxAdjustment) });
  if (oldest && oldest.reserved_until <= now) return { kind: 'reuse', adjustment: micros(BigInt(oldest.amount) - base) };
  if (oldest) await reusableFromQuery.run(tx, { ...key, reusableFrom: oldest.reserved_until });
  return { kind: 'exhausted' };
}

const heldQuery = compileQuery((db, p: Param<RangeKey & { merchant_id: string; now: number; since: number; cap: number }>) =>
  db
    .selectFrom((eb) =>
      eb
        .selectFrom('amount_reservations as r')
        .innerJoin('invoices as i', 'i.id', 'r.invoice_id')
        .select('r.amount')
        .where((e) => e.and({ 'r.network': p('network'), 'r.token_contract': p('token_contract'), 'r.address': p('address') }))
        .where('r.amount', '>=', p('from'))
        .where('r.amount', '<=', p('to'))
        // A reservation ended early (an option released when another paid, or by the invoice's
        // expiry or cancel) still counts for its 90 days: its amount stays used (no fresh
        // allocation takes it), so the pool it took is no less taken.
        .where((e) => e.or([e('r.reserved_until', '>', p('now')), e('r.reserved_at', '>', p('since'))]))
        .where('i.merchant_id', '=', p('merchant_id'))
        .limit(p('cap'))
        .as('held'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n')),
);

/** How long an invoice's amount stays reserved (an option's ends earlier once released). */
export const RESERVATION_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * Whether `merchantId` already holds `cap` or more reservations of the claimed pool made in the last
 * RESERVATION_MS (live, or ended early when their option was released), when
 * `shared()` says the address has other registrants. Cheap unless the pool is at least `cap` used by
 * everyone together (its cursor says so); then one range scan of the pool's reservations, stopping
 * at `cap`.
 */
export async function holdsPoolShare(
  tx: Tx,
  cursor: ClaimedCursor,
  pool: { maxAdjustment: Micros; cap: bigint },
  merchantId: string,
  shared: () => Promise<boolean>,
  now: number,
): Promise<boolean> {
  const { maxAdjustment, cap } = pool;
  const { key, base } = cursor;
  // The shortcut trusts `from`: too low where another unit of a batch running at once claimed this
  // cursor first and has not yet moved it past the amounts its choice crossed.
  if (!cursor.claimedAfterAnother && cursor.from - 1n < cap) return false;
  if (!(await sharedOnce(tx, key, merchantId, shared))) return false;
  // Counted from the reservations written: those of other units of a batch running at once are not
  // yet. A shared address has such a batch run unit by unit (where the first claimant's `from` is exact).
  if (unitsRunAtOnce(tx)) throw new RunAlone('the pool share of a shared address');
  const held = await heldQuery.first(tx, {
    network: key.network,
    token_contract: key.token_contract,
    address: key.address,
    from: toDbAmount(base + 1n),
    to: toDbAmount(base + maxAdjustment),
    merchant_id: merchantId,
    now,
    since: now - RESERVATION_MS,
    cap: toDbAmount(cap),
  });
  return BigInt(held?.n ?? 0) >= cap;
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

/** The reservation of a fresh amount, to send with the invoice's other writes; the primary key refuses a double allocation. */
export function reservationInsert(target: AmountTarget, amount: Micros, invoiceId: string, now: number, until: number): BoundQuery<unknown> {
  return insertReservationQuery.with(reservationRow(target, amount, invoiceId, now, until));
}

function reservationRow(target: AmountTarget, amount: Micros, invoiceId: string, now: number, until: number): ReservationRow {
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
export async function takeOverReservation(tx: Tx, target: AmountTarget, amount: Micros, invoiceId: string, now: number, until: number): Promise<boolean> {
  return (await takeOverQuery.run(tx, reservationRow(target, amount, invoiceId, now, until))) === 1;
}

/**
 * Ends `invoiceId`'s reservation of `amount` on the target now (an option another option's payment,
 * the invoice's expiry or its cancel released). The row stays: the amount is still used, so no fresh
 * allocation takes it, but it is the first one reused (as a review invoice) once its prices' pools
 * are used up. Those pools' cursors forget when they were known to be fully reserved until
 * (reusable_from), since a reservation of theirs now ends earlier than they noted.
 */
export async function endReservation(trx: Trx, target: AmountTarget, amount: Micros, invoiceId: string, now: number, maxAdjustment: Micros): Promise<void> {
  const ended = await trx
    .updateTable('amount_reservations')
    .set({ reserved_until: now })
    .where('network', '=', target.network)
    .where('token_contract', '=', target.tokenContract)
    .where('address', '=', target.address)
    .where('amount', '=', toDbAmount(amount))
    .where('invoice_id', '=', invoiceId)
    .where('reserved_until', '>', now)
    .executeTakeFirst();
  if (ended.numUpdatedRows === 0n) return;
  await trx
    .updateTable('amount_cursors')
    .set({ reusable_from: 0 })
    .where('network', '=', target.network)
    .where('token_contract', '=', target.tokenContract)
    .where('address', '=', target.address)
    .where('base_amount', '>=', toDbAmount(amount > maxAdjustment ? amount - maxAdjustment : 0n))
    .where('base_amount', '<', toDbAmount(amount))
    .where('reusable_from', '>', now)
    .execute();
}
