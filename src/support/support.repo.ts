/** Support tickets and their messages: all the SQL of the support feature. */
import { randomBytes } from 'node:crypto';
import type { Db, Trx } from '../db/database.js';
import type { SupportTicketCategory, SupportTicketSource, SupportTicketStatus, SupportTicketsTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';

export interface Ticket {
  id: string;
  reference: string;
  source: SupportTicketSource;
  category: SupportTicketCategory;
  status: SupportTicketStatus;
  subject: string;
  merchantId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A ticket with who it is from: the visitor's own details, or the merchant's current ones. */
export interface InboxTicket extends Ticket {
  name: string;
  email: string;
  merchantName: string | null;
}

export type MessageAuthor = 'customer' | 'staff';

export interface Message {
  id: string;
  author: MessageAuthor;
  body: string;
  createdAt: number;
}

const TICKET_COLUMNS = [
  'support_tickets.id',
  'support_tickets.reference',
  'support_tickets.source',
  'support_tickets.category',
  'support_tickets.status',
  'support_tickets.subject',
  'support_tickets.merchant_id',
  'support_tickets.created_at',
  'support_tickets.updated_at',
] as const;

/** The columns of TICKET_COLUMNS: the table row without contact details and the chat token hash. */
type TicketRow = Omit<SupportTicketsTable, 'name' | 'email' | 'chat_token_hash'>;

interface InboxRow extends TicketRow {
  name: string | null;
  email: string | null;
  merchant_name: string | null;
  merchant_email: string | null;
}

function toTicket(row: TicketRow): Ticket {
  return {
    id: row.id,
    reference: row.reference,
    source: row.source,
    category: row.category,
    status: row.status,
    subject: row.subject,
    merchantId: row.merchant_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toInboxTicket(row: InboxRow): InboxTicket {
  return {
    ...toTicket(row),
    name: row.name ?? row.merchant_name ?? '',
    email: row.email ?? row.merchant_email ?? '',
    merchantName: row.merchant_name,
  };
}

const REFERENCE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const REFERENCE_LENGTH = 10;

/**
 * `<prefix>-` and 10 characters drawn uniformly from A-Z0-9 (36^10, about 52 bits): bytes of 252
 * and above are skipped so that no character is more likely than another.
 */
export function randomReference(prefix: string, random: (n: number) => Buffer = randomBytes): string {
  let out = '';
  while (out.length < REFERENCE_LENGTH) {
    for (const byte of random(16)) {
      if (byte >= 252) continue;
      out += REFERENCE_ALPHABET[byte % 36];
      if (out.length === REFERENCE_LENGTH) break;
    }
  }
  return `${prefix}-${out}`;
}

/**
 * A reference no ticket has yet. Runs inside the write transaction that inserts the ticket
 * (BEGIN IMMEDIATE), so nobody can take the same reference in between; the unique index stays
 * as the last line of defence.
 */
export async function allocateReference(trx: Trx, prefix: string, next: () => string = () => randomReference(prefix)): Promise<string> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const candidate = next();
    const taken = await trx.selectFrom('support_tickets').select('id').where('reference', '=', candidate).executeTakeFirst();
    if (!taken) return candidate;
  }
  throw new Error('could not find a free support reference after 10 attempts');
}

export interface NewTicket {
  reference: string;
  source: SupportTicketSource;
  category: SupportTicketCategory;
  subject: string;
  merchantId: string | null;
  name: string | null;
  email: string | null;
  chatTokenHash: string | null;
}

export async function insertTicket(trx: Trx, input: NewTicket, now: number): Promise<Ticket> {
  const row = {
    id: newId('tkt'),
    reference: input.reference,
    source: input.source,
    category: input.category,
    status: 'open' as const,
    subject: input.subject,
    merchant_id: input.merchantId,
    name: input.name,
    email: input.email,
    chat_token_hash: input.chatTokenHash,
    created_at: now,
    updated_at: now,
  };
  await trx.insertInto('support_tickets').values(row).execute();
  return toTicket(row);
}

/** Appends a message at the end of the ticket's thread. */
export async function insertMessage(
  trx: Trx,
  ticketId: string,
  input: { author: MessageAuthor; authorMerchantId: string | null; body: string },
  now: number,
): Promise<Message> {
  const last = await trx
    .selectFrom('support_messages')
    .select((eb) => eb.fn.max<number>('position').as('position'))
    .where('ticket_id', '=', ticketId)
    .executeTakeFirst();
  const row = {
    id: newId('msg'),
    ticket_id: ticketId,
    position: (last?.position ?? 0) + 1,
    author: input.author,
    author_merchant_id: input.authorMerchantId,
    body: input.body,
    created_at: now,
  };
  await trx.insertInto('support_messages').values(row).execute();
  return { id: row.id, author: row.author, body: row.body, createdAt: now };
}

/** A message arrived: the ticket takes `status` and its activity time moves. */
export async function touchTicket(trx: Trx, ticketId: string, status: SupportTicketStatus, now: number): Promise<void> {
  await trx.updateTable('support_tickets').set({ status, updated_at: now }).where('id', '=', ticketId).execute();
}

/** Moves the ticket to `status`; a ticket already there is left as it is (returns false). */
export async function changeTicketStatus(trx: Trx, ticketId: string, status: SupportTicketStatus, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('support_tickets')
    .set({ status, updated_at: now })
    .where('id', '=', ticketId)
    .where('status', '!=', status)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The merchant's own ticket, or undefined (someone else's ticket is as absent as a missing one). */
export async function findMerchantTicket(db: Db | Trx, merchantId: string, id: string): Promise<Ticket | undefined> {
  const row = await db.selectFrom('support_tickets').select(TICKET_COLUMNS).where('id', '=', id).where('merchant_id', '=', merchantId).executeTakeFirst();
  return row ? toTicket(row) : undefined;
}

/** The chat whose visitor token hashes to `tokenHash`; only chat tickets carry a token. */
export async function findChatTicketByTokenHash(db: Db | Trx, tokenHash: string): Promise<(Ticket & { name: string }) | undefined> {
  const row = await db
    .selectFrom('support_tickets')
    .select([...TICKET_COLUMNS, 'support_tickets.name'])
    .where('chat_token_hash', '=', tokenHash)
    .where('source', '=', 'chat')
    .executeTakeFirst();
  return row ? { ...toTicket(row), name: row.name ?? '' } : undefined;
}

/** The merchant's tickets, newest activity first. */
export async function listMerchantTickets(db: Db, merchantId: string, limit: number): Promise<Ticket[]> {
  const rows = await db
    .selectFrom('support_tickets')
    .select(TICKET_COLUMNS)
    .where('merchant_id', '=', merchantId)
    .orderBy('updated_at', 'desc')
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toTicket);
}

function inboxQuery(db: Db | Trx) {
  return db
    .selectFrom('support_tickets')
    .leftJoin('merchants', 'merchants.id', 'support_tickets.merchant_id')
    .select([...TICKET_COLUMNS, 'support_tickets.name', 'support_tickets.email', 'merchants.name as merchant_name', 'merchants.email as merchant_email']);
}

/** Every ticket for the staff: open first, then answered, then closed; newest activity first within each. */
export async function listInboxTickets(db: Db, limit: number): Promise<InboxTicket[]> {
  const rows = await inboxQuery(db)
    .orderBy((eb) => eb.case().when('support_tickets.status', '=', 'open').then(0).when('support_tickets.status', '=', 'answered').then(1).else(2).end())
    .orderBy('support_tickets.updated_at', 'desc')
    .orderBy('support_tickets.created_at', 'desc')
    .orderBy('support_tickets.id')
    .limit(limit)
    .execute();
  return rows.map(toInboxTicket);
}

export async function findInboxTicket(db: Db | Trx, id: string): Promise<InboxTicket | undefined> {
  const row = await inboxQuery(db).where('support_tickets.id', '=', id).executeTakeFirst();
  return row ? toInboxTicket(row) : undefined;
}

/** The whole thread, in the order it was written. */
export async function listMessages(db: Db | Trx, ticketId: string): Promise<Message[]> {
  const rows = await db
    .selectFrom('support_messages')
    .select(['id', 'author', 'body', 'created_at'])
    .where('ticket_id', '=', ticketId)
    .orderBy('position')
    .execute();
  return rows.map((r) => ({ id: r.id, author: r.author, body: r.body, createdAt: r.created_at }));
}
