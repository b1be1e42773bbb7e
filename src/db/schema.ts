/**
 * Kysely table types. Migrations own the schema; this file mirrors it for the type checker.
 * Times are epoch milliseconds, money is micro-USDT (INTEGER, read as number, converted to bigint
 * by the repositories).
 */
import type { Generated } from 'kysely';
import type {
  EventsTable,
  WebhooksTable,
  IdempotencyKeysTable,
  DeliveriesTable,
  DeliveryAttemptsTable,
  ShopConnectionsTable,
  ShopOrdersTable,
  ShopNotifiesTable,
  ShopNotifyAttemptsTable,
  CaptchaTokensTable,
  SupportTicketsTable,
  SupportMessagesTable,
  EmailTokensTable,
  RegistrationsTable,
  PasswordResetsTable,
} from './schema-messaging.js';

export * from './schema-messaging.js';

export interface MerchantsTable {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  email_verified_at: number | null;
  google_sub: string | null;
  verification_sent_at: number | null;
  created_at: number;
  updated_at: number;
  /** 0002_accounts: last "this address already has an account" mail. */
  exists_notice_sent_at: number | null;
  /** 0011_integrator_api: what the checkout's QR code carries. */
  checkout_qr: Generated<CheckoutQr>;
  /** 0014_console_notices: language of unrequested mails (payment notices); null = English. */
  locale: Generated<string | null>;
  /** 0016_credentials_and_limits: bumped by every password change, reset and Google claim. */
  credential_version: Generated<number>;
  /** 0017_fiat_prices: markup on fiat prices, percent as decimal text ("0" to "20"). */
  markup_percent: Generated<string>;
}

export type CheckoutQr = 'address' | 'tron_uri';

export interface SessionsTable {
  token_hash: string;
  merchant_id: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  /** 0016_credentials_and_limits: the account's credential_version when the session was made. */
  credential_version: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  merchant_id: string;
  name: string;
  prefix: string;
  secret_hash: string;
  scopes: string;
  expires_in_days: number | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  expires_at: number | null;
  replaced_key_id: string | null;
}

export interface WalletsTable {
  id: string;
  merchant_id: string;
  label: string;
  address: string;
  network: string;
  created_at: number;
  /** 0012_console_v2: archived wallets take no new invoices and are still watched. */
  archived_at: number | null;
}

export type InvoiceStatus = 'pending' | 'confirmed' | 'expired' | 'review';

/** 0030_wallet_networks: every network a wallet receives on, its first (wallets.network) included. */
export interface WalletNetworksTable {
  wallet_id: string;
  network: string;
  address: string;
}

export interface InvoicesTable {
  id: string;
  merchant_id: string;
  wallet_id: string;
  network: string;
  token: string;
  token_contract: string;
  wallet_address: string;
  merchant_order_id: string;
  idempotency_key: string;
  request_fingerprint: string;
  base_amount: number;
  adjustment: number;
  payable_amount: number;
  status: InvoiceStatus;
  amount_reuse_review: Generated<number>;
  description: string | null;
  metadata: Generated<string>;
  checkout_token: string;
  tx_hash: string | null;
  confirmed_at: number | null;
  created_at: number;
  expires_at: number;
  reserved_until: number;
  /** 0011_integrator_api. */
  redirect_url: string | null;
  cancelled_at: number | null;
  /** 0012_console_v2: micro-USDT received when a transfer was applied by hand; NULL otherwise. */
  received_amount: Generated<number | null>;
  /** 0017_fiat_prices: the fiat price it was created from (all null for a USDT price). */
  price_amount: Generated<string | null>;
  price_currency: Generated<string | null>;
  price_rate: Generated<string | null>;
  price_markup_percent: Generated<string | null>;
  price_sources: Generated<string | null>;
  price_rate_at: Generated<number | null>;
  /** 0019_wrong_payments: micro-USDT of every transfer recorded against it or applied to it. */
  amount_received: Generated<number>;
  /** 0019_wrong_payments: how a confirmed invoice was settled when not by its exact amount. */
  resolution: Generated<ResolutionKind | null>;
}

