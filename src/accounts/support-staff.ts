/** Who is support staff: a rule of the configuration, not a column (staff are named in support.staff_emails). */
import type { Config } from '../config.js';
import { normalizeEmail } from './merchants.repo.js';

/** support.staff_emails, compared case-insensitively like every stored email. */
export function isSupportStaff(config: Config, email: string): boolean {
  const normalized = normalizeEmail(email);
  return config.support.staff_emails.some((e) => normalizeEmail(e) === normalized);
}
