/** Read-only figures about the whole installation, for /metrics (all merchants together). */
import type { Db } from '../db/database.js';

export interface OperationalFigures {
  invoicesByStatus: Record<string, number>;
  /** Newest confirmed_at (ms), or undefined when nothing was ever confirmed. */
  lastConfirmedAt: number | undefined;
  deliveriesByStatus: Record<string, number>;
  /** created_at (ms) of the oldest delivery still waiting (pending or sending). */
  oldestWaitingDeliveryAt: number | undefined;
}

export async function readOperationalFigures(db: Db): Promise<OperationalFigures> {
  const invoices = await db
    .selectFrom('invoices')
    .select((eb) => ['status', eb.fn.countAll<number>().as('n'), eb.fn.max('confirmed_at').as('last_confirmed')])
    .groupBy('status')
    .execute();
  const deliveries = await db
    .selectFrom('deliveries')
    .select((eb) => ['status', eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .groupBy('status')
    .execute();
  let lastConfirmedAt: number | undefined;
  for (const row of invoices) {
    if (row.last_confirmed !== null && (lastConfirmedAt === undefined || Number(row.last_confirmed) > lastConfirmedAt)) {
      lastConfirmedAt = Number(row.last_confirmed);
    }
  }
  let oldestWaitingDeliveryAt: number | undefined;
  for (const row of deliveries) {
    if ((row.status === 'pending' || row.status === 'sending') && row.oldest !== null) {
      const at = Number(row.oldest);
      if (oldestWaitingDeliveryAt === undefined || at < oldestWaitingDeliveryAt) oldestWaitingDeliveryAt = at;
    }
  }
  return {
    invoicesByStatus: Object.fromEntries(invoices.map((r) => [r.status, Number(r.n)])),
    lastConfirmedAt,
    deliveriesByStatus: Object.fromEntries(deliveries.map((r) => [r.status, Number(r.n)])),
    oldestWaitingDeliveryAt,
  };
}
