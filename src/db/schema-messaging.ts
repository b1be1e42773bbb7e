/**
 * Kysely table types, second part (src/db/schema.ts re-exports them): events and their outboxes
 * (webhooks, deliveries and their attempts, shop callbacks), idempotency keys, captcha tokens,
 * support tickets, and the accounts' short-lived email tokens. Migrations own the schema; this
 * file mirrors it for the type checker.
 */
import type { Generated } from 'kysely';

export interface EventsTable {
  id: string;
  merchant_id: string;
  type: string;
  invoice_id: string | null;
  data: string;
  created_at: number;
}

export interface WebhooksTable {
  id: string;
  merchant_id: string;
  url: string;
  secret: string;
  active: Generated<number>;
  created_at: number;
  deactivated_at: number | null;
  /** 0020_integrator_api_2: JSON array of event types; null = every type. */
  enabled_events: string | null;
  /** 0020: paused by PATCH active=false (no new deliveries); active=0 means deleted. */
  paused: Generated<number>;
  /** 0020: the secret before the last roll, signing beside the new one until it expires. */
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
}

/** 0020_integrator_api_2: Idempotency-Key claims and their sealed 2xx answers, 24 hours. */
export interface IdempotencyKeysTable {
  merchant_id: string;
  key: string;
  fingerprint: string;
  status: number | null;
  sealed_answer: string | null;
  created_at: number;
  expires_at: number;
}

export type DeliveryStatus = 'pending' | 'sending' | 'delivered' | 'failed' | 'cancelled';

/** The columns of an outbox row and its attempts (webhook deliveries, shop callbacks). */
export interface OutboxColumns {
  status: DeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: number | null;
  delivered_at: number | null;
  last_error: string | null;
  response_status: number | null;
  created_at: number;
  updated_at: number;
}

export interface DeliveriesTable extends OutboxColumns {
  id: string;
  webhook_id: string;
  event_id: string;
  merchant_id: string;
  /** 0025: the instance that set `sending` (src/db/postgres.ts INSTANCE_NAME). */
  claimed_by: string | null;
}

/** One webhook delivery attempt (migration 0026): its history row, written with the attempt's outcome. */
export interface DeliveryAttemptsTable extends AttemptColumns {
  delivery_id: string;
}

/** The columns every attempt history shares (delivery_attempts 0026, shop_notify_attempts 0028). */
export interface AttemptColumns {
  attempt: number;
  started_at: number;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
  /** What the receiver's Retry-After asked for, in ms (null when it sent none or none applied). */
  retry_after_ms: number | null;
  next_attempt_at: number | null;
}

export type ShopProtocol = 'epay' | 'epusdt';

export interface ShopConnectionsTable {
  id: string;
  merchant_id: string;
  protocol: ShopProtocol;
  name: string;
  pid: number;
  secret: string;
  wallet_id: string;
  currency: string;
  allow_http_notify: Generated<number>;
  active: Generated<number>;
  created_at: number;
  deleted_at: number | null;
  key_rolled_at: number | null;
}

export interface ShopOrdersTable {
  invoice_id: string;
  connection_id: string;
  merchant_id: string;
  out_trade_no: string;
  money: string;
  notify_url: string;
  return_url: string | null;
  type: string | null;
  name: string | null;
  param: string | null;
  created_at: number;
}

export interface ShopNotifiesTable extends OutboxColumns {
  id: string;
  invoice_id: string;
  connection_id: string;
  merchant_id: string;
  /** 0027: the instance that set `sending` (src/db/postgres.ts INSTANCE_NAME). */
  claimed_by: string | null;
}

/** One attempt of a shop's callback (migration 0028): its history row, written with the attempt's outcome. */
export interface ShopNotifyAttemptsTable extends AttemptColumns {
  notify_id: string;
}

export interface CaptchaTokensTable {
  token_hash: string;
  used_at: number;
}

export type SupportTicketSource = 'dashboard' | 'contact' | 'chat';
export type SupportTicketCategory = 'general' | 'payments' | 'technical' | 'account' | 'other';
export type SupportTicketStatus = 'open' | 'answered' | 'closed';

export interface SupportTicketsTable {
  id: string;
  reference: string;
  source: SupportTicketSource;
  category: SupportTicketCategory;
  status: SupportTicketStatus;
  subject: string;
  merchant_id: string | null;
  name: string | null;
  email: string | null;
  chat_token_hash: string | null;
  created_at: number;
  updated_at: number;
}

export interface SupportMessagesTable {
  id: string;
  ticket_id: string;
  position: number;
  author: 'customer' | 'staff';
  author_merchant_id: string | null;
  body: string;
  created_at: number;
}

/** 0002_accounts: single-use email links; only the token's SHA-256 is stored. */
export interface EmailTokensTable {
  token_hash: string;
  merchant_id: string;
  purpose: 'verify' | 'reset';
  created_at: number;
  expires_at: number;
  /** 0008_account_security: the registration a confirmation link confirms (null for other links). */
  registration_id: string | null;
}

/** 0008_account_security: a registration of an unconfirmed address, bound to its confirmation links. */
export interface RegistrationsTable {
  id: string;
  merchant_id: string;
  password_hash: string;
  name: string;
  locale: string;
  created_at: number;
  expires_at: number;
}

/** 0008_account_security: the last password-reset request per address, whether or not it has an account. */
export interface PasswordResetsTable {
  email_hash: string;
  merchant_id: string | null;
  token_hash: string | null;
  sent_at: number;
  expires_at: number;
}