export type ResolutionKind = 'manual' | 'tolerance';

export type InvoiceOptionStatus = 'open' | 'paid' | 'released';

/**
 * 0032_invoice_options: an invoice's other networks and tokens, positions 1 and up (the invoice row
 * is option 0; position 0 is written only once another option paid, released).
 */
export interface InvoiceOptionsTable {
  invoice_id: string;
  position: number;
  wallet_id: string;
  network: string;
  token: string;
  token_contract: string;
  wallet_address: string;
  adjustment: number;
  payable_amount: number;
  status: InvoiceOptionStatus;
}

/** 0019_wrong_payments: the merchant's underpayment settings (no row = tolerance off, no auto-accept). */
export interface MerchantPaymentSettingsTable {
  merchant_id: string;
  underpayment_tolerance: string | null;
  underpayment_auto_accept: number;
  updated_at: number;
}

/** 0019_wrong_payments: a merchant of a shared address contests a transfer applied by hand. */
export interface TransferContestsTable {
  transfer_id: string;
  merchant_id: string;
  created_at: number;
}

/** 0012_console_v2: a transfer the owner applied to an invoice by hand. */
export interface InvoiceResolutionsTable {
  invoice_id: string;
  transfer_id: string;
  merchant_id: string;
  previous_status: InvoiceStatus;
  resolved_at: number;
}

export interface AmountReservationsTable {
  network: string;
  token_contract: string;
  address: string;
  amount: number;
  invoice_id: string;
  reserved_at: number;
  reserved_until: number;
}

export interface AmountCursorsTable {
  network: string;
  token_contract: string;
  address: string;
  base_amount: number;
  next_adjustment: number;
  reusable_from: Generated<number>;
}

/** Kept by triggers (migrations/0007): never written by the application. */
export interface InvoiceStatsTable {
  merchant_id: string;
  status: InvoiceStatus;
  invoices: number;
  base_units: number;
  base_micros: number;
  adjustment: number;
  payable_units: number;
  payable_micros: number;
  received_units: number;
  received_micros: number;
}

/** 0014_console_notices: owner mails about unmatched and late payments, sent by the mail worker. */
export interface PaymentNoticesTable {
  transfer_id: string;
  merchant_id: string;
  created_at: number;
  attempts: Generated<number>;
  next_attempt_at: number;
  sent_at: number | null;
}

export type ChainTransferKind = 'confirmed' | 'review_paid' | 'late' | 'unmatched';

export interface ChainTransfersTable {
  id: string;
  network: string;
  token_contract: string;
  tx_hash: string;
  log_index: number;
  from_address: string;
  to_address: string;
  amount: number;
  kind: ChainTransferKind;
  invoice_id: string | null;
  block_number: number;
  block_timestamp: number;
  recorded_at: number;
  /** 0031_chain_multichain: the on-chain integer as decimal text; null on older rows (amount x 10^(decimals-6)). */
  raw_amount: string | null;
  /** 0031: the hash of the block the transfer was read in; null on older rows. */
  block_hash: string | null;
  /** 0031: USDT or USDC; null on older rows (USDT). */
  token: TokenSymbolColumn | null;
  /** 0031: why an unmatched transfer matched no invoice; null otherwise (and on older rows). */
  reason: UnmatchedReason | null;
}

export type TokenSymbolColumn = 'USDT' | 'USDC';

/** Why an unmatched transfer paid no invoice (migration 0031). */
export type UnmatchedReason = 'inexact_amount' | 'wrong_network' | 'other_token' | 'no_invoice';

/** A transfer seen above its network's finality that matches an open invoice (migration 0031; src/payments/seen.repo.ts). */
export interface ChainSeenTable {
  network: string;
  tx_hash: string;
  log_index: number;
  to_address: string;
  token_contract: string;
  amount: number;
  raw_amount: string;
  block_number: number;
  block_hash: string;
  invoice_id: string | null;
  seen_at: number;
  dropped_at: number | null;
  final_at: number | null;
}

export interface ChainScanTable {
  network: string;
  cursor_block: number;
  cursor_time: number;
  active_until: number;
  updated_at: number;
}

