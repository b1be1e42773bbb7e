/**
 * The TRON scanner's side of the payments layer: its verified transfers (verifier.ts, one solidified
 * block's USDT Transfer logs) become chain-neutral ones at this boundary, final by construction
 * (a solidified block is TRON's final), and are recorded with the scan state by
 * src/payments/record.ts in one write transaction. No network here.
 */
import type { VerifiedTransfer as NeutralTransfer } from '../chains/family.js';
import type { ChainTransferKind } from '../db/schema.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { networkOf, recordTransfers } from '../payments/record.js';
import type { ScanGap, ScanState } from '../payments/scan.repo.js';
import type { VerifiedTransfer } from './verifier.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'>;

export { reviewPaymentTransaction } from '../payments/record.js';

export interface RecordedTransfer {
  transfer: VerifiedTransfer;
  kind: ChainTransferKind;
  invoiceId: string | null;
}

export interface ScanCommit {
  transfers: VerifiedTransfer[];
  state?: ScanState;
  /** A gap that shrank (or closed: `gap` undefined). */
  gap?: { oldFrom: number; gap: ScanGap | undefined };
  /** Where the scan stands once this commits, for expiry; absent (nothing expires) for a payer's transaction id. */
  unscanned?: { scannedUntil: number; gaps: Array<{ after: number; before: number }> };
}

/** A TRON transfer in the chain-neutral shape: USDT (6 decimals, so the raw value is the micro-units), final, no block hash. */
export function toNeutralTransfer(network: Deps['config']['network'], t: VerifiedTransfer): NeutralTransfer {
  return {
    network: network.id,
    token: 'USDT',
    contract: t.tokenContract,
    from: t.from,
    to: t.to,
    raw: t.amount,
    amount: { exact: true, micros: t.amount },
    txHash: t.txHash,
    logIndex: t.logIndex,
    blockNumber: BigInt(t.blockNumber),
    // TRON's block reads (gettransactioninfobyblocknum) carry no block hash; the block number is the position.
    blockHash: '',
    blockTimeMs: t.blockTimestamp,
    finality: 'final',
  };
}

export async function commitScan(deps: Deps, c: ScanCommit): Promise<{ recorded: RecordedTransfer[]; expired: Invoice[] }> {
  const network = deps.config.network;
  const byKey = new Map(c.transfers.map((t) => [`${t.txHash}:${t.logIndex}`, t]));
  const { recorded, expired } = await recordTransfers(deps, networkOf(network.id), {
    transfers: c.transfers.map((t) => toNeutralTransfer(network, t)),
    state: c.state,
    gap: c.gap,
    unscanned: c.unscanned,
  });
  return {
    recorded: recorded.map((r) => ({ transfer: byKey.get(`${r.transfer.txHash}:${r.transfer.logIndex}`)!, kind: r.kind, invoiceId: r.invoiceId })),
    expired,
  };
}
