/**
 * The payments layer's write path, the same for every chain family: verified final transfers
 * (src/chains/family.ts) are recorded once each (chain_transfers, keyed by network, tx hash and log
 * index), handed to the invoices feature, which matches them and moves the invoices they pay with
 * their events, and the watcher's cursor or unread range moves, all in one short write transaction;
 * then the invoices of that network whose whole window is now read expire. A crash anywhere
 * repeats work, never loses it or counts it twice. No network here.
 */
import type { VerifiedTransfer } from '../chains/family.js';
import { findNetwork, tokenByContract, type Network } from '../chains/networks.js';
import { writeTransaction, type Db, type Trx, type Tx } from '../db/database.js';
import type { ChainTransferKind, UnmatchedReason } from '../db/schema.js';
import { micros, type Micros } from '../lib/amounts.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { applyChainPayment, unmatchedReason } from '../invoices/invoice-payments.js';
import { expireScanned, type Unscanned } from '../invoices/invoice-expiry.js';
import { afterTransferRecorded } from '../transfers/transfer-events.js';
import { listGaps, loadScanState, saveScanState, updateGap, type ScanGap, type ScanState } from './scan.repo.js';
import { markSeenFinal } from './seen.repo.js';
import { toTransactionResponse, type TransactionFields } from './transfer.schemas.js';
import { findReviewPayment, insertTransfer, isLogRecorded } from './transfers.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'>;

export type RecordDeps = Pick<Deps, 'db' | 'clock' | 'log' | 'config' | 'deliveriesQueued'>;

export interface RecordedTransfer {
  transfer: VerifiedTransfer;
  kind: ChainTransferKind;
  invoiceId: string | null;
  reason: UnmatchedReason | null;
}

/** Largest amount SQLite stores exactly here; a bigger transfer would exceed any token's supply in micro-units. */
const MAX_STORABLE = BigInt(Number.MAX_SAFE_INTEGER);

export interface TransferCommit {
  /** Final transfers of this network only (a `seen` one is refused: nothing confirms before finality). */
  transfers: readonly VerifiedTransfer[];
  state?: ScanState;
  /** A gap that shrank (or closed: `gap` undefined). */
  gap?: { oldFrom: number; gap: ScanGap | undefined };
  /** Where the network's scan stands once this commits, for expiry; absent (nothing expires) for a payer's transaction id. */
  unscanned?: Omit<Unscanned, 'network'>;
}

/** The micro-units of a transfer: exact, or those below its value (it has digits below 10^-6), never rounded up. */
function microsOf(t: VerifiedTransfer, decimals: number): { amount: Micros; inexact: boolean } {
  if (t.amount.exact) return { amount: t.amount.micros, inexact: false };
  return { amount: micros(t.raw / 10n ** BigInt(decimals - 6)), inexact: true };
}

/** A verified transfer in the fields of the API's `transaction` object. */
export function transactionFields(t: VerifiedTransfer, amount: Micros): TransactionFields {
  return {
    network: t.network,
    token: t.token,
    txHash: t.txHash,
    logIndex: t.logIndex,
    from: t.from,
    to: t.to,
    amount,
    rawAmount: t.raw,
    tokenContract: t.contract,
    blockNumber: Number(t.blockNumber),
    blockTimestamp: t.blockTimeMs,
  };
}

/** The (network, token contract) pairs of every enabled network, where a wrong payment may have been meant. */
function enabledTokens(deps: RecordDeps): Array<{ network: string; tokenContract: string }> {
  return deps.config.networks.flatMap((n) => n.tokens.map((t) => ({ network: n.id, tokenContract: t.contract })));
}

