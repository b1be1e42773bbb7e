/**
 * Invoice rules: creation with idempotency and exact-amount allocation (docs/payments.md,
 * Amounts), and the owner's decision on a paid review invoice. No HTTP here, no SQL strings.
 */
import { readTogether, type BoundQuery } from '../db/compiled.js';
import { writeTransaction, type Tx } from '../db/database.js';
import { insertEvent } from '../events/events.repo.js';
import type { RateLimitContext } from '../http/rate-limit.js';
import { micros, parseAmount, type Micros } from '../lib/amounts.js';
import { MINUTE } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { randomBase64url } from '../lib/random.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { merchantWalletLookup, walletNetworksLookup } from '../wallets/wallets.repo.js';
import { findMerchantMarkup } from '../accounts/merchants.repo.js';
import { priceInFiat, type InvoicePrice } from '../pricing/pricing.service.js';
import { RESERVATION_MS, reservationInsert, takeOverReservation } from './allocation.repo.js';
import { optionInsert, optionsLookup, releaseOpenOptions } from './invoice-options.repo.js';
import { allocateOptions, planOptions, type AllocatedOption } from './option-allocation.js';
import { reviewPaymentTransaction } from '../payments/record.js';
import { GroupCommit } from './group-commit.js';
import { rowToInvoice, type Invoice, type InvoiceOption } from './invoice.model.js';
import { type CreateInvoiceBody, type InvoiceResponse, MAX_INVOICE_AMOUNT, toInvoiceResponse, withInvoiceDefaults } from './invoices.schemas.js';
import { serialisedUri } from '../lib/uri.js';
import {
  cancelOpenInvoice,
  findMerchantInvoice,
  idempotencyKeyLookup,
  insertInvoice,
  invoiceInsert,
  moveReviewedInvoice,
  orderIdLookup,
} from './invoices.repo.js';
import { reviewDecision, transition } from './invoice.states.js';
import type { RateBook } from '../pricing/rate-book.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'sqlite' | 'config' | 'clock' | 'rateLimiter' | 'deliveriesQueued' | 'metrics'> & { rates: RateBook };

export { RESERVATION_MS };

/**
 * One invoice to create, from the API or from any other caller (e.g. a shop protocol):
 *
 * - `body` must satisfy CreateInvoiceSchema (invoices.schemas.ts; validate with
 *   `CreateInvoiceSchema.safeParse` when it did not come through the API). Absent fields with a
 *   default get it here.
 * - `body.currency` absent or "USDT": `body.amount` is the USDT base amount. An ISO 4217 code from
 *   `pricing.currencies` ("CNY"): `body.amount` is in that currency (at most its own decimals), and
 *   the base amount is converted at the current median rate, plus `body.markup_percent` ("0" to
 *   "20"; the merchant's markup_percent when absent), rounded up to `pricing.round_to`. The invoice
 *   then carries `price` (amount, currency, rate, markupPercent, sources, rateAt), fixed for good.
 * - No honest rate (too few fresh sources, spread too wide, currency not configured): AppError
 *   `rate_unavailable` (503), nothing created. A bad fiat amount or markup: `validation_error` (400).
 * - An idempotent replay (same key, same body) returns the stored invoice and its price, whatever
 *   the rates are now, and needs no rate.
 */
export interface CreateInvoiceRequest {
  merchantId: string;
  idempotencyKey: string;
  /** The validated body; absent fields with a default get it here. */
  body: Parameters<typeof withInvoiceDefaults>[0];
  /** The checkout token, when the caller needs it before the invoice exists (a shop's return link); else a new one. */
  checkoutToken?: string;
}

export interface CreateInvoiceResult {
  invoice: Invoice;
  replay: boolean;
  /** The API view of a new invoice, as its invoice.created event carries it (not for a replay). */
  view?: InvoiceResponse;
}

/**
 * Every amount is reserved. Returned, not thrown, so the transaction still commits what allocation
 * learnt (the cursor and when the range can next be reused) before the caller answers 409.
 */
export interface PoolExhausted {
  exhausted: true;
}

export const poolExhaustedError = () =>
  new AppError('amount_pool_exhausted', 'Every payable amount for this price on this address is reserved (90 days); use another price or wallet');

type InvoiceDeps = Pick<Deps, 'db' | 'sqlite' | 'config' | 'clock' | 'deliveriesQueued' | 'rates'>;
type CreatorDeps = InvoiceDeps & Pick<Deps, 'metrics' | 'rateLimiter'>;

