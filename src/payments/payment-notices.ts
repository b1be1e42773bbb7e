/**
 * Owner notices of payments that need a look (email.payment_notices): an unmatched transfer to one
 * of the owner's wallets, or a late payment of one of their invoices.
 *
 * - Queued in the transaction that records the transfer (queuePaymentNotices), one row per
 *   transfer and owner, so a notice is neither lost (mail server down, process stopped) nor sent
 *   twice for the same transfer.
 * - Sent by the payment-notices worker: one mail per owner and pass, listing the waiting transfers,
 *   so a burst of transfers (or someone spraying small amounts at an address) is one mail, not one
 *   each. A refused mail is retried with a growing pause (1 minute doubling to 6 hours).
 * - Nothing anyone else typed is in it: amounts, addresses, transaction hashes and invoice ids only
 *   (never an order id, a description or a wallet label), in the owner's language.
 */
import type { Config } from '../config.js';
import type { Trx } from '../db/database.js';
import { renderMail } from '../accounts/account-mail.js';
import { formatAmount, fromDbAmount, parseAmount } from '../lib/amounts.js';
import { HOUR, MINUTE } from '../lib/clock.js';
import { resolveLocale, translator } from '../lib/i18n.js';
import type { Worker } from '../lib/loop.js';
import { findTransferByLog } from './transfers.repo.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import { listAddressOwners } from '../wallets/wallets.repo.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { mailer: Mailer };

/**
 * Unmatched transfers below tron.dust_threshold (0.01 USDT by default) are not worth a mail:
 * zero-value and tiny address-poisoning transfers. They are still recorded, and the console folds them.
 */
function noticeMinUnmatched(config: Config): bigint {
  return parseAmount(config.tron.dust_threshold) ?? 0n;
}
/** Transfers listed in one mail; the rest wait for the next pass (the mail says how many). */
const PER_MAIL = 20;
const MAX_BACKOFF = 6 * HOUR;

/** On when email.payment_notices is true and mail can be sent (email.smtp_url). */
export function paymentNoticesOn(config: Config): boolean {
  return config.email.payment_notices && config.email.smtp_url !== '';
}

/**
 * Called where a transfer is recorded, in the same transaction: queues one notice per owner when it
 * is unmatched (every owner of a wallet on its address, archived wallets too), or late or a partial
 * payment (the owner of the invoice). Other kinds, and unmatched dust, queue nothing.
 */
export async function queuePaymentNotices(config: Config, trx: Trx, log: { network: string; txHash: string; logIndex: number }, now: number): Promise<void> {
  if (!paymentNoticesOn(config)) return;
  const transfer = await findTransferByLog(trx, log.txHash, log.logIndex, log.network);
  if (!transfer) return;
  let owners: string[] = [];
  // A late or partial payment is its invoice's owner's alone.
  if (transfer.invoiceId !== null) {
    const invoice = await findInvoiceAnyMerchant(trx, transfer.invoiceId);
    owners = invoice ? [invoice.merchantId] : [];
  } else if (transfer.kind === 'unmatched' && transfer.amount >= noticeMinUnmatched(config)) {
    owners = await listAddressOwners(trx, transfer.network, transfer.to);
  }
  if (owners.length === 0) return;
  await trx
    .insertInto('payment_notices')
    .values(owners.map((merchantId) => ({ transfer_id: transfer.id, merchant_id: merchantId, created_at: now, next_attempt_at: now })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

interface DueNotice {
  transfer_id: string;
  merchant_id: string;
  attempts: number;
  kind: string;
  amount: number;
  tx_hash: string;
  to_address: string;
  invoice_id: string | null;
  email: string;
  name: string;
  locale: string | null;
}

function composeNotice(publicUrl: string, owner: DueNotice, items: DueNotice[], waiting: number) {
  const locale = resolveLocale(owner.locale ?? undefined);
  const t = translator(locale);
  const lines = items.map((n) =>
    t(n.kind === 'late' ? 'email.payment.late' : 'email.payment.unmatched', {
      amount: formatAmount(fromDbAmount(n.amount)),
      address: n.to_address,
      invoice: n.invoice_id ?? '',
      tx: n.tx_hash,
    }),
  );
  if (waiting > items.length) lines.push(t('email.payment.more', { count: String(waiting - items.length) }));
  return renderMail(publicUrl, locale, owner.email, {
    subject: t('email.payment.subject', { count: String(waiting) }),
    greeting: t('email.common.greeting', { name: owner.name }),
    paragraphs: [t('email.payment.intro'), ...lines],
    button: t('email.payment.button'),
    url: `${publicUrl.replace(/\/+$/, '')}/console/transfers`,
    notes: [t('email.payment.why')],
  });
}

/** One pass: one mail per owner with due notices. Returns true when more may be due at once. */
export async function runOnce(deps: Deps): Promise<boolean> {
  if (!paymentNoticesOn(deps.config)) return false;
  const now = deps.clock.now();
  const due = (await deps.db
    .selectFrom('payment_notices as n')
    .innerJoin('chain_transfers as t', 't.id', 'n.transfer_id')
    .innerJoin('merchants as m', 'm.id', 'n.merchant_id')
    .select([
      'n.transfer_id',
      'n.merchant_id',
      'n.attempts',
      't.kind',
      't.amount',
      't.tx_hash',
      't.to_address',
      't.invoice_id',
      'm.email',
      'm.name',
      'm.locale',
    ])
    .where('n.sent_at', 'is', null)
    .where('n.next_attempt_at', '<=', now)
    .orderBy('n.next_attempt_at')
    .orderBy('t.block_timestamp')
    .limit(1000)
    .execute()) as DueNotice[];
  const byOwner = new Map<string, DueNotice[]>();
  for (const n of due) byOwner.set(n.merchant_id, [...(byOwner.get(n.merchant_id) ?? []), n]);
  let more = false;
  for (const [merchantId, notices] of byOwner) {
    const items = notices.slice(0, PER_MAIL);
    if (notices.length > PER_MAIL) more = true;
    const result = await deps.mailer.send({ ...composeNotice(deps.config.server.public_url, notices[0]!, items, notices.length), kind: 'payment.notice' });
    const ids = items.map((n) => n.transfer_id);
    const attempts = Math.max(...items.map((n) => n.attempts)) + 1;
    await deps.db
      .updateTable('payment_notices')
      .set(result.accepted ? { sent_at: now } : { attempts, next_attempt_at: now + Math.min(MINUTE * 2 ** (attempts - 1), MAX_BACKOFF) })
      .where('merchant_id', '=', merchantId)
      .where('transfer_id', 'in', ids)
      .execute();
    deps.log.info({ merchant_id: merchantId, transfers: items.length, sent: result.accepted }, 'payment notice');
  }
  return more;
}

export function paymentNoticesWorker(deps: Deps): Worker {
  return { name: 'payment-notices', intervalMs: MINUTE, runOnce: () => runOnce(deps) };
}
