/**
 * The invoice state changes that payments on the chain cause, owned by the invoices feature (the
 * chain feature finds verified transfers and calls these; it never touches the invoices table):
 * - an invoice of the transfer's amount whose window [created_at, expires_at] holds the block time
 *   is paid: pending -> confirmed; review -> review with tx_hash (the owner decides); expired (by
 *   the watcher, unpaid) -> confirmed, because a payment made in time and seen late still confirms
 *   (an expired review invoice goes back to review with the payment);
 * - otherwise the newest invoice of that amount created before the block: a late payment
 *   (invoice.late_payment);
 * - otherwise a transfer short of one open invoice within its merchant's tolerance: a partial
 *   payment of it (partial-payments.ts);
 * - otherwise, or for a zero amount: unmatched.
 * Every transfer recorded against an invoice adds to its amount_received.
 * Expiry: open, unpaid invoices whose whole window lies in scanned blocks.
 * Each function runs inside the caller's write transaction, with the events it emits.
 */
import { sql, type SqlBool } from 'kysely';
import type { Db, Trx, Tx } from '../db/database.js';
import type { ChainTransferKind, UnmatchedReason } from '../db/schema.js';
import { insertEvent } from '../events/events.repo.js';
import { toDbAmount, type Micros } from '../lib/amounts.js';
import { rowToInvoice, type Invoice } from './invoice.model.js';
import { toInvoiceResponse } from './invoices.schemas.js';
import { isOpen, openOfAmount } from './invoices.repo.js';
import { applyPartialPayment, findPartialMatch } from './partial-payments.js';
import { transition } from './invoice.states.js';

const pay = transition('pay');
const payInReview = transition('payInReview');
const expire = transition('expire');

export interface PaymentDeps {
  config: { server: { public_url: string } };
}

/** A verified transfer to an invoice address, as the invoices feature needs it. */
export interface ChainPayment {
  /** The network it was made on and the token contract that emitted it: an invoice asks for both. */
  network: string;
  tokenContract: string;
  to: string;
  /** Micro-units; when `inexact`, the micro-units below the value (it has digits below 10^-6). */
  amount: Micros;
  /** A value with digits below the micro-unit (an 18-decimal token): never an exact match, never rounded up. */
  inexact?: boolean;
  txHash: string;
  blockTimestamp: number;
  /** The `transaction` object of the event it causes. */
  transaction: Record<string, unknown>;
}

/** Invoices of this network and token on `address` whose payable amount is `amount` (several only after a 90-day reuse), newest first. */
async function findInvoicesByAmount(trx: Trx, p: Pick<ChainPayment, 'network' | 'tokenContract'>, address: string, amount: bigint): Promise<Invoice[]> {
  const rows = await trx
    .selectFrom('invoices')
    .selectAll()
    .where('network', '=', p.network)
    .where('token_contract', '=', p.tokenContract)
    .where('wallet_address', '=', address)
    .where('payable_amount', '=', toDbAmount(amount))
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(rowToInvoice);
}

