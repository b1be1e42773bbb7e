/**
 * The support API contract (docs/api.md, Support: public, owner session, inbox). Request bodies are strict; text is stored and returned exactly as sent.
 */
import { z } from '@hono/zod-openapi';
import { DateTime } from '../http/openapi.js';
import { iso } from '../lib/clock.js';
import { emailAddress } from '../lib/email-address.js';
import type { InboxTicket, Message, Ticket } from './support.repo.js';
import type { ChatThread, Thread } from './support.service.js';

export const CATEGORIES = ['general', 'payments', 'technical', 'account', 'other'] as const;
export const STATUSES = ['open', 'answered', 'closed'] as const;
export const SOURCES = ['dashboard', 'contact', 'chat'] as const;

/**
 * Text of `min` to `max` characters, counted as Unicode code points (as JSON Schema's minLength
 * and maxLength count them, so an emoji is one character), and not only white space.
 */
function text(min: number, max: number, description: string) {
  return z
    .string()
    .max(max * 2)
    .refine((s) => {
      const n = [...s].length;
      return n >= min && n <= max;
    }, `Must be ${min} to ${max} characters`)
    .refine((s) => s.trim() !== '', 'Must not be blank')
    .openapi({ minLength: min, maxLength: max, description });
}

const Message = text(1, 5000, 'Message text; stored and shown verbatim (pages escape it)');
const Name = text(1, 100, 'Your name');
const Subject = text(1, 150, 'Subject');
const Email = emailAddress().openapi({ maxLength: 254, description: 'Where the team can reach you; never shown back' });
const Category = z.enum(CATEGORIES).default('general').openapi({ description: 'Defaults to general' });
const CaptchaToken = z.string().max(2048).optional().openapi({ description: 'Required when GET /config returns a captcha' });

export const TicketIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'tkt_3kTq9vXb2mRcWq7yLpZ0aA' }),
});

// Requests

export const CreateTicketBody = z.strictObject({ subject: Subject, category: Category, message: Message }).openapi('CreateSupportTicket');
export const MessageBody = z.strictObject({ message: Message }).openapi('SupportMessageInput');
export const StatusBody = z.strictObject({ status: z.enum(STATUSES) }).openapi('SupportStatusInput');
export const ContactBody = z
  .strictObject({ name: Name, email: Email, subject: Subject, category: Category, message: Message, captcha_token: CaptchaToken })
  .openapi('SupportContactInput');
export const ChatStartBody = z.strictObject({ message: Message, name: Name, email: Email, captcha_token: CaptchaToken }).openapi('SupportChatStartInput');

// Resources

export const SupportTicketSchema = z
  .object({
    id: z.string(),
    reference: z.string().openapi({ example: 'SUP-7Q2M4K9XAB', description: '<prefix>-<10 uppercase alphanumerics>' }),
    subject: z.string(),
    category: z.enum(CATEGORIES),
    status: z.enum(STATUSES).openapi({ description: 'open = waiting for support, answered = support replied, closed = resolved' }),
    source: z.enum(SOURCES).openapi({ description: 'dashboard = merchant ticket, contact = contact form answered by email, chat = website chat' }),
    created_at: DateTime,
    updated_at: DateTime,
    name: z.string().optional().openapi({ description: 'Support inbox only' }),
    email: z.string().optional().openapi({ format: 'email', description: 'Support inbox only' }),
    merchant_id: z.string().nullable().optional().openapi({ description: 'Support inbox only; null for contact-form and chat tickets' }),
    merchant_name: z.string().nullable().optional().openapi({ description: 'Support inbox only' }),
  })
  .openapi('SupportTicket');

export const SupportMessageSchema = z
  .object({
    id: z.string(),
    author: z.enum(['customer', 'staff']),
    body: z.string(),
    created_at: DateTime,
  })
  .openapi('SupportMessage');

export const SupportThreadSchema = z.object({ ticket: SupportTicketSchema, messages: z.array(SupportMessageSchema) }).openapi('SupportThread');

export const SupportTicketListSchema = z.object({ tickets: z.array(SupportTicketSchema) }).openapi('SupportTicketList');

/** What a chat visitor sees of their ticket: no id, no contact details. */
export const ChatTicketSchema = z
  .object({
    reference: z.string(),
    status: z.enum(STATUSES),
    subject: z.string(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .openapi('SupportChatTicket');

export const ChatThreadSchema = z
  .object({
    ticket: ChatTicketSchema,
    name: z.string().openapi({ description: 'The name the visitor typed' }),
    messages: z.array(SupportMessageSchema),
  })
  .openapi('SupportChatThread');

export const ChatStartedSchema = z
  .object({
    ticket: ChatTicketSchema,
    name: z.string(),
    messages: z.array(SupportMessageSchema),
    chat_token: z.string().openapi({ description: 'Send as X-Support-Chat-Token; shown only in this response' }),
  })
  .openapi('SupportChatStarted');

export const ContactCreatedSchema = z
  .object({
    ticket: z.object({ reference: z.string(), status: z.literal('open'), created_at: DateTime }),
  })
  .openapi('SupportContactCreated');

// Domain objects to JSON: only the fields the contract names reach a response.

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
