/** The ApiKey resource and its requests (docs/api.md, API keys). */
import { z } from '@hono/zod-openapi';
import { DateTime } from '../http/openapi.js';
import { iso, isoOrNull } from '../lib/clock.js';
import type { ApiKeyRecord } from './api-keys.repo.js';
import { SCOPES } from '../http/context.js';

export const ScopeSchema = z.enum(SCOPES);

export const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'The first 12 characters of the secret, for identification only' }),
    mode: z.literal('live'),
    scopes: z.array(ScopeSchema),
    created_at: DateTime,
    last_used_at: DateTime.nullable().openapi({ description: 'Precise to one minute' }),
    revoked_at: DateTime.nullable(),
    expires_at: DateTime.nullable().openapi({ description: 'null: the key never expires' }),
    expired: z.boolean(),
  })
  .openapi('ApiKey');

export const CreateApiKeySchema = z
  .strictObject({
    name: z.string().min(1).max(80),
    expires_in_days: z.number().int().min(1).max(3650).nullable().optional().openapi({ description: 'Omitted or null: the key never expires' }),
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .refine((s) => new Set(s).size === s.length, 'scopes must not repeat')
      .optional()
      .openapi({ uniqueItems: true, description: 'A non-empty subset without repeats; omitted = all three scopes' }),
  })
  .openapi('CreateApiKey');

export const KEY_WARNING =
  'Store this secret now: it is shown only once and cannot be recovered. Anyone holding it can act for your account within its scopes.';

export const ApiKeyCreatedSchema = z
  .object({ api_key: ApiKeySchema, secret: z.string().openapi({ description: 'gw_live_...; shown only in this response' }), warning: z.string() })
  .openapi('ApiKeyCreated');

export const ApiKeyRolledSchema = z
  .object({ api_key: ApiKeySchema, secret: z.string(), warning: z.string(), replaced_key_id: z.string() })
  .openapi('ApiKeyRolled');

export const KeyIdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

/** The ApiKey resource: never the secret nor its hash. */
export function toApiKeyResponse(key: ApiKeyRecord, now: number) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    mode: 'live' as const,
    scopes: key.scopes,
    created_at: iso(key.createdAt),
    last_used_at: isoOrNull(key.lastUsedAt),
    revoked_at: isoOrNull(key.revokedAt),
    expires_at: isoOrNull(key.expiresAt),
    expired: key.expiresAt !== null && key.expiresAt <= now,
  };
}