const CREATION_SCOPE = 'invoice_create';

/**
 * JSON with object keys sorted at every level (code-unit order), undefined members left out: equal
 * documents give equal text. Stored invoices keep fingerprints of this text, so it must never change
 * (test/invoices/fingerprint.test.ts pins it). Written as loops: it runs on every creation.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? '';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = '{';
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined) continue;
    text += (text.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(member);
  }
  return `${text}}`;
}

/**
 * Fingerprint of the validated body (defaults applied), so key order, white space and an explicit
 * default (`expires_in_minutes: 20`) do not make a retry look different.
 */
export function requestFingerprint(body: CreateInvoiceBody): string {
  return sha256Hex(canonicalJson(body));
}

/**
 * One creation, inside the caller's immediate transaction (or a group-commit savepoint) on the
 * connection's handle. Compiled queries only (src/db/compiled.ts).
 */
export async function createInvoiceInTrx(
  tx: Tx,
  deps: InvoiceDeps,
  req: CreateInvoiceRequest,
  charge?: (tx: Tx) => void | Promise<void>,
): Promise<CreateInvoiceResult | PoolExhausted> {
  const now = deps.clock.now();
  const body = withInvoiceDefaults(req.body);
  const fingerprint = requestFingerprint(body);
  // Fetched together on PostgreSQL (one round trip); on SQLite each read runs when asked for.
  const lookups = readTogether(tx, {
    existing: idempotencyKeyLookup(req.merchantId, req.idempotencyKey),
    holder: orderIdLookup(req.merchantId, body.merchant_order_id),
    wallet: merchantWalletLookup(req.merchantId, body.wallet_id),
    networks: walletNetworksLookup(req.merchantId, body.wallet_id),
  });
  const existing = await lookups.existing();
  if (existing) {
    if (existing.request_fingerprint !== fingerprint) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request body; use a new key for a new invoice');
    }
    return { invoice: rowToInvoice(existing, await optionsLookup(existing.id).on(tx)), replay: true };
  }
  const holder = await lookups.holder();
  if (holder !== undefined) {
    throw new AppError('duplicate_order_id', 'An invoice with this merchant_order_id exists; retry with its original Idempotency-Key', [
      { path: 'merchant_order_id', message: `Already used by invoice ${holder}`, invoice_id: holder },
    ]);
  }
  const wallet = await lookups.wallet();
  if (!wallet) throw new AppError('not_found', 'Wallet not found');
  if (wallet.archivedAt !== null) {
    throw new AppError('wallet_archived', 'This wallet is archived and takes no new invoices; restore it or use another wallet', [
      { path: 'wallet_id', message: 'archived' },
    ]);
  }
  const planned = await planOptions(tx, deps, req.merchantId, { body, sent: req.body }, wallet, await lookups.networks());

  // Charged here, after the replay lookup in the same serialized transaction: a replay, even one
  // racing its original, finds the invoice above and never costs a creation.
  await charge?.(tx);
  const { base, price } = await priceOf(tx, deps, req.merchantId, body, now);
  const maxAdjustment = parseAmount(deps.config.invoices.max_adjustment)!;
  const allocated = await allocateOptions(tx, deps, req.merchantId, planned, base, maxAdjustment);
  if ('exhausted' in allocated) return allocated;
  // An amount reused after its 90 days on any option: the owner decides, as for a single one.
  const review = allocated.some((o) => o.allocation.kind === 'reuse');
  const [first, ...others] = allocated as [AllocatedOption, ...AllocatedOption[]];
  const options: InvoiceOption[] = others.map((o, i) => ({
    position: i + 1,
    walletId: o.wallet.id,
    network: o.network.id,
    token: o.token.symbol,
    tokenContract: o.token.contract,
    walletAddress: o.wallet.address,
    adjustment: o.allocation.adjustment,
    payableAmount: micros(base + o.allocation.adjustment),
    status: 'open',
  }));
  const invoice: Invoice = {
    id: newId('inv'),
    merchantId: req.merchantId,
    walletId: first.wallet.id,
    network: first.network.id,
    token: first.token.symbol,
    tokenContract: first.token.contract,
    walletAddress: first.wallet.address,
    merchantOrderId: body.merchant_order_id,
    idempotencyKey: req.idempotencyKey,
    requestFingerprint: fingerprint,
    baseAmount: base,
    adjustment: first.allocation.adjustment,
    payableAmount: micros(base + first.allocation.adjustment),
    status: review ? 'review' : 'pending',
    amountReuseReview: review,
    description: body.description ?? null,
    metadata: body.metadata ?? {},
    // From the pool (src/lib/random.ts): the database keeps it as it is anyway.
    checkoutToken: req.checkoutToken ?? randomBase64url(32),
    txHash: null,
    confirmedAt: null,
    createdAt: now,
    expiresAt: now + body.expires_in_minutes * MINUTE,
    reservedUntil: now + RESERVATION_MS,
    // Stored in its WHATWG serialisation (src/lib/uri.ts): what the document's format: uri promises.
    redirectUrl: body.redirect_url === undefined ? null : serialisedUri(body.redirect_url),
    cancelledAt: null,
    receivedAmount: null,
    price,
    amountReceived: micros(0n),
    resolution: null,
    options,
  };
  const payables = [invoice.payableAmount, ...options.map((o) => o.payableAmount)];
  // Fresh amounts: the invoice, its options and their reservations are written with the event (one
  // round trip on PostgreSQL). A reused one is taken over first, and only if its reservation has
  // still run out.
  const alongside: Array<BoundQuery<unknown>> = [];
  if (review) await insertInvoice(tx, invoice);
  else alongside.push(invoiceInsert(invoice));
  for (const [i, o] of allocated.entries()) {
    if (o.allocation.kind === 'fresh') {
      alongside.push(reservationInsert(o.target, payables[i]!, invoice.id, now, invoice.reservedUntil));
    } else if (!(await takeOverReservation(tx, o.target, payables[i]!, invoice.id, now, invoice.reservedUntil))) {
      throw new Error('reservation to reuse is no longer expired');
    }
  }
  for (const o of options) alongside.push(optionInsert(invoice.id, o));
  const data = { invoice: toInvoiceResponse(invoice, deps.config.server.public_url) };
  await insertEvent(tx, { merchantId: invoice.merchantId, type: 'invoice.created', invoiceId: invoice.id, data }, now, alongside);
  if (review) await insertEvent(tx, { merchantId: invoice.merchantId, type: 'invoice.review', invoiceId: invoice.id, data }, now);
  return { invoice, replay: false, view: data.invoice };
}

