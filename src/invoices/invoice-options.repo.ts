/**
 * The rows of invoice_options: the other networks and tokens an invoice offers (docs/payments.md,
 * "Invoices with several options"). The invoice row itself is option 0; these are positions 1 and
 * up, and position 0 once another option paid (released, keeping what option 0 asked).
 */
import { sql, type Selectable, type SqlBool } from 'kysely';
import { compileQuery, type BoundQuery, type Lookup, type Param } from '../db/compiled.js';
import type { Db, Trx } from '../db/database.js';
import type { InvoiceOptionsTable, InvoicesTable } from '../db/schema.js';
import { toDbAmount, type Micros } from '../lib/amounts.js';
import { endReservation, type AmountTarget } from './allocation.repo.js';
import { transition } from './invoice.states.js';
import { ownOption, rowToInvoice, rowToOption, type Invoice, type InvoiceOption } from './invoice.model.js';

const OPTION_COLUMNS = [
  'invoice_id',
  'position',
  'wallet_id',
  'network',
  'token',
  'token_contract',
  'wallet_address',
  'adjustment',
  'payable_amount',
  'status',
] as const;

// Every column, each bound by its own name.
const insertOptionQuery = compileQuery((db, p: Param<InvoiceOptionsTable>) =>
  db.insertInto('invoice_options').values(Object.fromEntries(OPTION_COLUMNS.map((c) => [c, p(c)])) as unknown as InvoiceOptionsTable),
);

/** The invoice columns of an option: what the invoice row takes when that option pays it. */
export function optionColumns(o: InvoiceOption) {
  return {
    wallet_id: o.walletId,
    network: o.network,
    token: o.token,
    token_contract: o.tokenContract,
    wallet_address: o.walletAddress,
    adjustment: toDbAmount(o.adjustment),
    payable_amount: toDbAmount(o.payableAmount),
  };
}

function optionRow(invoiceId: string, o: InvoiceOption): InvoiceOptionsTable {
  return { invoice_id: invoiceId, position: o.position, ...optionColumns(o), status: o.status };
}

/** The insert of one option of a new invoice, to send with its other writes (insertEvent's `alongside`). */
export function optionInsert(invoiceId: string, o: InvoiceOption): BoundQuery<unknown> {
  return insertOptionQuery.with(optionRow(invoiceId, o));
}

const optionsOfQuery = compileQuery((db, p: Param<{ invoiceId: string }>) =>
  db.selectFrom('invoice_options').select(OPTION_COLUMNS).where('invoice_id', '=', p('invoiceId')).orderBy('position'),
);

/** One invoice's stored options by position: a lookup (readTogether, or `.on(conn)`) for compiled paths. */
export function optionsLookup(invoiceId: string): Lookup<InvoiceOption[]> {
  return optionsOfQuery.lookup({ invoiceId }, (rows) => rows.map(rowToOption));
}

/** Ids per statement: far below either engine's limit on bound parameters. */
const IDS_PER_READ = 500;

/** The stored options of these invoices, by invoice id (absent: none). */
export async function loadOptions(db: Db | Trx, invoiceIds: readonly string[]): Promise<Map<string, InvoiceOption[]>> {
  const byInvoice = new Map<string, InvoiceOption[]>();
  const ids = [...new Set(invoiceIds)];
  for (let i = 0; i < ids.length; i += IDS_PER_READ) {
    const rows = await db
      .selectFrom('invoice_options')
      .select(OPTION_COLUMNS)
      .where('invoice_id', 'in', ids.slice(i, i + IDS_PER_READ))
      .execute();
    for (const row of rows) {
      const list = byInvoice.get(row.invoice_id) ?? [];
      list.push(rowToOption(row));
      byInvoice.set(row.invoice_id, list);
    }
  }
  return byInvoice;
}

/** Invoices of these rows, each with its stored options (one read for all of them). */
export async function withOptions(db: Db | Trx, rows: ReadonlyArray<Selectable<InvoicesTable>>): Promise<Invoice[]> {
  if (rows.length === 0) return [];
  const options = await loadOptions(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => rowToInvoice(r, options.get(r.id) ?? []));
}

/** The invoice of one row, with its stored options; undefined for no row. */
export async function withOptionsOne(db: Db | Trx, row: Selectable<InvoicesTable> | undefined): Promise<Invoice | undefined> {
  return row ? (await withOptions(db, [row]))[0] : undefined;
}

/**
 * Invoices with a stored option of exactly `amount` on the target that did not pay them (open, or
 * released: the one that paid is the invoice row now), newest first: through
 * invoice_options_payable_idx.
 */
export async function findOptionsByAmount(trx: Trx, target: AmountTarget, amount: Micros): Promise<Array<{ invoice: Invoice; option: InvoiceOption }>> {
  const rows = await trx
    .selectFrom('invoice_options')
    .select(['invoice_id', 'position'])
    .where('network', '=', target.network)
    .where('token_contract', '=', target.tokenContract)
    .where('wallet_address', '=', target.address)
    .where('payable_amount', '=', toDbAmount(amount))
    .where('status', 'in', ['open', 'released'])
    .execute();
  return pairWithInvoices(trx, rows);
}

