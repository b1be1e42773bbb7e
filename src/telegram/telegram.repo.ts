/** The Telegram tables: links (codes, chats, wanted notices), the outbox and the bot's update offset. */
import { randomInt } from 'node:crypto';
import { writeTransaction, type Db, type Tx } from '../db/database.js';
import { MINUTE } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { NOTICE_KINDS, type NoticeKind } from './telegram.queue.js';

/** A link code is valid this long after the console showed it. */
export const LINK_CODE_TTL_MS = 30 * MINUTE;
/** Unambiguous letters and digits (no 0/O, 1/I). */
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export interface TelegramLink {
  linked: boolean;
  linkedAt: number | null;
  notices: NoticeKind[];
  code: string | null;
  codeExpiresAt: number | null;
}

export async function loadOffset(db: Db, botId: string): Promise<number> {
  const row = await db.selectFrom('telegram_bot_state').select('update_offset').where('bot_id', '=', botId).executeTakeFirst();
  return row?.update_offset ?? 0;
}

export async function saveOffset(db: Db, botId: string, offset: number, now: number): Promise<void> {
  await db
    .insertInto('telegram_bot_state')
    .values({ bot_id: botId, update_offset: offset, updated_at: now })
    .onConflict((oc) => oc.column('bot_id').doUpdateSet({ update_offset: offset, updated_at: now }))
    .execute();
}

export async function getLink(db: Db, merchantId: string, now: number): Promise<TelegramLink> {
  const row = await db.selectFrom('telegram_links').selectAll().where('merchant_id', '=', merchantId).executeTakeFirst();
  const codeValid = row?.link_code && row.link_code_expires_at !== null && row.link_code_expires_at > now;
  return {
    linked: !!row?.chat_id,
    linkedAt: row?.linked_at ?? null,
    notices: row ? (row.notices.split(',').filter((k) => (NOTICE_KINDS as readonly string[]).includes(k)) as NoticeKind[]) : [...NOTICE_KINDS],
    code: codeValid ? row!.link_code : null,
    codeExpiresAt: codeValid ? row!.link_code_expires_at : null,
  };
}

/** A fresh one-time code for this merchant (replacing an earlier one). */
export async function newLinkCode(db: Db, merchantId: string, now: number): Promise<string> {
  const code = Array.from({ length: 10 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
  await db
    .insertInto('telegram_links')
    .values({ merchant_id: merchantId, link_code: code, link_code_expires_at: now + LINK_CODE_TTL_MS, chat_id: null, linked_at: null, updated_at: now })
    .onConflict((oc) => oc.column('merchant_id').doUpdateSet({ link_code: code, link_code_expires_at: now + LINK_CODE_TTL_MS, updated_at: now }))
    .execute();
  return code;
}

export async function setNotices(db: Db, merchantId: string, notices: readonly NoticeKind[], now: number): Promise<void> {
  const text = NOTICE_KINDS.filter((k) => notices.includes(k)).join(',');
  await db
    .insertInto('telegram_links')
    .values({ merchant_id: merchantId, link_code: null, link_code_expires_at: null, chat_id: null, linked_at: null, notices: text, updated_at: now })
    .onConflict((oc) => oc.column('merchant_id').doUpdateSet({ notices: text, updated_at: now }))
    .execute();
}

/** Unlinks the chat: no more messages; those still waiting fail. */
export async function unlink(db: Db, merchantId: string, now: number): Promise<void> {
  await writeTransaction(db, async (trx) => {
    await trx
      .updateTable('telegram_links')
      .set({ chat_id: null, linked_at: null, link_code: null, link_code_expires_at: null, updated_at: now })
      .where('merchant_id', '=', merchantId)
      .execute();
    await trx
      .updateTable('telegram_outbox')
      .set({ status: 'failed', last_error: 'unlinked' })
      .where('merchant_id', '=', merchantId)
      .where('status', '=', 'pending')
      .execute();
  });
}

/** Links the chat to the merchant whose current code this is; the merchant id, or undefined. */
export async function claimLinkCode(db: Db, code: string, chatId: string, now: number): Promise<string | undefined> {
  const row = await db
    .updateTable('telegram_links')
    .set({ chat_id: chatId, linked_at: now, link_code: null, link_code_expires_at: null, updated_at: now })
    .where('link_code', '=', code)
    .where('link_code_expires_at', '>', now)
    .returning('merchant_id')
    .executeTakeFirst();
  return row?.merchant_id;
}

export async function queueLinkedNotice(db: Db, merchantId: string, chatId: string, now: number): Promise<void> {
  await db
    .insertInto('telegram_outbox')
    .values({
      id: newId('tgm'),
      merchant_id: merchantId,
      chat_id: chatId,
      kind: 'linked',
      event_id: null,
      next_attempt_at: now,
      created_at: now,
      last_error: null,
      sent_at: null,
    })
    .execute();
}

/** Runs `fn` for every linked merchant, in one write transaction. */
export async function linkedForWatcher(db: Db, fn: (tx: Tx, merchantId: string) => Promise<void>): Promise<void> {
  await writeTransaction(db, async (trx, tx) => {
    const rows = await trx.selectFrom('telegram_links').select('merchant_id').where('chat_id', 'is not', null).execute();
    for (const r of rows) await fn(tx, r.merchant_id);
  });
}

export interface DueMessage {
  id: string;
  chatId: string;
  kind: string;
  payload: Record<string, string | null>;
  attempts: number;
  locale: string | null;
  merchantName: string;
}

export async function dueMessages(db: Db, now: number, limit: number): Promise<DueMessage[]> {
  const rows = await db
    .selectFrom('telegram_outbox as o')
    .innerJoin('merchants as m', 'm.id', 'o.merchant_id')
    .select(['o.id', 'o.chat_id', 'o.kind', 'o.payload', 'o.attempts', 'm.locale', 'm.name'])
    .where('o.status', '=', 'pending')
    .where('o.next_attempt_at', '<=', now)
    .orderBy('o.next_attempt_at')
    .orderBy('o.created_at')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    chatId: r.chat_id,
    kind: r.kind,
    payload: JSON.parse(r.payload) as Record<string, string | null>,
    attempts: r.attempts,
    locale: r.locale,
    merchantName: r.name,
  }));
}

export async function finishMessage(db: Db, id: string, status: 'sent' | 'failed', error: string | null, now: number): Promise<void> {
  await db
    .updateTable('telegram_outbox')
    .set((eb) => ({ status, last_error: error, sent_at: status === 'sent' ? now : null, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export async function retryMessage(db: Db, id: string, attempts: number, at: number, error: string): Promise<void> {
  await db.updateTable('telegram_outbox').set({ attempts, next_attempt_at: at, last_error: error }).where('id', '=', id).execute();
}