/** Records one final transfer and applies it to the invoices; undefined when it is recorded already (or cannot be). */
async function recordOne(
  deps: RecordDeps,
  trx: Trx,
  tx: Tx,
  network: Readonly<Network>,
  t: VerifiedTransfer,
  now: number,
): Promise<RecordedTransfer | undefined> {
  if (t.network !== network.id) throw new Error(`a transfer of ${t.network} handed to the ${network.id} watcher's commit`);
  if (t.finality !== 'final') throw new Error(`transfer ${t.txHash}:${t.logIndex} is not final; it cannot be recorded`);
  if (await isLogRecorded(trx, t.network, t.txHash, t.logIndex)) return undefined;
  const token = tokenByContract(network, t.contract);
  if (!token) throw new Error(`transfer ${t.txHash}:${t.logIndex} is of ${t.contract}, no pinned token of ${network.id}`);
  const { amount, inexact } = microsOf(t, token.decimals);
  if (amount > MAX_STORABLE) {
    deps.log.error({ network: t.network, tx_hash: t.txHash, log_index: t.logIndex, to: t.to }, 'chain: transfer amount too large to store; not recorded');
    return undefined;
  }
  const fields = transactionFields(t, amount);
  const payment = { network: t.network, tokenContract: t.contract, to: t.to, amount, inexact, txHash: t.txHash, blockTimestamp: t.blockTimeMs };
  const references = [...(t.reference !== undefined ? [t.reference] : []), ...(t.references ?? [])];
  const { kind, invoiceId } = await applyChainPayment(deps, trx, tx, { ...payment, transaction: toTransactionResponse(fields), references }, now);
  let reason: UnmatchedReason | null = null;
  if (kind === 'unmatched') reason = inexact ? 'inexact_amount' : invoiceId === null ? await unmatchedReason(trx, payment, enabledTokens(deps)) : null;
  await insertTransfer(
    trx,
    { ...fields, blockHash: t.blockHash === '' ? null : t.blockHash, kind, invoiceId, reason, token: token.symbol, tokenContract: token.contract },
    now,
  );
  await markSeenFinal(trx, t, now);
  if (kind === 'late' || kind === 'unmatched') await afterTransferRecorded(deps.config, trx, tx, t, now);
  return { transfer: t, kind, invoiceId, reason };
}

/**
 * One write transaction: the network's final transfers recorded and applied, its cursor or gap
 * moved, and its invoices expired as far as the scan covers their windows.
 */
export async function recordTransfers(
  deps: RecordDeps,
  network: Readonly<Network>,
  c: TransferCommit,
): Promise<{ recorded: RecordedTransfer[]; expired: Invoice[] }> {
  const now = deps.clock.now();
  const result = await writeTransaction(deps.db, async (trx, tx) => {
    const recorded: RecordedTransfer[] = [];
    for (const t of c.transfers) {
      const r = await recordOne(deps, trx, tx, network, t, now);
      if (r) recorded.push(r);
    }
    if (c.state) await saveScanState(trx, network, c.state, now);
    if (c.gap) await updateGap(trx, network, c.gap.oldFrom, c.gap.gap);
    const watched = new Set<string>(deps.config.networks.map((n) => n.id));
    const elsewhere = async (other: string) => {
      // A network this instance no longer watches will never scan: it holds nothing up.
      if (!watched.has(other)) return { scannedUntil: Number.MAX_SAFE_INTEGER, gaps: [] };
      const state = await loadScanState(trx, { id: other });
      if (!state) return undefined;
      const gaps = await listGaps(trx, { id: other });
      return { scannedUntil: state.cursorTime, gaps: gaps.map((g) => ({ after: g.afterTime, before: g.beforeTime })) };
    };
    const expired = c.unscanned ? await expireScanned(deps, trx, tx, { ...c.unscanned, network: network.id, elsewhere }, now) : [];
    return { recorded, expired };
  });
  // Events were committed with their deliveries: wake the delivery worker now, not at its next poll.
  if (result.expired.length > 0 || result.recorded.length > 0) deps.deliveriesQueued.notify();
  return result;
}

/** The registry entry of a network id (every id the watchers hand over is one). */
export function networkOf(id: string): Readonly<Network> {
  const network = findNetwork(id);
  if (!network) throw new Error(`unknown network ${id}`);
  return network;
}

/**
 * The transaction that paid a review invoice, as events show it (`data.transaction` of the owner's
 * accept decision); undefined when none is recorded. The invoices feature asks here rather than
 * reading chain_transfers, which the payments layer owns (docs/architecture.md, one owner per table).
 */
export async function reviewPaymentTransaction(db: Db | Trx, invoiceId: string): Promise<ReturnType<typeof toTransactionResponse> | undefined> {
  const transfer = await findReviewPayment(db, invoiceId);
  return transfer ? toTransactionResponse(transfer) : undefined;
}