/**
 * The base amount in micro-USDT: the amount itself for a USDT price, else converted at the rates
 * the background fetcher holds (in memory: no network inside the transaction).
 */
async function priceOf(
  tx: Tx,
  deps: InvoiceDeps,
  merchantId: string,
  body: CreateInvoiceBody,
  now: number,
): Promise<{ base: Micros; price: InvoicePrice | null }> {
  if (body.currency === undefined) return { base: parseAmount(body.amount)!, price: null };
  const markupPercent = body.markup_percent ?? (await findMerchantMarkup(tx, merchantId)) ?? '0';
  const { baseAmount, price } = priceInFiat(deps.rates, { amount: body.amount, currency: body.currency, markupPercent }, now, MAX_INVOICE_AMOUNT);
  return { base: baseAmount, price };
}

/** createInvoiceInTrx for callers that run their own transaction: exhaustion throws the 409. */
export async function createInvoiceOrThrow(tx: Tx, deps: InvoiceDeps, req: CreateInvoiceRequest): Promise<CreateInvoiceResult> {
  const result = await createInvoiceInTrx(tx, deps, req);
  if ('exhausted' in result) throw poolExhaustedError();
  return result;
}

/** Creates invoices through one group-commit queue (one per app). */
export class InvoiceCreator {
  readonly committer: GroupCommit;

  constructor(private readonly deps: CreatorDeps) {
    const sizes = deps.metrics.histogram(
      'gatewayd_invoice_commit_batch_size',
      'Invoice creations committed together (group commit)',
      [],
      [1, 2, 4, 8, 16, 32, 64],
    );
    const seconds = deps.metrics.histogram(
      'gatewayd_invoice_commit_seconds',
      'One group-commit transaction, BEGIN to durable COMMIT',
      [],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    );
    this.committer = new GroupCommit(deps.db, {
      onBatch: (units, ms) => {
        sizes.observe(units);
        seconds.observe(ms / 1000);
      },
    });
  }

