/** GET /wallets (key or session, invoices:read) and POST /wallets (session only). */
import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../deps.js';
import { requireKeyOrSession, requireSession } from '../http/auth.js';
import { createRouter, errorResponses, jsonBody, jsonResponse, KEY_OR_SESSION, SESSION_ONLY } from '../http/openapi.js';
import { CreateWalletSchema, toWalletResponse, WalletEnvelopeSchema, WalletListSchema } from './wallets.schemas.js';
import { listMerchantWallets, registerWallet } from './wallets.repo.js';

export function walletRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/wallets',
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
      const { wallet, created } = await registerWallet(deps.db, c.get('auth').merchantId, body.label, body.address, deps.clock.now());
      return created ? c.json({ wallet: toWalletResponse(wallet) }, 201) : c.json({ wallet: toWalletResponse(wallet) }, 200);
    },
  );

  return app;
}
