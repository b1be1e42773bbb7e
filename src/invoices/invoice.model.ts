/**
 * The Invoice domain object, read from its row. Its two public views (the merchant's Invoice and
 * the payer-safe CheckoutInvoice) are mapped in invoices.schemas.ts, beside their zod schemas.
 */
import type { Selectable } from 'kysely';
import type { InvoiceOptionsTable, InvoiceOptionStatus, InvoicesTable, InvoiceStatus, ResolutionKind } from '../db/schema.js';
import { fromDbAmount, type Micros } from '../lib/amounts.js';
import type { InvoicePrice } from '../pricing/pricing.service.js';

export interface Invoice {
  id: string;
  merchantId: string;
  walletId: string;
  network: string;
  token: string;
  tokenContract: string;
  walletAddress: string;
  merchantOrderId: string;
  idempotencyKey: string;
  requestFingerprint: string;
  baseAmount: Micros;
  adjustment: Micros;
  payableAmount: Micros;
  status: InvoiceStatus;
  amountReuseReview: boolean;
  description: string | null;
  metadata: Record<string, unknown>;
  checkoutToken: string;
  txHash: string | null;
  confirmedAt: number | null;
  createdAt: number;
  expiresAt: number;
  reservedUntil: number;
  /** https URL the checkout offers once the invoice is settled. */
  redirectUrl: string | null;
  /** When the merchant cancelled it (status expired); null otherwise. */
  cancelledAt: number | null;
  /**
   * Micro-USDT the invoice actually received: the applied transfer's amount when the owner resolved
   * a payment by hand, the payable amount when a matching transfer paid it, null while unpaid.
   */
  receivedAmount: Micros | null;
  /** The fiat price it was created from (fixed at creation); null when priced in USDT. */
  price: InvoicePrice | null;
  /** Micro-USDT of every transfer recorded against it (paid, partial, late) or applied to it by hand. */
  amountReceived: Micros;
  /** How it was settled when not by a transfer of its exact amount ('manual', 'tolerance'); null otherwise. */
  resolution: ResolutionKind | null;
  /**
   * Its stored options (invoice_options), by position: the other networks and tokens the payer may
   * choose (1 and up), and position 0 once another option paid. Empty for a single-option invoice.
   */
  options: readonly InvoiceOption[];
  /**
   * A matching transfer seen in a block above its network's finality, while it waits to be final;
   * null when none waits (or not loaded: only the invoice API and the events that tell it load it).
   */
  paymentSeen?: PaymentSeen | null;
}

/** A transfer that will pay the invoice once its block is final (the payments layer's chain_seen). */
export interface PaymentSeen {
  network: string;
  txHash: string;
  blockNumber: number;
  seenAt: number;
  expectedFinalAt: number;
}

/**
 * One more way to pay an invoice: a network, a token and the wallet receiving there, with its own
 * unique payable amount (the invoice's base plus its own adjustment).
 */
export interface InvoiceOption {
  position: number;
  walletId: string;
  network: string;
  token: string;
  tokenContract: string;
  walletAddress: string;
  adjustment: Micros;
  payableAmount: Micros;
  status: InvoiceOptionStatus;
}

/** What the invoice row asks as an option: option 0 while it is not stored. */
export function ownOption(inv: Invoice, status: InvoiceOption['status']): InvoiceOption {
  return {
    position: 0,
    walletId: inv.walletId,
    network: inv.network,
    token: inv.token,
    tokenContract: inv.tokenContract,
    walletAddress: inv.walletAddress,
    adjustment: inv.adjustment,
    payableAmount: inv.payableAmount,
    status,
  };
}

export function rowToOption(row: Selectable<InvoiceOptionsTable>): InvoiceOption {
  return {
    position: Number(row.position),
    walletId: row.wallet_id,
    network: row.network,
    token: row.token,
    tokenContract: row.token_contract,
    walletAddress: row.wallet_address,
    adjustment: fromDbAmount(row.adjustment),
    payableAmount: fromDbAmount(row.payable_amount),
    status: row.status,
  };
}

/** The invoice of a row, with its stored options (invoice-options.repo.ts reads them; [] when it has none). */
export function rowToInvoice(row: Selectable<InvoicesTable>, options: readonly InvoiceOption[]): Invoice {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    walletId: row.wallet_id,
    network: row.network,
    token: row.token,
    tokenContract: row.token_contract,
    walletAddress: row.wallet_address,
    merchantOrderId: row.merchant_order_id,
    idempotencyKey: row.idempotency_key,
    requestFingerprint: row.request_fingerprint,
    baseAmount: fromDbAmount(row.base_amount),
    adjustment: fromDbAmount(row.adjustment),
    payableAmount: fromDbAmount(row.payable_amount),
    status: row.status,
    amountReuseReview: row.amount_reuse_review === 1,
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    checkoutToken: row.checkout_token,
    txHash: row.tx_hash,
    confirmedAt: row.confirmed_at,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    reservedUntil: row.reserved_until,
    redirectUrl: row.redirect_url,
    cancelledAt: row.cancelled_at,
    receivedAmount: row.received_amount !== null ? fromDbAmount(row.received_amount) : row.tx_hash !== null ? fromDbAmount(row.payable_amount) : null,
    price: priceOf(row),
    amountReceived: fromDbAmount(row.amount_received),
    resolution: row.resolution,
    options: [...options].sort((a, b) => a.position - b.position),
  };
}

function priceOf(row: Selectable<InvoicesTable>): InvoicePrice | null {
  if (row.price_currency === null || row.price_currency === undefined) return null;
  return {
    amount: row.price_amount!,
    currency: row.price_currency,
    rate: row.price_rate!,
    markupPercent: row.price_markup_percent!,
    sources: JSON.parse(row.price_sources ?? '[]') as string[],
    rateAt: row.price_rate_at!,
  };
}

export function checkoutUrl(publicUrl: string, checkoutToken: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/pay/${checkoutToken}`;
}
