/** POST /api-keys, POST /api-keys/{id}/roll, DELETE /api-keys/{id}: owner session only. */
import { createRoute } from '@hono/zod-openapi';
import { SCOPES } from '../http/context.js';
import { requireSession, sessionHashOf } from '../http/auth.js';
import { createRouter, EmptyBody, errorResponses, jsonBody, jsonResponse, optionalJsonBody, SuccessSchema, SESSION_ONLY } from '../http/openapi.js';
import { ApiKeyCreatedSchema, ApiKeyRolledSchema, CreateApiKeySchema, KEY_WARNING, KeyIdParamSchema, toApiKeyResponse } from './api-keys.schemas.js';
import { createKey, deleteKey, rollKey } from './api-keys.service.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'>;

export function apiKeyRoutes(deps: Deps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api-keys',
      operationId: 'createApiKey',
      tags: ['API keys'],
      summary: 'Create an API key; the secret is shown once',
      description:
        'A new key gets the scopes invoices:read, invoices:write and ledger:read unless `scopes` names a non-empty subset. ' +
        'An account has at most `api_keys.max_active` (default 20) keys that are neither revoked nor expired; past it, 409 `api_key_limit_reached`.',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { body: jsonBody(CreateApiKeySchema) },
      responses: { 201: jsonResponse(ApiKeyCreatedSchema, 'Created'), ...errorResponses(400, 401, 403, 409, 413) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const now = deps.clock.now();
      const { key, secret } = await createKey(
        deps.db,
        sessionHashOf(c.get('auth')),
        c.get('auth').merchantId,
        { name: body.name, scopes: body.scopes ?? SCOPES, expiresInDays: body.expires_in_days ?? null },
        deps.config.api_keys.max_active,
        now,
      );
      deps.log.info({ key_id: key.id, prefix: key.prefix }, 'api key created');
      return c.json({ api_key: toApiKeyResponse(key, now), secret, warning: KEY_WARNING }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api-keys/{id}/roll',
      operationId: 'rollApiKey',
      tags: ['API keys'],
      summary: 'Replace a key with a new secret; the old key is revoked at once',
      description:
        'The new key keeps the name and scopes; its expiry is the roll time plus the original lifetime. A revoked key cannot be rolled (404). ' +
        'Rolling an active key never passes the active-key cap (it replaces one key with one); rolling an expired key at the cap is 409 `api_key_limit_reached`.',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { params: KeyIdParamSchema, body: optionalJsonBody(EmptyBody) },
      responses: { 201: jsonResponse(ApiKeyRolledSchema, 'Rolled'), ...errorResponses(400, 401, 403, 404, 409, 413) },
    }),
    async (c) => {
      const now = deps.clock.now();
      const { key, secret, replacedKeyId } = await rollKey(
        deps.db,
        sessionHashOf(c.get('auth')),
        c.get('auth').merchantId,
        c.req.valid('param').id,
        deps.config.api_keys.max_active,
        now,
      );
      deps.log.info({ key_id: key.id, prefix: key.prefix, replaced_key_id: replacedKeyId }, 'api key rolled');
      return c.json({ api_key: toApiKeyResponse(key, now), secret, warning: KEY_WARNING, replaced_key_id: replacedKeyId }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api-keys/{id}',
      operationId: 'revokeApiKey',
      description: "Owner session only. Requests with the key fail with 401 from now on; another merchant's key answers 404.",
      tags: ['API keys'],
      summary: 'Revoke a key immediately',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { params: KeyIdParamSchema },
      responses: { 200: jsonResponse(SuccessSchema, 'Revoked (also when it already was)'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const id = c.req.valid('param').id;
      await deleteKey(deps.db, c.get('auth').merchantId, id, deps.clock.now());
      deps.log.info({ key_id: id }, 'api key revoked');
      return c.json({ success: true as const }, 200);
    },
  );

  return app;
}
