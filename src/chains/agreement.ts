/**
 * Two providers' reads of one range compared, transfer by transfer (by the dedupe key): a transfer
 * one provider shows and the other does not (an omission, or a forgery), or that they show with
 * different contents, is a disagreement, never a payment on one provider's word. Chain-neutral: the
 * core decides what a disagreement holds up (a third provider, a durable dispute).
 */
import { transferKey, type VerifiedTransfer } from './family.js';

export interface ProviderRead {
  provider: string;
  transfers: readonly VerifiedTransfer[];
}

export interface Disagreement {
  key: string;
  /** Each provider's version of the transfer, undefined where it has none. */
  versions: Array<{ provider: string; transfer: VerifiedTransfer | undefined }>;
}

/** The fields two honest providers answer alike (finality is the reader's own call, and not compared). */
function sameTransfer(a: VerifiedTransfer, b: VerifiedTransfer): boolean {
  return (
    a.contract === b.contract &&
    a.from === b.from &&
    a.to === b.to &&
    a.raw === b.raw &&
    a.blockNumber === b.blockNumber &&
    a.blockHash === b.blockHash &&
    a.blockTimeMs === b.blockTimeMs &&
    a.reference === b.reference &&
    (a.references ?? []).join(',') === (b.references ?? []).join(',')
  );
}

/** The transfers every provider shows alike, and every one they do not agree on. */
export function compareReads(reads: readonly ProviderRead[]): { agreed: VerifiedTransfer[]; disagreements: Disagreement[] } {
  const byKey = new Map<string, Array<VerifiedTransfer | undefined>>();
  reads.forEach((read, i) => {
    for (const t of read.transfers) {
      const key = transferKey(t);
      const row = byKey.get(key) ?? reads.map(() => undefined);
      row[i] = t;
      byKey.set(key, row);
    }
  });
  const agreed: VerifiedTransfer[] = [];
  const disagreements: Disagreement[] = [];
  for (const [key, row] of byKey) {
    const first = row[0];
    if (first && row.every((t) => t !== undefined && sameTransfer(first, t))) agreed.push(first);
    else disagreements.push({ key, versions: row.map((transfer, i) => ({ provider: reads[i]!.provider, transfer })) });
  }
  return { agreed, disagreements };
}

/**
 * Disagreements put to a third provider's read of their blocks: where two of the three show the same
 * version (the same transfer, or none), that version stands: a transfer two show is agreed, one only
 * the outvoted provider shows (a forgery) is no payment; `outvoted` names the provider left alone.
 * Where all three differ (or the third read nothing alike), the disagreement stays, as a dispute.
 */
export function settleByMajority(
  disagreements: readonly Disagreement[],
  third: ProviderRead,
): { agreed: VerifiedTransfer[]; outvoted: Array<{ key: string; provider: string }>; left: Disagreement[] } {
  const byKey = new Map(third.transfers.map((t) => [transferKey(t), t]));
  const agreed: VerifiedTransfer[] = [];
  const outvoted: Array<{ key: string; provider: string }> = [];
  const left: Disagreement[] = [];
  const same = (a: VerifiedTransfer | undefined, b: VerifiedTransfer | undefined) =>
    a === undefined ? b === undefined : b !== undefined && sameTransfer(a, b);
  for (const d of disagreements) {
    const thirdVersion = byKey.get(d.key);
    const backed = d.versions.filter((v) => same(v.transfer, thirdVersion));
    if (d.versions.length !== 2 || backed.length !== 1) {
      left.push({ ...d, versions: [...d.versions, { provider: third.provider, transfer: thirdVersion }] });
      continue;
    }
    if (thirdVersion) agreed.push(thirdVersion);
    outvoted.push({ key: d.key, provider: d.versions.find((v) => v !== backed[0])!.provider });
  }
  return { agreed, outvoted, left };
}
