/**
 * The one email rule of the API: the server validates with it and the OpenAPI document states it
 * as the field's `pattern` (beside `format: email`, which tools read more loosely), so an address a
 * client's schema accepts is one the server accepts. At most 254 characters (RFC 5321 path limit).
 */
import { z } from '@hono/zod-openapi';

export const EMAIL_PATTERN = z.regexes.email.source;
export const EMAIL_MAX_LENGTH = 254;

/** An email address as requests carry it (registration, sign-in, contact form, CLI). */
export function emailField() {
  return z.email({ pattern: z.regexes.email }).max(EMAIL_MAX_LENGTH).openapi({ pattern: EMAIL_PATTERN, maxLength: EMAIL_MAX_LENGTH });
}
