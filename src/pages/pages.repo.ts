/** Reads the pages need that no API feature offers as a domain object. */
import type { Db } from '../db/database.js';
import { rowToInvoice, type Invoice } from '../invoices/invoice.model.js';

/** The invoice behind a checkout link and the merchant's display name, or undefined. */
export async function findCheckout(db: Db, checkoutToken: string): Promise<{ invoice: Invoice; merchantName: string } | undefined> {
  const row = await db
    .selectFrom('invoices')
    .innerJoin('merchants', 'merchants.id', 'invoices.merchant_id')
    .selectAll('invoices')
    .select('merchants.name as merchant_name')
    .where('invoices.checkout_token', '=', checkoutToken)
    .executeTakeFirst();
  if (!row) return undefined;
  const { merchant_name: merchantName, ...invoiceRow } = row;
  return { invoice: rowToInvoice(invoiceRow), merchantName };
}
