/**
 * What the console offers for applying a wrong payment by hand, from either side: for a transfer
 * (the Transfers page) the owner's unpaid invoices of the address it reached, and for an unpaid
 * invoice (its page) the transfers to its address that may be for it. Both are ranked by claims.ts
 * and filtered by the rule the API enforces (resolve-policy.ts); nothing is preselected, and each
 * choice carries its own confirmation stating both amounts and the difference in words.
 */
import { findNetwork, tokenByContract } from '../chains/networks.js';
import type { ChainTransfer } from '../payments/transfer.model.js';
import { listUnmatchedTransfers } from '../payments/transfers.repo.js';
import type { Db } from '../db/database.js';
import { listUnpaidInvoices } from '../dashboard/dashboard.repo.js';
import { rankInvoices, rankTransfers, type Claim } from '../invoices/claims.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { appliedTransfers, type AppliedTransfer } from '../dashboard/transfers.repo.js';
import { judgeResolve, resolveContext, transferNetwork } from '../invoices/resolve-policy.js';
import { formatAmount, micros, type Micros } from '../lib/amounts.js';
import type { PageContext } from './render.js';
import { run, translateHtml } from './runs.js';

/** Choices shown per transfer or per invoice. */
const MAX_CHOICES = 10;

export interface ResolveChoice {
  /** The invoice (on the Transfers page) or the transfer (on an invoice page) chosen. */
  invoiceId: string;
  order: string;
  payable: string;
  received: string;
  status: string;
  strength: Claim['strength'];
  /** "4.500000 received for an invoice of 30.000001: 25.500001 short", in the page's language (plain text, for the confirmation). */
  difference: string;
  /** The same sentence as escaped markup, each amount its own isolated run. */
  differenceHtml: string;
  confirm: string;
}

/** A transfer as the resolve forms show it: who applied it, or what it may pay. */
export type TransferRow = ChainTransfer & {
  /** The network's plain name, as the payer was shown it. */
  networkLabel: string;
  /** The whole on-chain value with every decimal of the token, when it has digits below the sixth; null otherwise. */
  exactAmount: string | null;
  applied: (AppliedTransfer & { mine: boolean; contestedByMe: boolean }) | null;
  choices: ResolveChoice[];
  /** On a shared address, unpaid invoices of the owner that the rule does not let take it. */
  refused: number;
};

function differenceKey(received: Micros, payable: Micros): string {
  return received === payable ? 'console.resolve.exact' : received < payable ? 'console.resolve.short' : 'console.resolve.over';
}

function differenceParams(received: Micros, payable: Micros) {
  return {
    received: formatAmount(received),
    payable: formatAmount(payable),
    diff: formatAmount(micros(received > payable ? received - payable : payable - received)),
  };
}

export function differenceText(ctx: PageContext, received: Micros, payable: Micros): string {
  return ctx.t(differenceKey(received, payable), differenceParams(received, payable));
}

/** differenceText as markup: every amount an isolated run, so right-to-left pages keep them whole. */
export function differenceHtml(ctx: PageContext, received: Micros, payable: Micros): string {
  const p = differenceParams(received, payable);
  return translateHtml(ctx.t, differenceKey(received, payable), { received: run(p.received), payable: run(p.payable), diff: run(p.diff) });
}

function choice(ctx: PageContext, inv: Invoice, t: ChainTransfer, claim: Claim): ResolveChoice {
  const difference = differenceText(ctx, t.amount, inv.payableAmount);
  return {
    invoiceId: inv.id,
    order: inv.merchantOrderId,
    payable: formatAmount(inv.payableAmount),
    received: formatAmount(t.amount),
    status: ctx.t(`console.status.${inv.status}`),
    strength: claim.strength,
    difference,
    differenceHtml: differenceHtml(ctx, t.amount, inv.payableAmount),
    confirm: ctx.t('console.resolve.confirm', { order: inv.merchantOrderId, difference }),
  };
}

/** The network's name and, for a value with digits below the micro-unit, the whole value (never rounded). */
function shown(x: ChainTransfer): Pick<TransferRow, 'networkLabel' | 'exactAmount'> {
  const network = findNetwork(x.network);
  const decimals = (network && tokenByContract(network, x.tokenContract)?.decimals) ?? 6;
  const scale = 10n ** BigInt(decimals - 6);
  if (x.rawAmount % scale === 0n) return { networkLabel: network?.label ?? x.network, exactAmount: null };
  const unit = 10n ** BigInt(decimals);
  const digits = (x.rawAmount % unit).toString().padStart(decimals, '0').replace(/0+$/, '');
  return { networkLabel: network?.label ?? x.network, exactAmount: `${x.rawAmount / unit}.${digits}` };
}

/** The owner's choices for each transfer (the Transfers page), and who applied those already applied. */
export async function transferRows(db: Db, ctx: PageContext, merchantId: string, transfers: ChainTransfer[]): Promise<TransferRow[]> {
  const applied = await appliedTransfers(
    db,
    transfers.map((x) => x.id),
  );
  const unpaid = await listUnpaidInvoices(db, merchantId);
  const rows: TransferRow[] = [];
  for (const x of transfers) {
    const a = applied.get(x.id);
    if (a) {
      rows.push({
        ...x,
        ...shown(x),
        applied: { ...a, mine: a.merchantId === merchantId, contestedByMe: a.contests.some((c) => c.merchantId === merchantId) },
        choices: [],
        refused: 0,
      });
      continue;
    }
    const own = unpaid.filter((inv) => inv.walletAddress === x.to);
    const context = own.length > 0 ? await resolveContext(db, transferNetwork(x), merchantId, x) : { shared: false, othersBest: undefined };
    const choices: ResolveChoice[] = [];
    let refused = 0;
    for (const { invoice, claim } of rankInvoices(x, own)) {
      if (!judgeResolve(x, invoice, context).ok) refused += 1;
      else if (choices.length < MAX_CHOICES) choices.push(choice(ctx, invoice, x, claim));
    }
    rows.push({ ...x, ...shown(x), applied: null, choices, refused });
  }
  return rows;
}

/** "Payments to this address that may be for this invoice": unapplied unmatched transfers to its address with a plausible claim that the rule lets it take, ranked. */
export async function invoiceChoices(
  db: Db,
  ctx: PageContext,
  merchantId: string,
  invoice: Invoice,
  minAmount: number,
): Promise<Array<ChainTransfer & { choice: ResolveChoice }>> {
  if (invoice.txHash !== null || !['pending', 'expired', 'review'].includes(invoice.status)) return [];
  const transfers = (await listUnmatchedTransfers(db, { id: invoice.network }, merchantId, 500, minAmount)).filter(
    (x) => x.to === invoice.walletAddress && (x.invoiceId === null || x.invoiceId === invoice.id),
  );
  const applied = await appliedTransfers(
    db,
    transfers.map((x) => x.id),
  );
  const out: Array<ChainTransfer & { choice: ResolveChoice }> = [];
  for (const { transfer, claim } of rankTransfers(
    invoice,
    transfers.filter((x) => !applied.has(x.id)),
  )) {
    if (out.length >= MAX_CHOICES) break;
    if (claim.strength === 'none' || !judgeResolve(transfer, invoice, await resolveContext(db, transferNetwork(transfer), merchantId, transfer)).ok) continue;
    out.push({ ...transfer, choice: choice(ctx, invoice, transfer, claim) });
  }
  return out;
}
