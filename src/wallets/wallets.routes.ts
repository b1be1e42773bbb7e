/** GET /wallets (key or session, invoices:read), POST /wallets and PATCH /wallets/{id} (session only). */
import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../app-deps.js';
import { requireKeyOrSession, requireSession } from '../http/auth.js';
import { createRouter, errorResponses, jsonBody, jsonResponse, KEY_OR_SESSION, SESSION_ONLY } from '../http/openapi.js';
import { AppError } from '../lib/errors.js';
import { CreateWalletSchema, toWalletResponse, UpdateWalletSchema, WalletEnvelopeSchema, WalletIdParamSchema, WalletListSchema } from './wallets.schemas.js';
import { listMerchantWallets, registerWallet, updateWallet } from './wallets.repo.js';

export function walletRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/wallets',
      operationId: 'listWallets',
      description: 'Every receiving wallet of the merchant, newest first.',
      tags: ['Wallets'],
      summary: 'List the receiving wallets',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      responses: { 200: jsonResponse(WalletListSchema, 'The wallets, newest first'), ...errorResponses(401, 403, 429) },
    }),
    async (c) => c.json({ wallets: (await listMerchantWallets(deps.db, c.get('auth').merchantId)).map(toWalletResponse) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/wallets',
      operationId: 'createWallet',
      tags: ['Wallets'],
      summary: 'Register a receiving address (ownership is not verified)',
      description:
        '201 when registered; 200 with the existing wallet when this merchant already has the address. Other merchants may register the same address.',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { body: jsonBody(CreateWalletSchema) },
      responses: {
        201: jsonResponse(WalletEnvelopeSchema, 'Registered'),
        200: jsonResponse(WalletEnvelopeSchema, 'This merchant already has this address'),
        ...errorResponses(400, 401, 403, 413),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const { wallet, created } = await registerWallet(deps.db, deps.config.network.id, c.get('auth').merchantId, body.label, body.address, deps.clock.now());
      return created ? c.json({ wallet: toWalletResponse(wallet) }, 201) : c.json({ wallet: toWalletResponse(wallet) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/wallets/{id}',
      tags: ['Wallets'],
      operationId: 'updateWallet',
      summary: 'Rename a wallet, archive or restore it',
      description:
        'An archived wallet takes no new invoices (POST /invoices answers 409 `wallet_archived`); its open invoices stay payable and its ' +
        'address is still watched, so late payments are still recorded. Restoring it (`archived: false`) takes invoices again.',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { params: WalletIdParamSchema, body: jsonBody(UpdateWalletSchema) },
      responses: { 200: jsonResponse(WalletEnvelopeSchema, 'The updated wallet'), ...errorResponses(400, 401, 403, 404, 413) },
    }),
    async (c) => {
      const wallet = await updateWallet(deps.db, c.get('auth').merchantId, c.req.valid('param').id, c.req.valid('json'), deps.clock.now());
      if (!wallet) throw new AppError('not_found', 'Wallet not found');
      return c.json({ wallet: toWalletResponse(wallet) }, 200);
    },
  );

  return app;
}
