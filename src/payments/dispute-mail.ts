/**
 * A mail to the support staff (support.staff_emails, when email.staff_notify is on) for each new
 * disputed block: plain text in English like the other staff mails, best effort, sent after the
 * dispute is held and never awaited by the scanner. Once a dispute: the scanner sends it only when
 * it creates the durable row (chain_disputes), never for a dispute seen again, in a later pass or
 * after a restart; notified_at records that it went.
 */
import type { Network } from '../chains/networks.js';
import { markDisputeNotified, type DisputeRow as Dispute } from './scan.repo.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { mailer: Mailer };

type MailDeps = Pick<Deps, 'config' | 'mailer' | 'db' | 'clock' | 'log'>;

/** What a network's providers are called in the mail, and where the operator takes one out. */
function providersOf(network: Readonly<Network>): { who: string; key: string } {
  if (network.family === 'tron') return { who: 'TRON providers', key: 'tron.providers' };
  return { who: `${network.label} providers`, key: `the providers of ${network.id} ([[${network.family}.networks]])` };
}

export function disputeMail(deps: Pick<Deps, 'config'>, network: Readonly<Network>, d: Dispute): { subject: string; text: string } {
  const { who, key } = providersOf(network);
  const tron = network.family === 'tron';
  const lines = [
    `The ${who} disagree about ${tron ? 'block' : 'a transfer in block'} ${d.block} (${network.id}).`,
    '',
    `Reason: ${d.reason}`,
    ...(d.txHash ? [`Transaction: ${d.txHash}`] : []),
    `Since:  ${new Date(d.since).toISOString()}`,
    '',
    ...(tron ? ['The providers disagree about it even when asked for the transaction by id. Nothing from this'] : ['Nothing from this']),
    'block confirms an invoice, and no invoice whose window meets it expires, until the providers',
    'agree; the scanner reads it again. Other invoices are not held: the blocks after it go on',
    'confirming payments, and live payments stay on.',
    `Compare the block with a block explorer, take a provider that is wrong out of ${key},`,
    'and see `gatewayd chain status` and docs/operations.md ("A payment I know was made is not shown").',
    '',
    deps.config.server.public_url,
    '',
    '-- gatewayd',
  ];
  return { subject: `Payments held: ${tron ? 'TRON' : network.label} block ${d.block} is disputed`, text: lines.join('\n') };
}

/** Starts the mails and returns at once; the promise never rejects. */
export function notifyDispute(deps: MailDeps, network: Readonly<Network>, d: Dispute): Promise<void> {
  const recipients = deps.config.support.staff_emails;
  if (!deps.config.email.staff_notify || !deps.mailer.available || recipients.length === 0) return Promise.resolve();
  const mail = disputeMail(deps, network, d);
  const run = async () => {
    let sent = 0;
    for (const to of recipients) if ((await deps.mailer.send({ to, kind: 'chain.dispute', ...mail })).accepted) sent += 1;
    if (sent > 0) await markDisputeNotified(deps.db, d.id, deps.clock.now());
    deps.log.info({ network: network.id, block: d.block, sent, recipients: recipients.length }, 'chain: support staff told of a disputed block');
  };
  return run().catch((err: unknown) => {
    deps.log.warn({ network: network.id, block: d.block, err: (err as Error).message }, 'chain: dispute mail failed');
  });
}