async function findInvoiceById(trx: Trx, id: string): Promise<Invoice> {
  return rowToInvoice(await trx.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
}

/** pending (or watcher-expired, unpaid) -> confirmed, guarded: false when the invoice moved meanwhile. */
async function confirmInvoice(trx: Trx, id: string, txHash: string, now: number): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set((eb) => ({ status: pay.to, tx_hash: txHash, confirmed_at: now, amount_received: eb('amount_received', '+', eb.ref('payable_amount')) }))
    .where('id', '=', id)
    .where('status', 'in', [...pay.from])
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

/** A review invoice (or an expired one that was in review) is paid: record the transaction; the owner decides. */
async function markReviewPaid(trx: Trx, id: string, txHash: string): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set((eb) => ({ status: payInReview.to, tx_hash: txHash, amount_received: eb('amount_received', '+', eb.ref('payable_amount')) }))
    .where('id', '=', id)
    .where('status', 'in', [...payInReview.from])
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

function classify(candidates: Invoice[], p: ChainPayment): { kind: ChainTransferKind; invoice: Invoice | undefined } {
  if (p.amount <= 0n || p.inexact) return { kind: 'unmatched', invoice: undefined };
  const inWindow = candidates.find((inv) => inv.createdAt <= p.blockTimestamp && p.blockTimestamp <= inv.expiresAt);
  if (inWindow) {
    if (inWindow.txHash === null) {
      const reviewed = inWindow.status === 'review' || (inWindow.status === 'expired' && inWindow.amountReuseReview);
      if (reviewed) return { kind: 'review_paid', invoice: inWindow };
      if (inWindow.status === 'pending' || inWindow.status === 'expired') return { kind: 'confirmed', invoice: inWindow };
    }
    return { kind: 'late', invoice: inWindow };
  }
  const before = candidates.find((inv) => inv.createdAt <= p.blockTimestamp);
  if (before) return { kind: 'late', invoice: before };
  return { kind: 'unmatched', invoice: undefined };
}

/**
 * Applies one verified transfer to the invoices: moves the invoice it pays (with its event) and
 * says how the transfer is to be recorded. The moves are guarded; if one ever finds the invoice
 * moved, the money is still recorded against it as late.
 */
export async function applyChainPayment(
  deps: PaymentDeps,
  trx: Trx,
  tx: Tx,
  p: ChainPayment,
  now: number,
): Promise<{ kind: ChainTransferKind; invoiceId: string | null }> {
  const candidates = p.amount > 0n && !p.inexact ? await findInvoicesByAmount(trx, p, p.to, p.amount) : [];
  let { kind, invoice } = classify(candidates, p);
  if (kind === 'unmatched') {
    const partial = await findPartialMatch(trx, { id: p.network, usdtContract: p.tokenContract }, p);
    if (partial) return applyPartialPayment(deps.config.server.public_url, trx, tx, p, partial, now);
  }
  if (invoice && kind === 'confirmed' && !(await confirmInvoice(trx, invoice.id, p.txHash, now))) kind = 'late';
  if (invoice && kind === 'review_paid' && !(await markReviewPaid(trx, invoice.id, p.txHash))) kind = 'late';
  if (invoice && (kind === 'confirmed' || kind === 'review_paid')) {
    const updated = await findInvoiceById(trx, invoice.id);
    await insertEvent(
      tx,
      {
        merchantId: updated.merchantId,
        type: kind === 'confirmed' ? 'invoice.confirmed' : 'invoice.review',
        invoiceId: updated.id,
        data: { invoice: toInvoiceResponse(updated, deps.config.server.public_url), transaction: p.transaction },
      },
      now,
    );
  }
  if (invoice && kind === 'late') {
    await trx
      .updateTable('invoices')
      .set((eb) => ({ amount_received: eb('amount_received', '+', toDbAmount(p.amount)) }))
      .where('id', '=', invoice.id)
      .execute();
    const updated = await findInvoiceById(trx, invoice.id);
    await insertEvent(
      tx,
      {
        merchantId: updated.merchantId,
        type: 'invoice.late_payment',
        invoiceId: updated.id,
        data: { invoice: toInvoiceResponse(updated, deps.config.server.public_url), transaction: p.transaction },
      },
      now,
    );
  }
  return { kind, invoiceId: invoice?.id ?? null };
}

/**
 * Why an unmatched transfer (one that paid no invoice and relates to none) matched nothing, for the
 * merchant who looks for it: its value has digits below the micro-unit; or an open invoice of this
 * address with this amount waits on another network (`wrong_network`) or for another token of this
 * network (`other_token`); or none does. `elsewhere` lists the other (network, token contract) pairs
 * to look at (the enabled networks' pinned tokens).
 */
export async function unmatchedReason(
  trx: Trx,
  p: Pick<ChainPayment, 'network' | 'tokenContract' | 'to' | 'amount' | 'inexact'>,
  elsewhere: ReadonlyArray<{ network: string; tokenContract: string }>,
): Promise<UnmatchedReason> {
  if (p.inexact) return 'inexact_amount';
  if (p.amount <= 0n) return 'no_invoice';
  let reason: UnmatchedReason = 'no_invoice';
  for (const other of elsewhere) {
    if (other.network === p.network && other.tokenContract === p.tokenContract) continue;
    // One index range each (network, token contract, address, amount): the open invoices of that amount there.
    const row = await openOfAmount(trx, other, p.to, p.amount).limit(1).executeTakeFirst();
    if (!row) continue;
    if (other.network !== p.network) return 'wrong_network';
    reason = 'other_token';
  }
  return reason;
}

/** Block times not scanned yet: every unscanned block's time lies in one of these open intervals (ms). */
export interface Unscanned {
  /** Every block up to this time (ms, inclusive) is scanned, except in `gaps`. */
  scannedUntil: number;
  gaps: Array<{ after: number; before: number }>;
  /** The network whose scan this is: only its invoices expire (absent: every network's, as when TRON was the only one). */
  network?: string;
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

/**
 * pending (or unpaid review) -> expired, with invoice.expired, for every invoice whose whole window
 * has been scanned with no payment: its end is at or before `scannedUntil` and no unscanned range
 * meets its window. A paid review invoice waits for its owner and never expires here.
 */
export async function expireScanned(deps: PaymentDeps, trx: Trx, tx: Tx, unscanned: Unscanned, now: number): Promise<Invoice[]> {
  const rows = await expirableQuery(trx, unscanned.scannedUntil, now, unscanned.network).execute();
  const expired: Invoice[] = [];
  for (const row of rows) {
    const inv = rowToInvoice(row);
    if (unscanned.gaps.some((g) => g.after < inv.expiresAt && g.before > inv.createdAt)) continue;
    const r = await trx
      .updateTable('invoices')
      .set({ status: expire.to })
      .where('id', '=', inv.id)
      // isOpen is expire.from (OPEN_STATUSES) written as literals.
      .where(isOpen('status'))
      .where('tx_hash', 'is', null)
      .executeTakeFirst();
    if (r.numUpdatedRows !== 1n) continue;
    const updated: Invoice = { ...inv, status: expire.to };
    await insertEvent(
      tx,
      { merchantId: inv.merchantId, type: 'invoice.expired', invoiceId: inv.id, data: { invoice: toInvoiceResponse(updated, deps.config.server.public_url) } },
      now,
    );
    expired.push(updated);
  }
  return expired;
}

/** How many invoices are open on a network (in its USDT when usdtContract is given) and when the oldest and newest of them were created (null when none). */
export async function openInvoices(
  db: Db,
  network: { id: string; usdtContract?: string },
): Promise<{ count: number; oldestCreatedAt: number | null; newestCreatedAt: number | null }> {
  const row = await db
    .selectFrom('invoices')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest'), eb.fn.max('created_at').as('newest')])
    .where(isOpen('status'))
    .where('network', '=', network.id)
    .$if(network.usdtContract !== undefined, (q) => q.where('token_contract', '=', network.usdtContract!))
    .executeTakeFirstOrThrow();
  return {
    count: Number(row.n),
    oldestCreatedAt: row.oldest === null ? null : Number(row.oldest),
    newestCreatedAt: row.newest === null ? null : Number(row.newest),
  };
}

/** The addresses of open invoices (watched even if their wallet row is gone). */
export async function openInvoiceAddresses(db: Db, network: { id: string }): Promise<string[]> {
  const rows = await db.selectFrom('invoices').select('wallet_address').distinct().where(isOpen('status')).where('network', '=', network.id).execute();
  return rows.map((r) => r.wallet_address);
}

/**
 * The merchant's late payments, newest first (the Dashboard's list): walks the late transfers
 * newest first through their partial index and keeps the merchant's (CROSS JOIN keeps that order:
 * starting from the merchant's invoices read all of them, 90 ms at 1 000 000). Exported for the
 * query-plan test.
 */
export function merchantLatePaymentsQuery(db: Db, merchantId: string, limit = 100, minAmount = 0) {
  return db
    .selectFrom('chain_transfers as t')
    .crossJoin('invoices as i')
    .selectAll('t')
    .where(sql<SqlBool>`t.kind = 'late'`)
    .whereRef('i.id', '=', 't.invoice_id')
    .where('i.merchant_id', '=', merchantId)
    .where('t.amount', '>=', minAmount)
    .orderBy('t.block_timestamp', 'desc')
    .orderBy('t.id')
    .limit(limit);
}
