/**
 * What every watcher does with the transfers its two providers read otherwise (compareReads): each
 * one's block (or position, on Solana and TON) becomes a durable dispute, told once to the log and
 * to the support staff, and a one-position unread range around its time, so only the invoices whose
 * window meets it wait while the rest of the range is recorded.
 */
import type { Disagreement } from '../chains/agreement.js';
import type { Network } from '../chains/networks.js';
import { formatAmount } from '../lib/amounts.js';
import { notifyDispute } from './dispute-mail.js';
import { holdDispute, insertGap, type ScanGap } from './scan.repo.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { mailer: Mailer };

/** Each provider's version of a disputed transfer, in words. */
export function describeDisagreement(d: Disagreement): string {
  return d.versions
    .map(
      (v) =>
        `${v.provider}: ${v.transfer ? `${v.transfer.amount.exact ? formatAmount(v.transfer.amount.micros) : `${v.transfer.raw} (raw)`} ${v.transfer.token} to ${v.transfer.to}` : 'no such transfer'}`,
    )
    .join('; ');
}

/** Holds each disputed transfer's block; `gaps` (the network's unread ranges) gains the new ones. */
export async function holdDisagreements(
  deps: Pick<Deps, 'db' | 'clock' | 'log' | 'config' | 'mailer'>,
  network: Readonly<Network>,
  disagreements: readonly Disagreement[],
  gaps: ScanGap[],
): Promise<void> {
  for (const d of disagreements) {
    const t = d.versions.find((v) => v.transfer)!.transfer!;
    const block = Number(t.blockNumber);
    const versions = describeDisagreement(d);
    const { dispute, created } = await holdDispute(
      deps.db,
      network,
      { block, txHash: t.txHash, reason: `providers disagree about ${d.key}: ${versions}` },
      deps.clock.now(),
    );
    if (created) {
      deps.log.error(
        { network: network.id, block, tx_hash: t.txHash, log_index: t.logIndex, versions },
        'chain: TRANSFER DISPUTED: the providers do not agree on it; nothing from it is confirmed; its block is held and read again',
      );
      void notifyDispute(deps, network, dispute);
    }
    if (gaps.some((g) => g.fromBlock <= block && block <= g.toBlock)) continue;
    const gap: ScanGap = { fromBlock: block, toBlock: block, afterTime: t.blockTimeMs - 1, beforeTime: t.blockTimeMs + 1 };
    await insertGap(deps.db, network, gap);
    gaps.push(gap);
  }
}
