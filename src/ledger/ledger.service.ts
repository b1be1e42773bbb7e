/**
 * The ledger CSV (docs/api.md, the ledger): RFC 4180 quoting with CRLF records, UTF-8, a `'` before
 * any cell a spreadsheet would read as a formula, produced page by page so memory stays flat for
 * any number of invoices.
 */
import { stringify } from 'csv-stringify/sync';
import type { Db } from '../db/database.js';
import { formatAmount } from '../lib/amounts.js';
import { iso, isoOrNull } from '../lib/clock.js';
import { latePaymentHashes } from '../payments/transfers.repo.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { merchantInvoicesPage, type CreationCursor as LedgerCursor, type CreationRange as LedgerRange } from '../invoices/invoices.repo.js';

export const LEDGER_COLUMNS = [
  'invoice_id',
  'merchant_order_id',
  'status',
  'created_at',
  'expires_at',
  'confirmed_at',
  'network',
  'token',
  'token_contract',
  'wallet_address',
  'base_amount',
  'adjustment',
  'payable_amount',
  'tx_hash',
  'late_payments',
  'description',
  // Appended after the first 16 columns so their order never changes for existing importers.
  'received_amount',
  // Fiat prices (empty for an invoice priced in USDT), appended after received_amount.
  'price_amount',
  'price_currency',
  'price_rate',
  'price_markup_percent',
  'price_rate_at',
] as const;

/**
 * Rows per page (one keyset query, one chunk). Measured on 200 000 rows: 1 000-row pages (~220 KB
 * strings) raised the process's RSS by ~110 MB during an export, 200-row pages by ~22 MB, and the
 * export was no slower (BENCHMARKS.md, figure 4).
 */
const PAGE_SIZE = 200;
const FORMULA_START = /^[=+\-@\t\r]/;

/** Defuses spreadsheet formulas: a cell starting with = + - @ tab or CR gets a leading `'`. */
export function neutralizeCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

export function csvLines(rows: string[][]): string {
  return stringify(
    rows.map((r) => r.map(neutralizeCell)),
    { record_delimiter: 'windows' },
  );
}

function ledgerRow(inv: Invoice, late: string): string[] {
  return [
    inv.id,
    inv.merchantOrderId,
    inv.status,
    iso(inv.createdAt),
    iso(inv.expiresAt),
    isoOrNull(inv.confirmedAt) ?? '',
    inv.network,
    inv.token,
    inv.tokenContract,
    inv.walletAddress,
    formatAmount(inv.baseAmount),
    formatAmount(inv.adjustment),
    formatAmount(inv.payableAmount),
    inv.txHash ?? '',
    late,
    inv.description ?? '',
    inv.receivedAmount === null ? '' : formatAmount(inv.receivedAmount),
    inv.price?.amount ?? '',
    inv.price?.currency ?? '',
    inv.price?.rate ?? '',
    inv.price?.markupPercent ?? '',
    inv.price ? iso(inv.price.rateAt) : '',
  ];
}

/** The ledger as a byte stream: the header, then one page of rows per pull (backpressure included). */
export function ledgerStream(db: Db, merchantId: string, range: LedgerRange = {}, pageSize = PAGE_SIZE): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cursor: LedgerCursor | undefined;
  let headerSent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(csvLines([[...LEDGER_COLUMNS]])));
        return;
      }
      const page = await merchantInvoicesPage(db, merchantId, cursor, pageSize, range);
      if (page.length === 0) {
        controller.close();
        return;
      }
      const late = await latePaymentHashes(
        db,
        page.map((inv) => inv.id),
      );
      controller.enqueue(encoder.encode(csvLines(page.map((inv) => ledgerRow(inv, late.get(inv.id)?.join(';') ?? '')))));
      const last = page[page.length - 1]!;
      cursor = { createdAt: last.createdAt, id: last.id };
      if (page.length < pageSize) controller.close();
    },
  });
}
