/** Merchant accounts. Emails are stored in canonical form (src/lib/email-address.ts). */
import { sql, type Selectable } from 'kysely';
import { compileQuery, type Param } from '../db/compiled.js';
import type { Conn, Db, Trx } from '../db/database.js';
import type { CheckoutQr, MerchantsTable } from '../db/schema.js';
import { canonicalEmail } from '../lib/email-address.js';
import { newId } from '../lib/ids.js';

export interface Merchant {
  id: string;
  email: string;
  name: string;
  passwordHash: string | null;
  emailVerifiedAt: number | null;
  googleSub: string | null;
  verificationSentAt: number | null;
  existsNoticeSentAt: number | null;
  /** What the checkout's QR code carries. */
  checkoutQr: CheckoutQr;
  /** Bumped by every password change, reset and Google claim (sessions.repo.ts). */
  credentialVersion: number;
  /** Markup on fiat prices, percent as exact decimal text ("0" to "20"). */
  markupPercent: string;
  /** The language of mails the owner did not ask for (null: English). */
  locale: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The stored form of an address (canonicalEmail: trimmed, ASCII letters lower-cased, nothing merged). */
export function normalizeEmail(email: string): string {
  return canonicalEmail(email);
}

function toMerchant(row: Selectable<MerchantsTable>): Merchant {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    passwordHash: row.password_hash,
    emailVerifiedAt: row.email_verified_at,
    googleSub: row.google_sub,
    verificationSentAt: row.verification_sent_at,
    existsNoticeSentAt: row.exists_notice_sent_at,
    checkoutQr: row.checkout_qr,
    credentialVersion: row.credential_version,
    markupPercent: row.markup_percent,
    locale: row.locale,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const markupQuery = compileQuery((db, p: Param<{ id: string }>) => db.selectFrom('merchants').select('markup_percent').where('id', '=', p('id')));

/** The merchant's markup on fiat prices (a compiled query: invoice creation runs it inside its transaction). */
export async function findMerchantMarkup(conn: Conn, id: string): Promise<string | undefined> {
  return (await markupQuery.first(conn, { id }))?.markup_percent;
}

export async function findMerchantById(db: Db | Trx, id: string): Promise<Merchant | undefined> {
  const row = await db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toMerchant(row) : undefined;
}

export async function findMerchantByEmail(db: Db | Trx, email: string): Promise<Merchant | undefined> {
  const row = await db.selectFrom('merchants').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  return row ? toMerchant(row) : undefined;
}

export async function findMerchantByGoogleSub(db: Db | Trx, sub: string): Promise<Merchant | undefined> {
  const row = await db.selectFrom('merchants').selectAll().where('google_sub', '=', sub).executeTakeFirst();
  return row ? toMerchant(row) : undefined;
}

export interface NewMerchant {
  email: string;
  name: string;
  passwordHash: string | null;
  emailVerifiedAt: number | null;
  googleSub?: string | null;
}

export async function insertMerchant(db: Db | Trx, input: NewMerchant, now: number): Promise<Merchant> {
  const row: Selectable<MerchantsTable> = {
    id: newId('mch'),
    email: normalizeEmail(input.email),
    name: input.name,
    password_hash: input.passwordHash,
    email_verified_at: input.emailVerifiedAt,
    google_sub: input.googleSub ?? null,
    verification_sent_at: null,
    exists_notice_sent_at: null,
    checkout_qr: 'address',
    locale: null,
    credential_version: 0,
    markup_percent: '0',
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('merchants').values(row).execute();
  return toMerchant(row);
}

/** The columns a service may change; `updated_at` follows. */
export interface MerchantChanges {
  name?: string;
  passwordHash?: string | null;
  emailVerifiedAt?: number;
  googleSub?: string;
  checkoutQr?: CheckoutQr;
  markupPercent?: string;
}

export async function updateMerchant(db: Db | Trx, id: string, changes: MerchantChanges, now: number): Promise<void> {
  await db
    .updateTable('merchants')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.passwordHash !== undefined ? { password_hash: changes.passwordHash } : {}),
      ...(changes.emailVerifiedAt !== undefined ? { email_verified_at: changes.emailVerifiedAt } : {}),
      ...(changes.googleSub !== undefined ? { google_sub: changes.googleSub } : {}),
      ...(changes.checkoutQr !== undefined ? { checkout_qr: changes.checkoutQr } : {}),
      // A new password (or none) is a new credential: sessions made under the old one end.
      ...(changes.passwordHash !== undefined ? { credential_version: sql<number>`credential_version + 1` } : {}),
      ...(changes.markupPercent !== undefined ? { markup_percent: changes.markupPercent } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Inside a write transaction: true when the account's credential version is still `version`, the
 * one read before a password was checked or hashed outside the transaction. Every session creation
 * and password write that checked a credential first commits only then.
 */
export async function credentialVersionIs(trx: Trx, id: string, version: number): Promise<boolean> {
  const row = await trx.selectFrom('merchants').select('credential_version').where('id', '=', id).executeTakeFirst();
  return row?.credential_version === version;
}

/** Gives a password to an account that has none (a guarded update: never replaces one). Returns true when set. */
export async function setPasswordIfNone(trx: Trx, id: string, passwordHash: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('merchants')
    .set({ password_hash: passwordHash, updated_at: now })
    .where('id', '=', id)
    .where('password_hash', 'is', null)
    .where('email_verified_at', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export type MailSlot = 'verification_sent_at' | 'exists_notice_sent_at';

/**
 * Takes the right to mail an account now when its previous mail of this kind is at least `gapMs`
 * old (a guarded update: of two racing requests only one wins). Returns true when taken.
 */
export async function claimMailSlot(trx: Trx, id: string, slot: MailSlot, now: number, gapMs: number): Promise<boolean> {
  const result = await trx
    .updateTable('merchants')
    .set({ [slot]: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb(slot, 'is', null), eb(slot, '<=', now - gapMs)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives the slot back after the mail server refused the message, so the next try may mail at once. */
export async function releaseMailSlot(db: Db, id: string, slot: MailSlot, takenAt: number): Promise<void> {
  await db
    .updateTable('merchants')
    .set({ [slot]: null })
    .where('id', '=', id)
    .where(slot, '=', takenAt)
    .execute();
}

/** The language of the owner's unrequested mails (payment notices): set at registration and sign-in. */
export async function setMerchantLocale(trx: Trx, merchantId: string, locale: string): Promise<void> {
  await trx
    .updateTable('merchants')
    .set({ locale })
    .where('id', '=', merchantId)
    .where((eb) => eb.or([eb('locale', 'is', null), eb('locale', '!=', locale)]))
    .execute();
}