/**
 * Unpaid invoices (pending, expired, review without a payment) with a stored option on the target
 * above `above` whose last six decimals are `digits` and whose window holds `at`: where a short
 * transfer may belong (partial-payments.ts). An option released by another option's payment has a
 * paid invoice, so it is never among them.
 */
export async function unpaidOptionsOnTarget(
  trx: Trx,
  target: AmountTarget,
  short: { above: Micros; digits: { modulus: bigint; value: bigint }; at: number },
): Promise<Array<{ invoice: Invoice; option: InvoiceOption }>> {
  const rows = await trx
    .selectFrom('invoice_options as o')
    .innerJoin('invoices as i', 'i.id', 'o.invoice_id')
    .select(['o.invoice_id', 'o.position'])
    .where('o.network', '=', target.network)
    .where('o.token_contract', '=', target.tokenContract)
    .where('o.wallet_address', '=', target.address)
    .where('o.payable_amount', '>', toDbAmount(short.above))
    .where(sql<SqlBool>`o.payable_amount % ${Number(short.digits.modulus)} = ${Number(short.digits.value)}`)
    .where('o.status', 'in', ['open', 'released'])
    .where('i.tx_hash', 'is', null)
    .where('i.status', 'in', [...transition('resolve').from])
    .where('i.created_at', '<=', short.at)
    .where('i.expires_at', '>=', short.at)
    .execute();
  return pairWithInvoices(trx, rows);
}

async function pairWithInvoices(
  trx: Trx,
  rows: ReadonlyArray<{ invoice_id: string; position: number }>,
): Promise<Array<{ invoice: Invoice; option: InvoiceOption }>> {
  if (rows.length === 0) return [];
  const invoiceRows = await trx
    .selectFrom('invoices')
    .selectAll()
    .where(
      'id',
      'in',
      rows.map((r) => r.invoice_id),
    )
    .execute();
  const invoices = new Map((await withOptions(trx, invoiceRows)).map((inv) => [inv.id, inv]));
  return rows
    .map((r) => {
      const invoice = invoices.get(r.invoice_id)!;
      return { invoice, option: invoice.options.find((o) => o.position === Number(r.position))! };
    })
    .sort((a, b) => b.invoice.createdAt - a.invoice.createdAt || (a.invoice.id < b.invoice.id ? -1 : 1));
}

async function setOptionStatus(trx: Trx, invoiceId: string, positions: readonly number[], status: InvoiceOption['status']): Promise<void> {
  if (positions.length === 0) return;
  await trx.updateTable('invoice_options').set({ status }).where('invoice_id', '=', invoiceId).where('position', 'in', positions).execute();
}

const targetOf = (o: InvoiceOption): AmountTarget => ({ network: o.network, tokenContract: o.tokenContract, address: o.walletAddress });

/**
 * After `inv` (as it was read, unpaid) was paid through `paid` (undefined: through the invoice row
 * itself, option 0): the paying option is marked paid, every other one released, and their amount
 * reservations end now. Paid through another option, the invoice row has just taken that option's
 * values: position 0 is stored, released, with what the row asked before.
 */
export async function settleOptions(trx: Trx, inv: Invoice, paid: InvoiceOption | undefined, now: number, maxAdjustment: Micros): Promise<void> {
  if (inv.options.length === 0) return;
  const released: InvoiceOption[] = [];
  if (paid !== undefined && paid.position !== 0) {
    const own = ownOption(inv, 'released');
    await trx.insertInto('invoice_options').values(optionRow(inv.id, own)).execute();
    released.push(own);
    await setOptionStatus(trx, inv.id, [paid.position], 'paid');
  }
  const others = inv.options.filter((o) => o.position !== 0 && o.position !== paid?.position);
  await setOptionStatus(
    trx,
    inv.id,
    others.filter((o) => o.status !== 'released').map((o) => o.position),
    'released',
  );
  released.push(...others);
  for (const o of released) await endReservation(trx, targetOf(o), o.payableAmount, inv.id, now, maxAdjustment);
}

/**
 * An unpaid invoice expired or was cancelled: its open options are released and their reservations
 * end now. The invoice's own amount (option 0) keeps its reservation, as every invoice's does. A
 * payment made in time on a released option still pays the invoice, as on its own amount.
 */
export async function releaseOpenOptions(trx: Trx, inv: Invoice, now: number, maxAdjustment: Micros): Promise<void> {
  const open = inv.options.filter((o) => o.status === 'open');
  await setOptionStatus(
    trx,
    inv.id,
    open.map((o) => o.position),
    'released',
  );
  for (const o of open) await endReservation(trx, targetOf(o), o.payableAmount, inv.id, now, maxAdjustment);
}
