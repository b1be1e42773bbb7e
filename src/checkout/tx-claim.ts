/**
 * "I already paid": a payer pastes a transaction id on the checkout, and the server looks it up on
 * the solidified chain at once instead of waiting for the scanner (which may lag behind a provider
 * outage). Nothing here confirms what the scanner would not:
 *
 * - the TransactionInfo comes from `/walletsolidity/gettransactioninfobyid` (solidified only) and
 *   is verified by the scanner's own verifier (SUCCESS only, the USDT contract's own Transfer logs,
 *   removed logs refused, the exact amount), for transfers to this invoice's address only;
 * - its block time must be credible (not before TRON's genesis, not in the future, not after the
 *   solidified head the scanner accepted; in an instance that does not run the scanner, several
 *   sharing one PostgreSQL database, not after the scanner's durable cursor: a block the scanner
 *   has read cannot be later than the last block time it recorded);
 * - with two or more providers, another provider must serve the same transaction with the same
 *   transfers, as the scanner's block reads must agree; when none can be asked now, or they
 *   disagree, nothing is recorded and the answer says the scanner will see it;
 * - it is recorded through the scanner's own commit (chain.service.ts): classification, events and
 *   webhooks are the same, and each (transaction, log) is recorded once, whoever sees it first.
 */
import { loadScanState } from '../payments/scan.repo.js';
import { findTransferBlocks } from '../payments/transfers.repo.js';
import { commitScan } from '../chain/chain.service.js';
import { FUTURE_SKEW_MS, GENESIS_TIME, scannedUntil } from '../chain/head.js';
import { TronApiError, type TronClient, type TxInfo } from '../chain/tron.client.js';
import { blockDigest, transfersInBlock, watchedSet } from '../chain/verifier.js';
import type { Invoice } from '../invoices/invoice.model.js';
import { AppError } from '../lib/errors.js';
import { findNetwork } from '../chains/networks.js';
import type { ChainRuntime } from '../chain/chain.runtime.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'deliveriesQueued'> & { chain: ChainRuntime };

/** The networks an invoice may still be paid on: its own, and its options' while they are open. */
function payableNetworks(invoice: Invoice): string[] {
  return [...new Set([invoice.network, ...invoice.options.filter((o) => o.status === 'open').map((o) => o.network)])];
}

/**
 * The payer's text as the hash of the invoice's network (or one of its options'): on an EVM network
 * `0x` and 64 hex digits, kept with its 0x as the EVM watchers store it; on TRON 64 hex digits, 0x
 * allowed and dropped. Lower case either way. Another form is 400 naming the form expected. With
 * `network` (the option the payer was shown), only that network's form is read; a network the
 * invoice is not payable on, or a Solana or TON one (their watchers see every payment; a TON hash
 * is 64 hex digits too, and must never be looked up as a TRON id), is 400 on `network`.
 */
export function claimedHash(invoice: Invoice, text: string, network?: string): { txHash: string; family: 'tron' | 'evm' } {
  const payable = payableNetworks(invoice);
  if (network !== undefined) {
    const named = payable.includes(network) ? findNetwork(network) : undefined;
    if (!named) {
      const message = `This invoice is not payable on ${network}: name one of ${payable.join(', ')}`;
      throw new AppError('validation_error', message, [{ path: 'network', message }]);
    }
    if (named.family !== 'tron' && named.family !== 'evm') {
      const message = `A payment on ${named.label} takes no transaction id here: its watcher sees it by itself once ${named.label} has finalized it`;
      throw new AppError('validation_error', message, [{ path: 'network', message }]);
    }
  }
  const networks = (network !== undefined ? [network] : payable).map((id) => findNetwork(id));
  const evm = networks.filter((n) => n?.family === 'evm');
  const tron = networks.some((n) => n?.family === 'tron');
  const lower = text.trim().toLowerCase();
  if (evm.length > 0 && /^0x[0-9a-f]{64}$/.test(lower)) return { txHash: lower, family: 'evm' };
  if (tron && /^(0x)?[0-9a-f]{64}$/.test(lower)) return { txHash: lower.replace(/^0x/, ''), family: 'tron' };
  const forms = [
    ...(tron ? ['64 hexadecimal characters on TRON'] : []),
    ...(evm.length > 0 ? [`0x and 64 hexadecimal characters on ${evm.map((n) => n!.label).join(', ')}`] : []),
  ];
  const seenAlone = networks.filter((n) => n && n.family !== 'tron' && n.family !== 'evm').map((n) => n!.label);
  const message =
    forms.length > 0
      ? `This invoice is paid on ${networks.map((n) => n?.label ?? '?').join(', ')}: its transaction id is ${forms.join(', or ')}` +
        (seenAlone.length > 0 ? `; a payment on ${seenAlone.join(', ')} takes none, it is seen automatically` : '')
      : "This invoice's network takes no transaction id here; its payment is seen automatically";
  throw new AppError('validation_error', message, [{ path: 'tx_hash', message }]);
}

/**
 * "I already paid" on an EVM network: the EVM watchers read every block of each network they
 * watch (logs compared between providers, confirmed at the network's finality rule), so a hash is
 * answered from what is recorded (`already_recorded`), or `deferred`: the watcher records it once
 * the network has finalized it. Nothing is recorded on the payer's word or one provider's.
 */
