/** Who is support staff: a rule of the configuration, not a column (staff are named in support.staff_emails). */
import type { Config } from '../config.js';
import { normalizeEmail } from './merchants.repo.js';
import { twoFactorEnabled } from './two-factor.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config'>;

/**
 * Whether anyone answers support: with support.staff_emails empty no account can open the inbox,
 * so the public contact form and chat are off (503 support_unavailable) rather than filling an
 * inbox nobody reads.
 */
export function hasSupportStaff(config: Config): boolean {
  return config.support.staff_emails.length > 0;
}

/** support.staff_emails, compared case-insensitively like every stored email. */
export function isSupportStaff(config: Config, email: string): boolean {
  const normalized = normalizeEmail(email);
  return config.support.staff_emails.some((e) => normalizeEmail(e) === normalized);
}

/** auth.require_2fa_for_staff: a staff account may not use the inbox until two-factor sign-in is on. */
export async function staffLacksTwoFactor(deps: Deps, merchantId: string): Promise<boolean> {
  return deps.config.auth.require_2fa_for_staff && !(await twoFactorEnabled(deps.db, merchantId));
}
