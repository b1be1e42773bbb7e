/** Merchant accounts. Emails are stored normalised (trimmed, lower case). */
import type { Db, Trx } from '../db/database.js';
import { newId } from '../lib/ids.js';

export interface Merchant {
  id: string;
  email: string;
  name: string;
  passwordHash: string | null;
  emailVerifiedAt: number | null;
  googleSub: string | null;
  verificationSentAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

type MerchantRow = {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  email_verified_at: number | null;
  google_sub: string | null;
  verification_sent_at: number | null;
  created_at: number;
  updated_at: number;
};

function toMerchant(row: MerchantRow): Merchant {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    passwordHash: row.password_hash,
    emailVerifiedAt: row.email_verified_at,
    googleSub: row.google_sub,
    verificationSentAt: row.verification_sent_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findMerchantById(db: Db | Trx, id: string): Promise<Merchant | undefined> {
  const row = await db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toMerchant(row) : undefined;
}

export async function findMerchantByEmail(db: Db | Trx, email: string): Promise<Merchant | undefined> {
  const row = await db.selectFrom('merchants').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
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
  const row: MerchantRow = {
    id: newId('mch'),
    email: normalizeEmail(input.email),
    name: input.name,
    password_hash: input.passwordHash,
    email_verified_at: input.emailVerifiedAt,
    google_sub: input.googleSub ?? null,
    verification_sent_at: null,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('merchants').values(row).execute();
  return toMerchant(row);
}
