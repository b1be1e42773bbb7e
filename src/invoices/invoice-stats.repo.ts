/**
 * The per-merchant invoice figures the triggers on `invoices` keep in `invoice_stats`
 * (migrations/0007, received sums since 0014): at most four rows a merchant, whatever the number of invoices.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { InvoiceStatus } from '../db/schema.js';
import { MICRO, micros, type Micros } from '../lib/amounts.js';

export interface InvoiceStats {
  byStatus: Record<InvoiceStatus, number>;
  /**
   * Sums over the confirmed invoices, in micro-units. `received` is what they really received (a
   * transfer applied by hand may differ from the payable amount); `payable` is what they asked.
   */
  confirmed: { base: Micros; adjustment: Micros; payable: Micros; received: Micros };
}

/** Counts by status and confirmed totals. Amounts are exact: read as text, joined as BigInt. */
export async function readInvoiceStats(db: Db, merchantId: string): Promise<InvoiceStats> {
  const asText = (
    column: 'invoices' | 'base_units' | 'base_micros' | 'adjustment' | 'payable_units' | 'payable_micros' | 'received_units' | 'received_micros',
  ) => sql<string>`CAST(${sql.ref(column)} AS TEXT)`.as(column);
  const rows = await db
    .selectFrom('invoice_stats')
    .select([
      'status',
      asText('invoices'),
      asText('base_units'),
      asText('base_micros'),
      asText('adjustment'),
      asText('payable_units'),
      asText('payable_micros'),
      asText('received_units'),
      asText('received_micros'),
    ])
    .where('merchant_id', '=', merchantId)
    .execute();
  const byStatus: Record<InvoiceStatus, number> = { pending: 0, confirmed: 0, expired: 0, review: 0 };
  let confirmed = { base: micros(0n), adjustment: micros(0n), payable: micros(0n), received: micros(0n) };
  for (const row of rows) {
    byStatus[row.status] = Number(row.invoices);
    if (row.status === 'confirmed') {
      confirmed = {
        base: micros(BigInt(row.base_units) * MICRO + BigInt(row.base_micros)),
        adjustment: micros(BigInt(row.adjustment)),
        payable: micros(BigInt(row.payable_units) * MICRO + BigInt(row.payable_micros)),
        received: micros(BigInt(row.received_units) * MICRO + BigInt(row.received_micros)),
      };
    }
  }
  return { byStatus, confirmed };
}
