/**
 * Resolving a wrong payment by hand (POST /invoices/{id}/resolve, owner session): the owner applies
 * a verified unmatched or late transfer to an unpaid invoice of the same wallet. The invoice becomes
 * confirmed with that transaction and records the amount really received; invoice.confirmed says
 * `resolution: "manual"` and carries the transfer. A transfer pays at most one invoice. On an
 * address several merchants share, only a plausible claim may apply it (resolve-policy.ts).
 */
import { writeTransaction } from '../db/database.js';
import { insertEvent } from '../events/events.repo.js';
import { AppError } from '../lib/errors.js';
import { findTransferByLog } from '../payments/transfers.repo.js';
import { toTransactionResponse } from '../payments/transfer.schemas.js';
import { findMerchantWalletByAddress } from '../wallets/wallets.repo.js';
import type { Invoice } from './invoice.model.js';
import { toInvoiceResponse } from './invoices.schemas.js';
import { findMerchantInvoice } from './invoices.repo.js';
import { judgeResolve, resolveContext, transferNetwork } from './resolve-policy.js';
import { confirmByResolution, findResolutionByTransfer, insertResolution } from './resolutions.repo.js';
import { canStart } from './invoice.states.js';
import { parseAmount } from '../lib/amounts.js';
import { settleOptions } from './invoice-options.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'sqlite' | 'config' | 'clock' | 'deliveriesQueued'>;

type ResolveDeps = Pick<Deps, 'db' | 'sqlite' | 'config' | 'clock' | 'deliveriesQueued'>;

export interface ResolveRequest {
  merchantId: string;
  invoiceId: string;
  txHash: string;
  logIndex: number;
}

export async function resolveInvoice(deps: ResolveDeps, req: ResolveRequest): Promise<Invoice> {
  const updated = await writeTransaction(deps.db, async (trx, tx) => {
    const now = deps.clock.now();
    const invoice = await findMerchantInvoice(trx, req.merchantId, req.invoiceId);
    if (!invoice) throw new AppError('not_found', 'Invoice not found');
    const transfer = await findTransferByLog(trx, req.txHash, req.logIndex);
    // A transfer to none of the caller's addresses, or a late payment of another merchant's
    // invoice on a shared address, is not theirs to apply: 404, as for any resource of another tenant.
    const own = transfer ? await findMerchantWalletByAddress(trx, transfer.network, req.merchantId, transfer.to) : undefined;
    // A late or partial payment recorded against another merchant's invoice is theirs.
    const ofOther = transfer?.invoiceId != null && (await findMerchantInvoice(trx, req.merchantId, transfer.invoiceId)) === undefined;
    if (!transfer || !own || ofOther) {
      throw new AppError('not_found', 'No verified transfer with this tx_hash and log_index reached one of your wallets');
    }
    if (transfer.kind !== 'unmatched' && transfer.kind !== 'late') {
      throw new AppError('transfer_already_used', 'This transfer already paid an invoice automatically; a transfer pays at most one invoice');
    }
    const earlier = await findResolutionByTransfer(trx, transfer.id);
    if (earlier) throw new AppError('transfer_already_used', 'This transfer was already applied to an invoice; a transfer pays at most one invoice');
    if (transfer.to !== invoice.walletAddress) {
      throw new AppError('invoice_not_resolvable', "The transfer went to another wallet than this invoice's; apply it to an invoice of that wallet", [
        { path: 'tx_hash', message: `paid ${transfer.to}, the invoice's wallet is ${invoice.walletAddress}` },
      ]);
    }
    if (invoice.txHash !== null || !canStart('resolve', invoice.status)) {
      throw new AppError(
        'invoice_not_resolvable',
        `This invoice is already ${invoice.status === 'confirmed' ? 'paid' : `${invoice.status} with a recorded payment`}`,
      );
    }
    const verdict = judgeResolve(transfer, invoice, await resolveContext(trx, transferNetwork(transfer), req.merchantId, transfer));
    if (!verdict.ok) {
      throw new AppError(
        'invoice_not_resolvable',
        verdict.reason === 'stronger_claim_of_another'
          ? "Several merchants share this address, and an unpaid invoice of another merchant matches this transfer better (its last six decimals, or a smaller difference): it is most likely their customer's payment"
          : "Several merchants share this address, and this transfer is not plausibly a payment of this invoice: its amount is not within 10% (or 2 USDT) of the invoice's, or neither its last six decimals nor its time match the invoice",
        [{ path: 'tx_hash', message: 'no plausible claim on a shared address', reason: verdict.reason }],
      );
    }
    if (
      !(await confirmByResolution(trx, invoice.id, transfer.txHash, transfer.amount, now, {
        resolution: 'manual',
        addToReceived: transfer.invoiceId !== invoice.id,
      }))
    ) {
      throw new AppError('invoice_not_resolvable', 'This invoice changed meanwhile; reload it');
    }
    await insertResolution(trx, {
      invoiceId: invoice.id,
      transferId: transfer.id,
      merchantId: req.merchantId,
      previousStatus: invoice.status,
      resolvedAt: now,
    });
    // Paid on its own address: the invoice's other options, if any, are released.
    await settleOptions(trx, invoice, undefined, now, parseAmount(deps.config.invoices.max_adjustment)!);
    const after = (await findMerchantInvoice(trx, req.merchantId, invoice.id))!;
    await insertEvent(
      tx,
      {
        merchantId: req.merchantId,
        type: 'invoice.confirmed',
        invoiceId: invoice.id,
        data: { invoice: toInvoiceResponse(after, deps.config.server.public_url), transaction: toTransactionResponse(transfer), resolution: 'manual' },
      },
      now,
    );
    return after;
  });
  deps.deliveriesQueued.notify();
  return updated;
}
