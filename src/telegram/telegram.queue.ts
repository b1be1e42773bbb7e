/**
 * Queuing Telegram notices into the outbox, in the transaction that stores the event (called from
 * insertEvent), so a notice is never lost and never queued without its event. Only what the
 * message needs is kept: amounts, the invoice id and order id (the merchant's own), and a shortened
 * address; never a secret, a checkout token or anyone's full address.
 */
import { compileQuery, type Param } from '../db/compiled.js';
import type { Tx } from '../db/database.js';
import { newId } from '../lib/ids.js';

export const NOTICE_KINDS = ['confirmed', 'partial', 'unmatched', 'late', 'watcher_down'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

const KIND_OF_EVENT: Record<string, NoticeKind> = {
  'invoice.confirmed': 'confirmed',
  'invoice.partially_paid': 'partial',
  'transfer.unmatched': 'unmatched',
  'invoice.late_payment': 'late',
};

const linkedChatQuery = compileQuery((db, p: Param<{ merchantId: string }>) =>
  db.selectFrom('telegram_links').select(['chat_id', 'notices']).where('merchant_id', '=', p('merchantId')).where('chat_id', 'is not', null),
);
const insertOutboxQuery = compileQuery(
  (db, p: Param<{ id: string; merchantId: string; chatId: string; kind: string; eventId: string | null; payload: string; now: number }>) =>
    db.insertInto('telegram_outbox').values({
      id: p('id'),
      merchant_id: p('merchantId'),
      chat_id: p('chatId'),
      kind: p('kind'),
      event_id: p('eventId'),
      payload: p('payload'),
      next_attempt_at: p('now'),
      created_at: p('now'),
      last_error: null,
      sent_at: null,
    }),
);

/** "TL24LC…U1tHre": enough to recognise one's own wallet, never a whole address. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-6)}` : address;
}

type Data = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The few fields a notice shows, from an event's data. */
export function noticePayload(kind: NoticeKind, data: Data): Record<string, string | null> {
  const invoice = (data.invoice ?? {}) as Data;
  const transaction = (data.transaction ?? {}) as Data;
  const transfer = (data.transfer ?? {}) as Data;
  if (kind === 'unmatched') {
    return { amount: str(transfer.amount), address: shortAddress(str(transfer.to_address) ?? str(transfer.to) ?? '') };
  }
  return {
    invoice: str(invoice.id),
    order: str(invoice.merchant_order_id),
    payable: str(invoice.payable_amount),
    received: str(invoice.amount_received),
    amount: str(transaction.amount) ?? str(invoice.received_amount) ?? str(invoice.amount_received),
  };
}

/**
 * Queues the notice an event calls for, when its merchant linked a chat and wants that kind. Most
 * events (an invoice created) call for none: answered then without a promise, as this runs inside
 * every event's insert.
 */
export function queueTelegramNotice(tx: Tx, event: { id: string; merchantId: string; type: string; data: Data }, now: number): Promise<void> | undefined {
  const kind = KIND_OF_EVENT[event.type];
  return kind ? queueNotice(tx, event.merchantId, kind, event.id, noticePayload(kind, event.data), now) : undefined;
}

export async function queueNotice(
  tx: Tx,
  merchantId: string,
  kind: NoticeKind,
  eventId: string | null,
  payload: Record<string, string | null>,
  now: number,
): Promise<void> {
  const link = await linkedChatQuery.first(tx, { merchantId });
  if (!link || !link.chat_id || !link.notices.split(',').includes(kind)) return;
  await insertOutboxQuery.run(tx, { id: newId('tgm'), merchantId, chatId: link.chat_id, kind, eventId, payload: JSON.stringify(payload), now });
}
