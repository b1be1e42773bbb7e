/**
 * Who may apply a transfer by hand to which invoice (docs/security.md, "Resolving payments on a
 * shared address"). The same rule decides POST /invoices/{id}/resolve and the choices the console
 * offers, so the console never offers what the API refuses.
 *
 * - On an address only this merchant registered, every transfer to it is theirs: any unpaid
 *   invoice of that address may take it (the console ranks them and states the difference).
 * - On an address several merchants registered (ownership is never verified), the merchant needs
 *   a plausible claim (claims.ts: `digits` or `window`), and it must not be weaker than the best
 *   claim an unpaid invoice of another merchant of the address has on the same transfer: a weaker
 *   kind, or the same kind with a larger amount difference, gives way (that merchant's customer
 *   most likely sent it). Equal claims: the first to apply it wins; the others see who did and may
 *   contest it (POST /transfers/{id}/contest).
 * - A transfer recorded against another merchant's invoice (a late or partial payment of it) is
 *   never theirs to apply (resolve.service.ts answers 404, as for any resource of another tenant).
 */
import type { Db, Trx } from '../db/database.js';
import type { ChainTransfer } from '../payments/transfer.model.js';
import { toDbAmount } from '../lib/amounts.js';
import type { NetworkId } from '../chains/networks.js';
import { listAddressOwners } from '../wallets/wallets.repo.js';
import { claimOf, closePayableRange, compareClaims, strongerThan, type Claim } from './claims.js';
import { rowToInvoice, type Invoice } from './invoice.model.js';
import { unpaidOnAddress } from './invoices.repo.js';

export type RefusalReason = 'no_plausible_claim' | 'stronger_claim_of_another';
export type ResolveVerdict = { ok: true; claim: Claim } | { ok: false; claim: Claim; reason: RefusalReason };

type ClaimTransfer = Pick<ChainTransfer, 'to' | 'amount' | 'blockTimestamp'>;

/** The network and token a transfer was made in: the other merchants' invoices that could claim it ask for the same. */
export interface TransferNetwork {
  id: NetworkId;
  usdtContract: string;
}

export function transferNetwork(t: Pick<ChainTransfer, 'network' | 'tokenContract'>): TransferNetwork {
  return { id: t.network, usdtContract: t.tokenContract };
}

/** The strongest claim an unpaid invoice of another merchant of the address has on the transfer (none when none is close). */
export async function bestClaimOfOthers(db: Db | Trx, network: TransferNetwork, merchantId: string, t: ClaimTransfer): Promise<Claim | undefined> {
  const { min, max } = closePayableRange(t.amount);
  const rows = await unpaidOnAddress(db, { network: network.id, tokenContract: network.usdtContract, address: t.to })
    .where('merchant_id', '!=', merchantId)
    .where('payable_amount', '>=', toDbAmount(min))
    .where('payable_amount', '<=', toDbAmount(max))
    .execute();
  // A claim reads the amounts and the window alone: the invoices' other options are not needed.
  const claims = rows.map((r) => ({ ...claimOf(t, rowToInvoice(r, [])), createdAt: r.created_at })).sort(compareClaims);
  return claims[0];
}

/** Whether the address is registered by more than one merchant (archived wallets count). */
export async function isSharedAddress(db: Db | Trx, network: TransferNetwork, address: string): Promise<boolean> {
  return (await listAddressOwners(db, network.id, address)).length > 1;
}

/** What the rule needs to know about the address and the other merchants, worked out once per transfer. */
export interface ResolveContext {
  shared: boolean;
  othersBest: Claim | undefined;
}

export async function resolveContext(db: Db | Trx, network: TransferNetwork, merchantId: string, t: ClaimTransfer): Promise<ResolveContext> {
  const shared = await isSharedAddress(db, network, t.to);
  return { shared, othersBest: shared ? await bestClaimOfOthers(db, network, merchantId, t) : undefined };
}

/** The rule for one transfer and one unpaid invoice of this merchant on the transfer's address. */
export function judgeResolve(t: ClaimTransfer, invoice: Pick<Invoice, 'payableAmount' | 'createdAt' | 'expiresAt'>, context: ResolveContext): ResolveVerdict {
  const claim = claimOf(t, invoice);
  if (!context.shared) return { ok: true, claim };
  if (claim.strength === 'none') return { ok: false, claim, reason: 'no_plausible_claim' };
  if (context.othersBest && strongerThan(context.othersBest, claim)) return { ok: false, claim, reason: 'stronger_claim_of_another' };
  return { ok: true, claim };
}
