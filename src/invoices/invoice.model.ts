/**
 * The Invoice domain object and its two public views: the merchant's Invoice and the payer-safe
 * CheckoutInvoice. Every feature that shows an invoice (API, events, checkout, console, ledger)
 * goes through these mappers, so a field is never shown in one place and forgotten in another.
 */
import type { Selectable } from 'kysely';
import type { InvoicesTable, InvoiceStatus } from '../db/schema.js';
import { formatAmount, fromDbAmount } from '../lib/amounts.js';
import { iso, isoOrNull } from '../lib/clock.js';
import type { NetworkId } from '../lib/tron.js';

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
  baseAmount: bigint;
  adjustment: bigint;
  payableAmount: bigint;
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
}

export function rowToInvoice(row: Selectable<InvoicesTable>): Invoice {
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
  };
}

export function checkoutUrl(publicUrl: string, checkoutToken: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/pay/${checkoutToken}`;
}

/** Fields shared by the merchant's and the payer's view. */
function commonFields(inv: Invoice) {
  return {
    id: inv.id,
    base_amount: formatAmount(inv.baseAmount),
    adjustment: formatAmount(inv.adjustment),
    payable_amount: formatAmount(inv.payableAmount),
    wallet_address: inv.walletAddress,
    status: inv.status,
    created_at: iso(inv.createdAt),
    expires_at: iso(inv.expiresAt),
    reserved_until: iso(inv.reservedUntil),
    ...(inv.description !== null ? { description: inv.description } : {}),
    tx_hash: inv.txHash,
    mode: 'live' as const,
    network: inv.network as NetworkId,
    token: inv.token as 'USDT',
    token_contract: inv.tokenContract,
    amount_reuse_review: inv.amountReuseReview,
  };
}

/** The Invoice resource (merchant view). */
export function toInvoiceResponse(inv: Invoice, publicUrl: string) {
  return {
    ...commonFields(inv),
    confirmed_at: isoOrNull(inv.confirmedAt),
    checkout_url: checkoutUrl(publicUrl, inv.checkoutToken),
    checkout_token: inv.checkoutToken,
    merchant_order_id: inv.merchantOrderId,
    wallet_id: inv.walletId,
    metadata: inv.metadata,
  };
}

export type InvoiceResponse = ReturnType<typeof toInvoiceResponse>;

/** The CheckoutInvoice resource (payer-safe: no order id, wallet id, metadata or checkout link). */
export function toCheckoutInvoiceResponse(inv: Invoice, merchantName: string) {
  return { ...commonFields(inv), merchant_name: merchantName };
}
