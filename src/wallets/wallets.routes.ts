/** GET /wallets (key or session, invoices:read), POST /wallets and PATCH /wallets/{id} (session only). */
import { createRoute } from '@hono/zod-openapi';
import { requireKeyOrSession, requireSession } from '../http/auth.js';
import { createRouter, errorResponses, jsonBody, jsonResponse, KEY_OR_SESSION, SESSION_ONLY } from '../http/openapi.js';
import { AppError } from '../lib/errors.js';
import { onConnection } from '../db/database.js';
import { CreateWalletSchema, toWalletResponse, UpdateWalletSchema, WalletEnvelopeSchema, WalletIdParamSchema, WalletListSchema } from './wallets.schemas.js';
import { findMerchantWallet, listMerchantWallets, listWalletNetworks, registerWallet, setWalletNetworks, updateWallet, type Wallet } from './wallets.repo.js';
import { checkWalletNetworks, newWalletNetworks } from './wallet-networks.js';
import { pendingInvoiceNetworks } from '../invoices/invoices.repo.js';
import type { NetworkId } from '../chains/networks.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'rateLimiter'>;

export function walletRoutes(deps: Deps) {
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
        '201 when registered; 200 with the existing wallet (label and networks unchanged) when this merchant already has the address, on ' +
        'whichever networks (change them with PATCH /wallets/{id}). Other merchants may register the same address. An EVM address may ' +
        'receive on several EVM networks at once (`networks`, by default every EVM network this instance enabled).',
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
      const { address, networks } = newWalletNetworks(deps.config, body.address, body.networks);
      const { wallet, created } = await registerWallet(deps.db, networks, c.get('auth').merchantId, body.label, address, deps.clock.now());
      const answer = { wallet: toWalletResponse({ ...wallet, networks: await listWalletNetworks(deps.db, wallet.id) }) };
      return created ? c.json(answer, 201) : c.json(answer, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/wallets/{id}',
      tags: ['Wallets'],
      operationId: 'updateWallet',
      summary: 'Rename a wallet, archive or restore it, change its networks',
      description:
        'An archived wallet takes no new invoices (POST /invoices answers 409 `wallet_archived`); its open invoices stay payable and its ' +
        'address is still watched, so late payments are still recorded. Restoring it (`archived: false`) takes invoices again. ' +
        "`networks` replaces the networks it receives on (enabled here, of its address's family); one on which an invoice of this " +
        'wallet still waits for payment cannot be left out (409 `wallet_network_in_use`, nothing changed).',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { params: WalletIdParamSchema, body: jsonBody(UpdateWalletSchema) },
      responses: { 200: jsonResponse(WalletEnvelopeSchema, 'The updated wallet'), ...errorResponses(400, 401, 403, 404, 409, 413) },
    }),
    async (c) => {
      const { merchantId } = c.get('auth');
      const id = c.req.valid('param').id;
      const { networks, ...change } = c.req.valid('json');
      if (networks) {
        const found = await onConnection(deps.db, (conn) => findMerchantWallet(conn, merchantId, id));
        if (!found) throw new AppError('not_found', 'Wallet not found');
        checkWalletNetworks(deps.config, found.address, networks);
        await setWalletNetworks(deps.db, merchantId, id, networks, (trx, removed) => keepAwaitedNetworks(trx, found, removed));
      }
      const wallet = await updateWallet(deps.db, merchantId, id, change, deps.clock.now());
      if (!wallet) throw new AppError('not_found', 'Wallet not found');
      return c.json({ wallet: toWalletResponse({ ...wallet, networks: await listWalletNetworks(deps.db, wallet.id) }) }, 200);
    },
  );

  return app;
}

/** A network on which an invoice of the wallet waits for payment stays watched: it may not be removed. */
async function keepAwaitedNetworks(trx: Parameters<typeof pendingInvoiceNetworks>[0], wallet: Wallet, removed: readonly NetworkId[]): Promise<void> {
  const awaited = new Set(await pendingInvoiceNetworks(trx, wallet.merchantId, wallet.id));
  const kept = removed.filter((n) => awaited.has(n));
  if (kept.length > 0) {
    throw new AppError(
      'wallet_network_in_use',
      `Invoices of this wallet still wait for payment on ${kept.join(', ')}; keep ${kept.length === 1 ? 'it' : 'them'} until they are paid, expire or are cancelled`,
      kept.map((n) => ({ path: 'networks', message: `${n} has invoices waiting for payment to this wallet` })),
    );
  }
}
