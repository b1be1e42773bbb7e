import type { Config } from '../config.js';
import type { MerchantResponse } from './accounts.schemas.js';
import { normalizeEmail, type Merchant } from './merchants.repo.js';

/** support.staff_emails, compared case-insensitively like every stored email. */
export function isSupportStaff(config: Config, email: string): boolean {
  const normalized = normalizeEmail(email);
  return config.support.staff_emails.some((e) => normalizeEmail(e) === normalized);
}

/** The Merchant resource: no password hash, Google subject or internal timestamps. */
export function toMerchantResponse(merchant: Merchant, config: Config): MerchantResponse {
  return {
    id: merchant.id,
    name: merchant.name,
    email: merchant.email,
    mode: 'live',
    support_staff: isSupportStaff(config, merchant.email),
    checkout_qr: merchant.checkoutQr,
  };
}
