/**
 * Support rules (docs/api.md, Support):
 * - a customer message (owner reply, chat message) makes a ticket `open`, reopening a closed one;
 * - a staff reply makes it `answered`; a contact-form ticket cannot be answered in place (409
 *   email_reply_required: the visitor has no account and is answered by email);
 * - the owner may close, the staff may set any status;
 * - another merchant's ticket is 404, never 403.
 * Mails are started only once the transaction has committed, and no request waits for them.
 */
import { isSupportStaff, staffLacksTwoFactor } from '../accounts/support-staff.js';
import { findMerchantById } from '../accounts/merchants.repo.js';
import { writeTransaction, type Trx } from '../db/database.js';
import type { SupportTicketCategory, SupportTicketStatus } from '../db/schema.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { AppError, notFound } from '../lib/errors.js';
import { CHAT_CHALLENGE } from '../http/auth.js';
import { notifyOwnerOfReply, notifyStaff, type StaffNotice } from './support.notify.js';
import {
  allocateReference,
  changeTicketStatus,
  findChatTicketByTokenHash,
  findInboxTicket,
  findMerchantTicket,
  insertMessage,
  insertTicket,
  listInboxTickets,
  listMerchantTickets,
  listMessages,
  touchTicket,
  type InboxTicket,
  type Message,
  type Ticket,
} from './support.repo.js';
import type { Mailer } from '../email/mailer.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log'> & { mailer: Mailer };

const OWNER_TICKET_LIMIT = 200;
const INBOX_TICKET_LIMIT = 300;
const CHAT_SUBJECT_CHARS = 80;
const CHAT_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export interface Thread<T extends Ticket = Ticket> {
  ticket: T;
  messages: Message[];
}

export interface ChatThread extends Thread {
  name: string;
}

/** Whether the account may use the support inbox (support.staff_emails, compared case-insensitively). */
async function newTicket(
  trx: Trx,
  deps: Deps,
  input: Omit<Parameters<typeof insertTicket>[1], 'reference'> & { body: string },
  now: number,
): Promise<{ ticket: Ticket; notice: StaffNotice }> {
  const reference = await allocateReference(trx, deps.config.support.reference_prefix);
  const ticket = await insertTicket(trx, { ...input, reference }, now);
  await insertMessage(trx, ticket.id, { author: 'customer', authorMerchantId: input.merchantId, body: input.body }, now);
  const full = (await findInboxTicket(trx, ticket.id))!;
  return { ticket, notice: { kind: 'new_ticket', ticket: full, body: input.body } };
}

async function customerMessage(trx: Trx, ticketId: string, authorMerchantId: string | null, body: string, now: number): Promise<StaffNotice> {
  await insertMessage(trx, ticketId, { author: 'customer', authorMerchantId, body }, now);
  await touchTicket(trx, ticketId, 'open', now);
  return { kind: 'customer_message', ticket: (await findInboxTicket(trx, ticketId))!, body };
}

// Owner (dashboard) tickets

export async function createMerchantTicket(
  deps: Deps,
  merchantId: string,
  input: { subject: string; category: SupportTicketCategory; message: string },
): Promise<Thread> {
  const now = deps.clock.now();
  const { thread, notice } = await writeTransaction(deps.db, async (trx) => {
    const { ticket, notice } = await newTicket(
      trx,
      deps,
      { source: 'dashboard', category: input.category, subject: input.subject, merchantId, name: null, email: null, chatTokenHash: null, body: input.message },
      now,
    );
    return { thread: { ticket, messages: await listMessages(trx, ticket.id) }, notice };
  });
  void notifyStaff(deps, notice);
  return thread;
}

export async function listOwnerTickets(deps: Deps, merchantId: string): Promise<Ticket[]> {
  return listMerchantTickets(deps.db, merchantId, OWNER_TICKET_LIMIT);
}

export async function getOwnerThread(deps: Deps, merchantId: string, ticketId: string): Promise<Thread> {
  const ticket = await findMerchantTicket(deps.db, merchantId, ticketId);
  if (!ticket) throw notFound('Ticket');
  return { ticket, messages: await listMessages(deps.db, ticket.id) };
}

export async function addOwnerMessage(deps: Deps, merchantId: string, ticketId: string, body: string): Promise<Thread> {
  const now = deps.clock.now();
  const { thread, notice } = await writeTransaction(deps.db, async (trx) => {
    const ticket = await findMerchantTicket(trx, merchantId, ticketId);
    if (!ticket) throw notFound('Ticket');
    const notice = await customerMessage(trx, ticket.id, merchantId, body, now);
    return { thread: await ownerThreadIn(trx, merchantId, ticket.id), notice };
  });
  void notifyStaff(deps, notice);
  return thread;
}

export async function closeOwnerTicket(deps: Deps, merchantId: string, ticketId: string): Promise<Thread> {
  const now = deps.clock.now();
  return writeTransaction(deps.db, async (trx) => {
    const ticket = await findMerchantTicket(trx, merchantId, ticketId);
    if (!ticket) throw notFound('Ticket');
    await changeTicketStatus(trx, ticket.id, 'closed', now);
    return ownerThreadIn(trx, merchantId, ticket.id);
  });
}

async function ownerThreadIn(trx: Trx, merchantId: string, ticketId: string): Promise<Thread> {
  const ticket = (await findMerchantTicket(trx, merchantId, ticketId))!;
  return { ticket, messages: await listMessages(trx, ticketId) };
}

// Public: contact form and website chat

