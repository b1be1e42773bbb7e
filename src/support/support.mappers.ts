/** Domain objects to JSON: only the fields the contract names reach a response. */
import { iso } from '../lib/clock.js';
import type { InboxTicket, Message, Ticket } from './support.repo.js';
import type { ChatThread, Thread } from './support.service.js';

export function toTicketResponse(t: Ticket) {
  return {
    id: t.id,
    reference: t.reference,
    subject: t.subject,
    category: t.category,
    status: t.status,
    source: t.source,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  };
}

/** The staff view adds who the ticket is from. */
export function toInboxTicketResponse(t: InboxTicket) {
  return {
    ...toTicketResponse(t),
    name: t.name,
    email: t.email,
    merchant_id: t.merchantId,
    merchant_name: t.merchantName,
  };
}

export function toMessageResponse(m: Message) {
  return { id: m.id, author: m.author, body: m.body, created_at: iso(m.createdAt) };
}

export function toThreadResponse(thread: Thread) {
  return { ticket: toTicketResponse(thread.ticket), messages: thread.messages.map(toMessageResponse) };
}

export function toInboxThreadResponse(thread: Thread<InboxTicket>) {
  return { ticket: toInboxTicketResponse(thread.ticket), messages: thread.messages.map(toMessageResponse) };
}

/** The visitor's view: no ticket id, no contact details (their own name only, they typed it). */
export function toChatThreadResponse(thread: ChatThread) {
  const t = thread.ticket;
  return {
    ticket: { reference: t.reference, status: t.status, subject: t.subject, created_at: iso(t.createdAt), updated_at: iso(t.updatedAt) },
    name: thread.name,
    messages: thread.messages.map(toMessageResponse),
  };
}
