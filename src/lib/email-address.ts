/**
 * One canonical form of an email address, used wherever an address names an account or a person:
 * registration, sign-in, Google sign-in, password reset, support and the CLI (docs/security.md,
 * Email addresses).
 *
 * The canonical form is the address trimmed, with ASCII letters in lower case, and nothing else
 * changed. Unicode compatibility normalisation (NFKC) and case folding beyond ASCII are never
 * applied, because they merge addresses that mail servers keep apart (U+212A KELVIN SIGN folds to
 * "k"): an address that either would change is refused where it enters (`emailAddressProblem`),
 * and if one is ever stored it stays distinct from every other.
 */
import { emailField } from './email-rule.js';

/** Trimmed, ASCII letters lower-cased; no other change. */
export function canonicalEmail(email: string): string {
  return email.trim().replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/**
 * Why an address cannot name an account, or undefined when it can: it changes under NFKC, or one
 * of its non-ASCII characters changes under case folding (lower case, or upper then lower case,
 * which catches ß and the dotless i too).
 */
export function emailAddressProblem(email: string): string | undefined {
  const trimmed = email.trim();
  if (trimmed.normalize('NFKC') !== trimmed) return 'changes under Unicode compatibility normalisation (NFKC)';
  for (const ch of trimmed) {
    if (ch.charCodeAt(0) < 0x80) continue;
    if (ch.toLowerCase() !== ch || ch.toUpperCase().toLowerCase() !== ch) return 'has a character that Unicode case folding changes';
  }
  return undefined;
}

/**
 * The request field of an email address: the API's one email rule (email-rule.ts, stated as the
 * field's pattern in the OpenAPI document) and an address canonicalEmail keeps whole.
 */
export const emailAddress = () =>
  emailField().refine((v) => emailAddressProblem(v) === undefined, {
    message: 'This email address cannot be used: it changes under Unicode normalisation or case folding',
  });
