/**
 * What follows a transfer's record, in the scanner's transaction (the chain feature calls this one
 * hook and knows nothing of it): a `transfer.unmatched` event to every merchant of the address for
 * an unmatched transfer of at least tron.dust_threshold that relates to no invoice (each sees it in
 * GET /transfers), and the owners' mail notices (src/payments/payment-notices.ts).
 */
import type { Config } from '../config.js';
import type { Trx, Tx } from '../db/database.js';
import { findTransferByLog } from '../payments/transfers.repo.js';
import { queuePaymentNotices } from '../payments/payment-notices.js';
import { insertEvent } from '../events/events.repo.js';
import { parseAmount } from '../lib/amounts.js';
import { listAddressOwners } from '../wallets/wallets.repo.js';
import { toTransferResponse } from './transfers.schemas.js';

/** Returns true when it queued events (the caller wakes the delivery worker). */
export async function afterTransferRecorded(
  config: Config,
  trx: Trx,
  tx: Tx,
  log: { network: string; txHash: string; logIndex: number },
  now: number,
): Promise<boolean> {
  const transfer = await findTransferByLog(trx, log.txHash, log.logIndex, log.network);
  if (!transfer || (transfer.kind !== 'unmatched' && transfer.kind !== 'late')) return false;
  await queuePaymentNotices(config, trx, log, now);
  if (transfer.kind !== 'unmatched' || transfer.invoiceId !== null || transfer.amount < (parseAmount(config.tron.dust_threshold) ?? 0n)) return false;
  for (const merchantId of await listAddressOwners(trx, transfer.network, transfer.to)) {
    await insertEvent(
      tx,
      { merchantId, type: 'transfer.unmatched', data: { transfer: toTransferResponse(transfer, 'unmatched', merchantId, undefined) } },
      now,
    );
  }
  return true;
}
