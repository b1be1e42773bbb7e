/**
 * The TRON scanner's names for the payments layer's SQL (src/payments/: the cursor, the unread
 * ranges, the disputes and the recorded transfers, kept there for every network), and the
 * addresses it watches. Its tools and tests name them here; the scanner's own files import
 * src/payments/ directly.
 */
import type { Db, Trx } from '../db/database.js';
import type { ChainTransferKind } from '../db/schema.js';
import type { TronNetwork } from '../lib/tron.js';
import { insertTransfer as insertRecord } from '../payments/transfers.repo.js';
import { listNetworkAddresses } from '../wallets/wallets.repo.js';
import type { VerifiedTransfer } from './verifier.js';

export {
  disputeSubject,
  holdDispute,
  insertGap,
  listGaps,
  listOpenDisputes,
  loadScanState,
  markDisputeNotified,
  resolveDispute,
  saveScanState,
  splitGap,
  updateGap,
  type DisputeRow,
  type ScanGap,
  type ScanState,
} from '../payments/scan.repo.js';
export {
  countUnmatchedDust,
  findReviewPayment,
  findTransferBlocks,
  findTransferByLog,
  isLogRecorded,
  latePaymentHashes,
  listLatePayments,
  listMerchantLatePayments,
  listUnmatchedTransfers,
  rowToTransfer,
  unmatchedTransfersQuery,
} from '../payments/transfers.repo.js';

/** Every registered wallet address (watched while the scanner runs). */
export async function listWalletAddresses(db: Db, network: TronNetwork): Promise<string[]> {
  return listNetworkAddresses(db, network.id);
}

/** Records a TRON transfer as it is (USDT, 6 decimals: the raw value is the micro-units), without matching it to an invoice. */
export async function insertTransfer(
  trx: Trx,
  network: TronNetwork,
  t: VerifiedTransfer,
  kind: ChainTransferKind,
  invoiceId: string | null,
  now: number,
): Promise<void> {
  await insertRecord(trx, { ...t, network: network.id, token: 'USDT', rawAmount: t.amount, blockHash: null, kind, invoiceId, reason: null }, now);
}