export interface ChainScanGapsTable {
  network: string;
  from_block: number;
  to_block: number;
  after_time: number;
  before_time: number;
}

/** A block or transfer the TRON providers do not agree on (migration 0024; src/chain/chain.repo.ts). */
export interface ChainDisputesTable {
  id: string;
  network: string;
  /** 'block N' or 'tx <id>': one open row a subject. */
  subject: string;
  block_number: number | null;
  tx_hash: string | null;
  reason: string;
  first_seen_at: number;
  last_seen_at: number;
  resolved_at: number | null;
  notified_at: number | null;
}

/** The one network this database belongs to (migration 0013; src/db/network-guard.ts). */
export interface InstanceNetworkTable {
  id: number;
  network: string;
  recorded_at: number;
  /** Random, written once with the claim (migration 0033). */
  database_id: string | null;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  checksum: string;
  applied_at: number;
}

/** 0023_two_factor: an account's TOTP secret (encrypted) and its last accepted time step. */
export interface TwoFactorTable {
  merchant_id: string;
  secret_enc: string;
  confirmed_at: number | null;
  last_step: Generated<number>;
  created_at: number;
}

/** 0023_two_factor: SHA-256 (hex) of each single-use recovery code. */
export interface TwoFactorRecoveryCodesTable {
  merchant_id: string;
  code_hash: string;
  used_at: number | null;
}

/**
 * The whole database. Feature migrations add their tables here in the same change
 * (one interface per table, named after it).
 */
export interface TelegramLinksTable {
  merchant_id: string;
  link_code: string | null;
  link_code_expires_at: number | null;
  chat_id: string | null;
  linked_at: number | null;
  notices: Generated<string>;
  updated_at: number;
}

export interface TelegramOutboxTable {
  id: string;
  merchant_id: string;
  chat_id: string;
  kind: string;
  event_id: string | null;
  payload: Generated<string>;
  status: Generated<'pending' | 'sent' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

export interface TelegramBotStateTable {
  bot_id: string;
  update_offset: number;
  updated_at: number;
}

/** 0025_several_instances: the rate-limit buckets several instances share (PostgreSQL only; src/db/rate-buckets.ts). */
export interface RateLimitBucketsTable {
  scope: string;
  subject: string;
  tokens: number;
  per_minute: number;
  allowed: number;
  updated_at: number;
}

export interface Database {
  rate_limit_buckets: RateLimitBucketsTable;
  telegram_links: TelegramLinksTable;
  telegram_outbox: TelegramOutboxTable;
  telegram_bot_state: TelegramBotStateTable;
  merchants: MerchantsTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  wallets: WalletsTable;
  wallet_networks: WalletNetworksTable;
  invoices: InvoicesTable;
  invoice_options: InvoiceOptionsTable;
  amount_reservations: AmountReservationsTable;
  amount_cursors: AmountCursorsTable;
  invoice_stats: InvoiceStatsTable;
  payment_notices: PaymentNoticesTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  idempotency_keys: IdempotencyKeysTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  shop_connections: ShopConnectionsTable;
  shop_orders: ShopOrdersTable;
  shop_notifies: ShopNotifiesTable;
  shop_notify_attempts: ShopNotifyAttemptsTable;
  captcha_tokens: CaptchaTokensTable;
  support_tickets: SupportTicketsTable;
  support_messages: SupportMessagesTable;
  email_tokens: EmailTokensTable;
  registrations: RegistrationsTable;
  password_resets: PasswordResetsTable;
  chain_transfers: ChainTransfersTable;
  chain_seen: ChainSeenTable;
  chain_scan: ChainScanTable;
  chain_scan_gaps: ChainScanGapsTable;
  chain_disputes: ChainDisputesTable;
  invoice_resolutions: InvoiceResolutionsTable;
  merchant_payment_settings: MerchantPaymentSettingsTable;
  transfer_contests: TransferContestsTable;
  two_factor: TwoFactorTable;
  two_factor_recovery_codes: TwoFactorRecoveryCodesTable;
  schema_migrations: SchemaMigrationsTable;
  instance_network: InstanceNetworkTable;
}