  /**
   * Creations are limited per merchant (rate_limits.invoices_per_merchant), summed over all its API
   * keys and sessions: every new invoice reserves an amount on an address that other merchants may
   * share, so many keys must not multiply the rate. Counted inside the creation's transaction (in
   * memory on SQLite, on the transaction's connection on PostgreSQL: src/http/rate-limit.ts), once it
   * is known to be no idempotent replay: a replay is never charged.
   */
  async create(req: CreateInvoiceRequest, limitContext?: RateLimitContext): Promise<CreateInvoiceResult> {
    const charge = (tx: Tx) =>
      this.deps.rateLimiter.consume(CREATION_SCOPE, req.merchantId, this.deps.config.rate_limits.invoices_per_merchant, {
        message: 'Too many invoices created by this merchant in the last minute (all its API keys and sessions count); retry later',
        context: limitContext,
        tx,
      });
    const result = await this.committer.run((tx) => createInvoiceInTrx(tx, this.deps, req, charge));
    if ('exhausted' in result) throw poolExhaustedError();
    if (!result.replay) this.deps.deliveriesQueued.notify();
    return result;
  }
}

/**
 * The owner's decision on a paid review invoice (docs/payments.md, Invoice states): accept = confirmed +
 * invoice.confirmed, reject = expired + invoice.expired. Anything but a review invoice with a
 * recorded payment is 409 invoice_not_reviewable.
 */
export async function decideReview(deps: InvoiceDeps, merchantId: string, invoiceId: string, decision: 'accept' | 'reject'): Promise<Invoice> {
  const updated = await writeTransaction(deps.db, async (trx, tx) => {
    const now = deps.clock.now();
    const invoice = await findMerchantInvoice(trx, merchantId, invoiceId);
    if (!invoice) throw new AppError('not_found', 'Invoice not found');
    if (invoice.status !== 'review' || invoice.txHash === null) {
      throw new AppError(
        'invoice_not_reviewable',
        invoice.status !== 'review' ? `This invoice is ${invoice.status}, not awaiting review` : 'No payment has been recorded for this review invoice yet',
      );
    }
    const accept = decision === 'accept';
    if (!(await moveReviewedInvoice(trx, invoice.id, reviewDecision(accept), accept ? now : null))) {
      throw new AppError('invoice_not_reviewable', 'This invoice changed meanwhile; reload it');
    }
    const after: Invoice = { ...invoice, status: transition(reviewDecision(accept)).to, confirmedAt: accept ? now : null };
    const data: Record<string, unknown> = { invoice: toInvoiceResponse(after, deps.config.server.public_url) };
    if (accept) {
      const transaction = await reviewPaymentTransaction(trx, after.id);
      if (transaction) data.transaction = transaction;
    }
    await insertEvent(tx, { merchantId, type: accept ? 'invoice.confirmed' : 'invoice.expired', invoiceId: invoice.id, data }, now);
    return after;
  });
  deps.deliveriesQueued.notify();
  return updated;
}

export async function cancelInvoice(deps: InvoiceDeps, merchantId: string, invoiceId: string): Promise<{ invoice: Invoice; changed: boolean }> {
  const result = await writeTransaction(deps.db, async (trx, tx) => {
    const now = deps.clock.now();
    const invoice = await findMerchantInvoice(trx, merchantId, invoiceId);
    if (!invoice) throw new AppError('not_found', 'Invoice not found');
    if (invoice.cancelledAt !== null) return { invoice, changed: false };
    const open = invoice.status === 'pending' || invoice.status === 'review';
    if (!open || invoice.txHash !== null) {
      throw new AppError(
        'invoice_not_cancellable',
        invoice.status === 'expired'
          ? 'This invoice already expired by itself'
          : invoice.status === 'confirmed'
            ? 'This invoice is confirmed (paid)'
            : 'A payment has been recorded for this review invoice; accept or reject it instead',
      );
    }
    if (!(await cancelOpenInvoice(trx, invoice.id, now))) throw new AppError('invoice_not_cancellable', 'This invoice changed meanwhile; reload it');
    await releaseOpenOptions(trx, invoice, now, parseAmount(deps.config.invoices.max_adjustment)!);
    const after = (await findMerchantInvoice(trx, merchantId, invoice.id))!;
    await insertEvent(
      tx,
      { merchantId, type: 'invoice.expired', invoiceId: invoice.id, data: { invoice: toInvoiceResponse(after, deps.config.server.public_url) } },
      now,
    );
    return { invoice: after, changed: true };
  });
  if (result.changed) deps.deliveriesQueued.notify();
  return result;
}