export async function claimEvmTransaction(deps: Deps, invoice: Invoice, txHash: string): Promise<ClaimResult> {
  const addresses = [...new Set([invoice.walletAddress, ...invoice.options.map((o) => o.walletAddress)])];
  const recorded = await deps.db
    .selectFrom('chain_transfers')
    .select('id')
    .where('tx_hash', '=', txHash)
    .where('to_address', 'in', addresses)
    .limit(1)
    .executeTakeFirst();
  if (recorded) return { outcome: 'already_recorded', reason: null };
  return { outcome: 'deferred', reason: 'Not recorded yet: the watcher of this network records it once the network has finalized its block' };
}

/** Lookups a minute for one invoice, and for one client address (IPv6 by its /64). */
export const CLAIMS_PER_INVOICE_PER_MINUTE = 5;
export const CLAIMS_PER_IP_PER_MINUTE = 20;

export type ClaimOutcome = 'recorded' | 'already_recorded' | 'deferred';

export interface ClaimResult {
  outcome: ClaimOutcome;
  /** Why the transaction was not recorded now (deferred). */
  reason: string | null;
}

function notAccepted(message: string, reason: string): AppError {
  return new AppError('transaction_not_accepted', message, [{ path: 'tx_hash', message, reason }]);
}

/** Looks `txHash` up and records what it pays to the invoice's address; throws the documented errors. */
export async function claimTransaction(deps: Deps, invoice: Invoice, txHash: string): Promise<ClaimResult> {
  const rt = deps.chain;
  const now = () => deps.clock.now();
  const recorded = await deps.db
    .selectFrom('chain_transfers')
    .select('id')
    .where('tx_hash', '=', txHash)
    .where('to_address', '=', invoice.walletAddress)
    .limit(1)
    .executeTakeFirst();
  if (recorded) return { outcome: 'already_recorded', reason: null };

  const watched = watchedSet([invoice.walletAddress]);
  const usdt = deps.config.network.usdtContract;
  const fn = (c: TronClient) => c.txInfo(txHash);
  let first: { value: TxInfo | undefined; provider: (typeof rt.pool.providers)[number] };
  try {
    first = await rt.pool.call(now, fn);
  } catch (err) {
    if (!(err instanceof TronApiError)) throw err;
    deps.log.warn({ kind: err.kind, endpoint: err.endpoint }, 'checkout: transaction lookup failed on every provider');
    throw new AppError('chain_unavailable', 'The TRON network cannot be asked right now; the payment will be seen by the scanner').withHeader(
      'Retry-After',
      '60',
    );
  }
  const info = first.value;
  if (!info) {
    throw new AppError(
      'transaction_not_found',
      'No solidified transaction with this id yet. A payment solidifies about a minute after it is sent; check the id or try again shortly',
    );
  }
  const time = info.blockTimeStamp;
  const head = rt.head ?? scannedUntil(await loadScanState(deps.db, deps.config.network));
  if (time < GENESIS_TIME || time > now() + FUTURE_SKEW_MS || (head && info.blockNumber <= head.number && time > head.timestamp)) {
    deps.log.warn(
      { tx_hash: txHash, block: info.blockNumber, provider: first.provider.health.name },
      'checkout: transaction info with an incredible block time refused',
    );
    return { outcome: 'deferred', reason: 'The transaction could not be verified now; the scanner will see it' };
  }
  // A failed execution pays nothing, whatever logs it carries (java-tron keeps none for most).
  const failed = info.receipt?.result !== 'SUCCESS' || info.result === 'FAILED';
  const found = transfersInBlock([info], watched, usdt);
  if (failed || found.rejected.length > 0) throw notAccepted('This transaction did not succeed on the chain, so it paid nothing', 'failed');
  if (found.transfers.length === 0) {
    throw notAccepted("This transaction pays no USDT to this invoice's address", 'no_usdt_transfer');
  }
  if (rt.pool.providers.length > 1) {
    const second = await rt.pool.callOther(now, fn, [first.provider]);
    if (!second || !second.value) return { outcome: 'deferred', reason: 'A second TRON provider cannot confirm the transaction now; the scanner will see it' };
    const again = transfersInBlock([second.value], watched, usdt);
    if (second.value.blockNumber !== info.blockNumber || blockDigest(again) !== blockDigest(found)) {
      deps.log.error(
        { tx_hash: txHash, first_provider: first.provider.health.name, second_provider: second.provider.health.name },
        'checkout: two providers disagree about a transaction a payer named; nothing recorded',
      );
      return { outcome: 'deferred', reason: 'The TRON providers do not agree about this transaction yet; the scanner will see it' };
    }
  }
  const elsewhere = await findTransferBlocks(deps.db, deps.config.network.id, [txHash], info.blockNumber);
  if (elsewhere.length > 0) return { outcome: 'deferred', reason: 'The transaction could not be verified now; the scanner will see it' };
  const { recorded: done } = await commitScan(deps, { transfers: found.transfers });
  for (const r of done) {
    deps.log.info(
      { tx_hash: r.transfer.txHash, log_index: r.transfer.logIndex, block: r.transfer.blockNumber, kind: r.kind, invoice_id: r.invoiceId },
      'chain: transfer recorded from a payer-named transaction',
    );
  }
  return { outcome: done.length > 0 ? 'recorded' : 'already_recorded', reason: null };
}
