/**
 * The one error type of the API and its closed list of codes (docs/api.md, API).
 * Every error response is built from an AppError by the single error handler in app.ts.
 */
export const ERROR_STATUS = {
  validation_error: 400,
  invalid_json: 400,
  invalid_token: 400,
  captcha_invalid: 400,
  invalid_webhook_url: 400,
  unauthorized: 401,
  invalid_credential: 401,
  two_factor_required: 401,
  insufficient_scope: 403,
  session_required: 403,
  invalid_origin: 403,
  email_not_verified: 403,
  recent_sign_in_required: 403,
  support_staff_required: 403,
  two_factor_setup_required: 403,
  not_found: 404,
  transaction_not_found: 404,
  method_not_allowed: 405,
  duplicate_order_id: 409,
  idempotency_key_reused: 409,
  amount_pool_exhausted: 409,
  email_reply_required: 409,
  delivery_not_retryable: 409,
  webhook_inactive: 409,
  webhook_limit_reached: 409,
  shop_connection_limit_reached: 409,
  invoice_not_reviewable: 409,
  invoice_not_cancellable: 409,
  api_key_limit_reached: 409,
  password_already_set: 409,
  two_factor_already_enabled: 409,
  two_factor_not_enabled: 409,
  invoice_not_resolvable: 409,
  transfer_already_used: 409,
  transfer_not_contestable: 409,
  wallet_archived: 409,
  wallet_network_in_use: 409,
  transaction_not_accepted: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  email_unavailable: 503,
  captcha_unavailable: 503,
  identity_provider_unavailable: 503,
  support_unavailable: 503,
  rate_unavailable: 503,
  chain_unavailable: 503,
  telegram_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export interface ErrorDetail {
  path: string;
  message: string;
  /** A stable word for the broken rule where one exists (a refused webhook URL), for clients that translate. */
  reason?: string;
  /** duplicate_order_id: the invoice that holds the order id. */
  invoice_id?: string;
}

export class AppError extends Error {
  readonly status: number;
  /** Extra response headers, e.g. Retry-After for rate_limited or Allow for 405. */
  headers: Record<string, string> = {};
  /** two_factor_required: the signed challenge that the second sign-in step presents. */
  challenge?: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }

  withChallenge(challenge: string): this {
    this.challenge = challenge;
    return this;
  }

  withHeader(name: string, value: string): this {
    this.headers[name] = value;
    return this;
  }
}

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[]; challenge?: string };
  mode: 'live';
}

export function errorEnvelope(err: AppError): ErrorEnvelope {
  const error: ErrorEnvelope['error'] = { code: err.code, message: err.message };
  if (err.details && err.details.length > 0) error.details = err.details;
  if (err.challenge !== undefined) error.challenge = err.challenge;
  return { error, mode: 'live' };
}

export const notFound = (what = 'Resource'): AppError => new AppError('not_found', `${what} not found`);
