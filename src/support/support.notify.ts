/**
 * Support mail, plain text in English, best effort: sent after the change has committed, never
 * awaited by the request, never failing it.
 * - Staff (email.staff_notify in docs/configuration.md): every address on support.staff_emails, for
 *   each new ticket and each customer message.
 * - The merchant, when the staff answer a dashboard ticket (they should not have to watch the
 *   console for it). Visitors get nothing: the contact form is answered by the team's own mail and
 *   a chat is answered on the page.
 */
import type { InboxTicket } from './support.repo.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'config' | 'log'> & { mailer: Mailer };

const SOURCE_TEXT = {
  dashboard: 'merchant dashboard',
  contact: 'contact form',
  chat: 'website chat',
} as const;

export interface StaffNotice {
  kind: 'new_ticket' | 'customer_message';
  ticket: InboxTicket;
  body: string;
}

/**
 * One line, no control characters: what people typed (a name, a subject) must not shape a mail,
 * neither a header nor the lines of its body. Used for every such value a mail carries outside the
 * message text itself, which is quoted as its own block.
 */
function headerSafe(value: string, max = 120): string {
  const flat = value
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...flat];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : flat;
}

export function staffNoticeMail(deps: Deps, notice: StaffNotice): { subject: string; text: string } {
  const { ticket } = notice;
  const heading = notice.kind === 'new_ticket' ? 'New support ticket' : 'New customer message';
  const lines = [
    notice.kind === 'new_ticket'
      ? `A new support ticket arrived from the ${SOURCE_TEXT[ticket.source]}.`
      : `The customer wrote again on a ${SOURCE_TEXT[ticket.source]} ticket; it is open again.`,
    '',
    `Reference: ${ticket.reference}`,
    `Ticket id: ${ticket.id}`,
    `Category:  ${ticket.category}`,
    `From:      ${headerSafe(ticket.name)} <${ticket.email}>`,
  ];
  if (ticket.merchantId) lines.push(`Merchant:  ${headerSafe(ticket.merchantName ?? '')} (${ticket.merchantId})`);
  lines.push(`Subject:   ${headerSafe(ticket.subject, 150)}`, '', 'Message:', '', notice.body, '');
  lines.push(
    ticket.source === 'contact'
      ? `The visitor has no account: answer by email to ${ticket.email}, then mark the ticket answered in the support inbox.`
      : 'Answer in the support inbox of the console.',
  );
  lines.push(`${deps.config.server.public_url}`, '', '-- gatewayd');
  return { subject: `[${ticket.reference}] ${heading}: ${headerSafe(ticket.subject)}`, text: lines.join('\n') };
}

/** Starts the staff mails and returns at once; the promise never rejects. */
export function notifyStaff(deps: Deps, notice: StaffNotice): Promise<void> {
  const recipients = deps.config.support.staff_emails;
  if (!deps.config.email.staff_notify || !deps.mailer.available || recipients.length === 0) return Promise.resolve();
  const mail = staffNoticeMail(deps, notice);
  const run = async () => {
    let sent = 0;
    // One mail per address, so staff members do not see each other's addresses and one bad
    // address does not hold back the rest.
    for (const to of recipients) {
      const result = await deps.mailer.send({ to, kind: 'support.staff', ...mail });
      if (result.accepted) sent += 1;
    }
    deps.log.info(
      { ticket_id: notice.ticket.id, reference: notice.ticket.reference, kind: notice.kind, sent, recipients: recipients.length },
      'support staff notified',
    );
  };
  return run().catch((err: unknown) => {
    deps.log.warn({ ticket_id: notice.ticket.id, err: (err as Error).message }, 'support staff notification failed');
  });
}

/** Tells the merchant that the staff answered their dashboard ticket. */
export function notifyOwnerOfReply(deps: Deps, ticket: InboxTicket, reply: string): Promise<void> {
  if (ticket.source !== 'dashboard' || !deps.mailer.available || ticket.email === '') return Promise.resolve();
  const text = [
    `Hello ${headerSafe(ticket.name)},`,
    '',
    `The support team answered your ticket ${ticket.reference} ("${headerSafe(ticket.subject, 150)}"):`,
    '',
    reply,
    '',
    'You can read the whole conversation and answer in the console (Support):',
    deps.config.server.public_url,
    '',
    '-- gatewayd',
  ].join('\n');
  const mail = { to: ticket.email, subject: `[${ticket.reference}] Support answered: ${headerSafe(ticket.subject)}`, text };
  return deps.mailer
    .send(mail)
    .then((result) =>
      deps.log.info({ ticket_id: ticket.id, reference: ticket.reference, sent: result.accepted ? 1 : 0 }, 'support reply mailed to the merchant'),
    )
    .catch((err: unknown) => {
      deps.log.warn({ ticket_id: ticket.id, err: (err as Error).message }, 'support reply mail failed');
    });
}