export async function createContactTicket(
  deps: Deps,
  input: { name: string; email: string; subject: string; category: SupportTicketCategory; message: string },
): Promise<Ticket> {
  const now = deps.clock.now();
  const { ticket, notice } = await writeTransaction(deps.db, (trx) =>
    newTicket(
      trx,
      deps,
      {
        source: 'contact',
        category: input.category,
        subject: input.subject,
        merchantId: null,
        name: input.name,
        email: input.email,
        chatTokenHash: null,
        body: input.message,
      },
      now,
    ),
  );
  void notifyStaff(deps, notice);
  return ticket;
}

/** A chat has no subject field: its first words stand in for one in the inbox. */
function chatSubject(message: string): string {
  const flat = message.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length > CHAT_SUBJECT_CHARS ? `${chars.slice(0, CHAT_SUBJECT_CHARS - 1).join('')}…` : flat;
}

/** Starts a chat; the returned token is the visitor's only key to it and is stored hashed. */
export async function startChat(deps: Deps, input: { name: string; email: string; message: string }): Promise<ChatThread & { token: string }> {
  const now = deps.clock.now();
  const token = randomToken(32);
  const { thread, notice } = await writeTransaction(deps.db, async (trx) => {
    const { ticket, notice } = await newTicket(
      trx,
      deps,
      {
        source: 'chat',
        category: 'general',
        subject: chatSubject(input.message),
        merchantId: null,
        name: input.name,
        email: input.email,
        chatTokenHash: sha256Hex(token),
        body: input.message,
      },
      now,
    );
    return { thread: { ticket, name: input.name, messages: await listMessages(trx, ticket.id) }, notice };
  });
  void notifyStaff(deps, notice);
  return { ...thread, token };
}

/** The chat a token opens, or 401: a missing, malformed or unknown token gets the same answer. */
async function chatByToken(db: Deps['db'] | Trx, token: string | undefined) {
  const ticket = token && CHAT_TOKEN_RE.test(token) ? await findChatTicketByTokenHash(db, sha256Hex(token)) : undefined;
  if (!ticket) throw new AppError('unauthorized', 'Unknown chat: X-Support-Chat-Token is missing or not valid').withHeader('WWW-Authenticate', CHAT_CHALLENGE);
  return ticket;
}

export async function getChat(deps: Deps, token: string | undefined): Promise<ChatThread> {
  const ticket = await chatByToken(deps.db, token);
  return { ticket, name: ticket.name, messages: await listMessages(deps.db, ticket.id) };
}

export async function addChatMessage(deps: Deps, token: string | undefined, body: string): Promise<ChatThread> {
  const now = deps.clock.now();
  const { thread, notice } = await writeTransaction(deps.db, async (trx) => {
    const ticket = await chatByToken(trx, token);
    const notice = await customerMessage(trx, ticket.id, null, body, now);
    const updated = (await chatByToken(trx, token))!;
    return { thread: { ticket: updated, name: updated.name, messages: await listMessages(trx, ticket.id) }, notice };
  });
  void notifyStaff(deps, notice);
  return thread;
}

// Staff inbox

/** Throws 403 support_staff_required unless the signed-in account is on support.staff_emails. */
export async function requireStaff(deps: Deps, merchantId: string): Promise<void> {
  const merchant = await findMerchantById(deps.db, merchantId);
  if (!merchant || !isSupportStaff(deps.config, merchant.email)) {
    throw new AppError('support_staff_required', 'The support inbox is for support staff accounts only');
  }
  if (await staffLacksTwoFactor(deps, merchant.id)) {
    throw new AppError('two_factor_setup_required', 'Turn on two-factor sign-in (Account page of the console) before using the support inbox');
  }
}

export async function listInbox(deps: Deps): Promise<InboxTicket[]> {
  return listInboxTickets(deps.db, INBOX_TICKET_LIMIT);
}

async function inboxThreadIn(db: Deps['db'] | Trx, ticketId: string): Promise<Thread<InboxTicket>> {
  const ticket = await findInboxTicket(db, ticketId);
  if (!ticket) throw notFound('Ticket');
  return { ticket, messages: await listMessages(db, ticket.id) };
}

export async function getInboxThread(deps: Deps, ticketId: string): Promise<Thread<InboxTicket>> {
  return inboxThreadIn(deps.db, ticketId);
}

export async function addStaffReply(deps: Deps, staffMerchantId: string, ticketId: string, body: string): Promise<Thread<InboxTicket>> {
  const now = deps.clock.now();
  const thread = await writeTransaction(deps.db, async (trx) => {
    const ticket = await findInboxTicket(trx, ticketId);
    if (!ticket) throw notFound('Ticket');
    if (ticket.source === 'contact') {
      throw new AppError('email_reply_required', `This ticket came from the contact form: answer ${ticket.reference} by email, then set its status`);
    }
    await insertMessage(trx, ticket.id, { author: 'staff', authorMerchantId: staffMerchantId, body }, now);
    await touchTicket(trx, ticket.id, 'answered', now);
    return inboxThreadIn(trx, ticket.id);
  });
  void notifyOwnerOfReply(deps, thread.ticket, body);
  return thread;
}

export async function setStatusByStaff(deps: Deps, ticketId: string, status: SupportTicketStatus): Promise<Thread<InboxTicket>> {
  const now = deps.clock.now();
  return writeTransaction(deps.db, async (trx) => {
    const ticket = await findInboxTicket(trx, ticketId);
    if (!ticket) throw notFound('Ticket');
    await changeTicketStatus(trx, ticket.id, status, now);
    return inboxThreadIn(trx, ticket.id);
  });
}
