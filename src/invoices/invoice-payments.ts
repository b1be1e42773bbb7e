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
 * Expiry (open, unpaid invoices whose whole window lies in scanned blocks) is invoice-expiry.ts.
 * Each function runs inside the caller's write transaction, with the events it emits.
 */
import { sql, type SqlBool } from 'kysely';
import type { Db, Trx, Tx } from '../db/database.js';
import type { ChainTransferKind, UnmatchedReason } from '../db/schema.js';
import { insertEvent } from '../events/events.repo.js';
import { findNetwork, tokenByContract, type NetworkId } from '../chains/networks.js';
import { toChecksumAddress } from '../chains/evm/address.js';
import { parseAmount, toDbAmount, type Micros } from '../lib/amounts.js';
import type { AmountTarget } from './allocation.repo.js';
import { findOptionsByAmount, optionColumns, settleOptions, withOptions, withOptionsOne } from './invoice-options.repo.js';
import type { Invoice, InvoiceOption } from './invoice.model.js';
import { paymentEventData } from './invoices.schemas.js';
import { isOpen, openOfAmount } from './invoices.repo.js';
import { applyPartialPayment, findPartialMatch } from './partial-payments.js';
import { preferReferenced } from './reference-match.js';
import { transition } from './invoice.states.js';

const pay = transition('pay');
const payInReview = transition('payInReview');

export interface PaymentDeps {
  config: { server: { public_url: string }; invoices: { max_adjustment: string } };
}

/** A verified transfer to an invoice address, as the invoices feature needs it. */
export interface ChainPayment {
  /** The network it was made on. */
  network: NetworkId;
  /** The pinned token contract it moved (the registry's spelling; an EVM one in any case). */
  tokenContract: string;
  /** The recipient (base58 on TRON; an EVM address in any case, matched in its EIP-55 form). */
  to: string;
  /** Micro-units; when `inexact`, the micro-units below the value (it has digits below 10^-6). */
  amount: Micros;
  /** A value with digits below the micro-unit (an 18-decimal token): never an exact match, never rounded up. */
  inexact?: boolean;
  txHash: string;
  blockTimestamp: number;
  /** The `transaction` object of the event it causes. */
  transaction: Record<string, unknown>;
  /**
   * What the payer's wallet put in the payment to name it (a TON comment; Solana Pay reference keys):
   * among invoices of the amount, the one whose option carries it is preferred. Never a match alone.
   */
  references?: readonly string[];
}

/** An invoice and the option of it a transfer pays (undefined: the invoice row itself). */
interface Candidate {
  invoice: Invoice;
  option: InvoiceOption | undefined;
}

/**
 * Where the payment arrived, in the spelling invoices and options are stored in: an EVM address
 * and contract in EIP-55 (a provider may answer in lower case), the contract as the registry pins it.
 */
function targetOf(p: ChainPayment): AmountTarget {
  const network = findNetwork(p.network);
  if (network?.family !== 'evm') return { network: p.network, tokenContract: p.tokenContract, address: p.to };
  return { network: p.network, tokenContract: tokenByContract(network, p.tokenContract)?.contract ?? p.tokenContract, address: toChecksumAddress(p.to) };
}

/**
 * Invoices asking `amount` on the target (several only after a 90-day reuse), newest first: by
 * their own row (option 0 while unpaid, the paying option once paid), or by another option of
 * theirs that did not pay them (open, or released).
 */
async function findCandidates(trx: Trx, target: AmountTarget, amount: bigint): Promise<Candidate[]> {
  const rows = await trx
    .selectFrom('invoices')
    .selectAll()
    .where('network', '=', target.network)
    .where('token_contract', '=', target.tokenContract)
    .where('wallet_address', '=', target.address)
    .where('payable_amount', '=', toDbAmount(amount))
    .orderBy('created_at', 'desc')
    .execute();
  const own: Candidate[] = (await withOptions(trx, rows)).map((invoice) => ({ invoice, option: undefined }));
  const options = await findOptionsByAmount(trx, target, amount as Micros);
  if (options.length === 0) return own;
  return [...own, ...options].sort((a, b) => b.invoice.createdAt - a.invoice.createdAt);
}

async function findInvoiceById(trx: Trx, id: string): Promise<Invoice> {
  return (await withOptionsOne(trx, await trx.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirstOrThrow()))!;
}

/** pending (or watcher-expired, unpaid) -> confirmed, guarded: false when the invoice moved meanwhile. */
async function confirmInvoice(trx: Trx, id: string, txHash: string, now: number, through: InvoiceOption | undefined): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set((eb) => ({
      // Paid through another option: the row takes that option's network, token, wallet and amounts.
      ...(through !== undefined ? optionColumns(through) : {}),
      status: pay.to,
      tx_hash: txHash,
      confirmed_at: now,
      amount_received: eb('amount_received', '+', through !== undefined ? toDbAmount(through.payableAmount) : eb.ref('payable_amount')),
    }))
    .where('id', '=', id)
    .where('status', 'in', [...pay.from])
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

