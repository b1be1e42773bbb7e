/**
 * The one email rule of the API: the server validates with it and the OpenAPI document states it
 * as the field's `pattern` (beside `format: email`, which tools read more loosely), so an address a
 * client's schema accepts is one the server accepts. At most 254 characters (RFC 5321 path limit).
 */
import { z } from '@hono/zod-openapi';

/**
 * zod's email rule with DNS labels that neither start nor end with a hyphen, so that every address
 * it accepts is also a JSON Schema `format: email` as strict validators (ajv-formats) check it.
 */
const EMAIL = /^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/;
export const EMAIL_PATTERN = EMAIL.source;
export const EMAIL_MAX_LENGTH = 254;

/** An email address as requests carry it (registration, sign-in, contact form, CLI). */
export function emailField() {
  return z.email({ pattern: EMAIL }).max(EMAIL_MAX_LENGTH).openapi({ pattern: EMAIL_PATTERN, maxLength: EMAIL_MAX_LENGTH });
}