/** A review invoice (or an expired one that was in review) is paid: record the transaction; the owner decides. */
async function markReviewPaid(trx: Trx, id: string, txHash: string, through: InvoiceOption | undefined): Promise<boolean> {
  const r = await trx
    .updateTable('invoices')
    .set((eb) => ({
      ...(through !== undefined ? optionColumns(through) : {}),
      status: payInReview.to,
      tx_hash: txHash,
      amount_received: eb('amount_received', '+', through !== undefined ? toDbAmount(through.payableAmount) : eb.ref('payable_amount')),
    }))
    .where('id', '=', id)
    .where('status', 'in', [...payInReview.from])
    .where('tx_hash', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

function classify(all: Candidate[], p: ChainPayment): { kind: ChainTransferKind; candidate: Candidate | undefined } {
  if (p.amount <= 0n || p.inexact) return { kind: 'unmatched', candidate: undefined };
  const candidates = preferReferenced(all, p.network, p.references);
  const inWindow = candidates.find(({ invoice: inv }) => inv.createdAt <= p.blockTimestamp && p.blockTimestamp <= inv.expiresAt);
  if (inWindow) {
    const inv = inWindow.invoice;
    if (inv.txHash === null) {
      const reviewed = inv.status === 'review' || (inv.status === 'expired' && inv.amountReuseReview);
      if (reviewed) return { kind: 'review_paid', candidate: inWindow };
      if (inv.status === 'pending' || inv.status === 'expired') return { kind: 'confirmed', candidate: inWindow };
    }
    return { kind: 'late', candidate: inWindow };
  }
  const before = candidates.find(({ invoice: inv }) => inv.createdAt <= p.blockTimestamp);
  if (before) return { kind: 'late', candidate: before };
  return { kind: 'unmatched', candidate: undefined };
}

/**
 * Applies one verified transfer to the invoices: moves the invoice it pays (with its event) and
 * says how the transfer is to be recorded. The moves are guarded; if one ever finds the invoice
 * moved, the money is still recorded against it as late. Paid through another of its options, the
 * invoice takes that option's network, token, wallet and amounts, and every other option is
 * released; a transfer on a released option afterwards is a late payment of the invoice.
 */
export async function applyChainPayment(
  deps: PaymentDeps,
  trx: Trx,
  tx: Tx,
  p: ChainPayment,
  now: number,
): Promise<{ kind: ChainTransferKind; invoiceId: string | null }> {
  const target = targetOf(p);
  const publicUrl = deps.config.server.public_url;
  const candidates = p.amount > 0n && !p.inexact ? await findCandidates(trx, target, p.amount) : [];
  let { kind, candidate } = classify(candidates, p);
  if (kind === 'unmatched') {
    const partial = await findPartialMatch(trx, target, p);
    if (partial) return applyPartialPayment(deps, trx, tx, p, partial, now);
  }
  const invoice = candidate?.invoice;
  const through = candidate?.option;
  if (invoice && kind === 'confirmed' && !(await confirmInvoice(trx, invoice.id, p.txHash, now, through))) kind = 'late';
  if (invoice && kind === 'review_paid' && !(await markReviewPaid(trx, invoice.id, p.txHash, through))) kind = 'late';
  if (invoice && (kind === 'confirmed' || kind === 'review_paid')) {
    await settleOptions(trx, invoice, through, now, parseAmount(deps.config.invoices.max_adjustment)!);
    const updated = await findInvoiceById(trx, invoice.id);
    await insertEvent(
      tx,
      {
        merchantId: updated.merchantId,
        type: kind === 'confirmed' ? 'invoice.confirmed' : 'invoice.review',
        invoiceId: updated.id,
        data: paymentEventData(updated, publicUrl, p.transaction, through),
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
        data: paymentEventData(updated, publicUrl, p.transaction, through),
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

/**
 * How many invoices are open on a network (asking there by their own row, or offering an open
 * option there) and when the oldest and newest of them were created (null when none).
 */
export async function openInvoices(
  db: Db,
  network: { id: string },
): Promise<{ count: number; oldestCreatedAt: number | null; newestCreatedAt: number | null }> {
  const row = await db
    .selectFrom('invoices as i')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('i.created_at').as('oldest'), eb.fn.max('i.created_at').as('newest')])
    .where(isOpen('i.status'))
    .where((eb) =>
      eb.or([
        eb('i.network', '=', network.id),
        eb.exists(
          eb
            .selectFrom('invoice_options as o')
            .select('o.position')
            .whereRef('o.invoice_id', '=', 'i.id')
            .where('o.network', '=', network.id)
            .where('o.status', '=', 'open'),
        ),
      ]),
    )
    .executeTakeFirstOrThrow();
  return {
    count: Number(row.n),
    oldestCreatedAt: row.oldest === null ? null : Number(row.oldest),
    newestCreatedAt: row.newest === null ? null : Number(row.newest),
  };
}

/** The addresses open invoices ask or offer on a network (watched even if their wallet row is gone). */
export async function openInvoiceAddresses(db: Db, network: { id: string }): Promise<string[]> {
  const own = await db.selectFrom('invoices').select('wallet_address').distinct().where(isOpen('status')).where('network', '=', network.id).execute();
  const offered = await db
    .selectFrom('invoice_options as o')
    .innerJoin('invoices as i', 'i.id', 'o.invoice_id')
    .select('o.wallet_address')
    .distinct()
    .where(isOpen('i.status'))
    .where('o.network', '=', network.id)
    .where('o.status', '=', 'open')
    .execute();
  return [...new Set([...own, ...offered].map((r) => r.wallet_address))];
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
