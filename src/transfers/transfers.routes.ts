/**
 * GET /transfers (API key with invoices:read, or session): the wrong payments of the calling
 * merchant, paged and filtered like GET /invoices. POST /transfers/{id}/contest (session): on a
 * shared address, say that a transfer another merchant applied by hand was your customer's.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { onConnection } from '../db/database.js';
import { requireKeyOrSession, requireSession } from '../http/auth.js';
import { createRouter, errorResponses, jsonResponse, KEY_OR_SESSION, SESSION_ONLY } from '../http/openapi.js';
import { pageRequest, pagingQuery, repeatable } from '../http/paging.js';
import { parseAmount } from '../lib/amounts.js';
import { AppError } from '../lib/errors.js';
import { insertContest } from '../invoices/resolutions.repo.js';
import { findMerchantWallet } from '../wallets/wallets.repo.js';
import { appliedTransfers, findTransferCursor, findVisibleTransfer, listTransferPage, TRANSFER_KINDS, transferKind } from '../dashboard/transfers.repo.js';
import {
  TRANSFER_ID_EXAMPLE,
  TransferEnvelopeSchema,
  TransferIdParamSchema,
  TransferKindSchema,
  TransferListSchema,
  toTransferResponse,
} from './transfers.schemas.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'>;

export const TransferListQuerySchema = z.strictObject({
  ...pagingQuery('transfer', TRANSFER_ID_EXAMPLE),
  kind: repeatable(TransferKindSchema, TRANSFER_KINDS.length)
    .optional()
    .openapi({
      param: { name: 'kind', in: 'query', style: 'form', explode: true, description: 'Only transfers of these kinds; repeat it for several' },
      example: ['unmatched'],
    }),
  wallet_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({
      param: { name: 'wallet_id', in: 'query', description: 'Only transfers to the address of this wallet of yours' },
      example: 'wal_Qm4Zr8Tn2Vb6Xc0Lk5Jh1g',
    }),
  invoice_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({
      param: { name: 'invoice_id', in: 'query', description: 'Only transfers related to this invoice of yours' },
      example: 'inv_Jd8Kq2Lw5Rt0Yx3Bn6Cv9m',
    }),
});

export function transferRoutes(deps: Deps) {
  const app = createRouter();
  // Wrong payments on every network the instance watches.
  const networks = deps.config.networks;
  const dustBelow = Number(parseAmount(deps.config.tron.dust_threshold) ?? 0n);

  async function respond(merchantId: string, items: Awaited<ReturnType<typeof listTransferPage>>['items']) {
    const applied = await appliedTransfers(
      deps.db,
      items.map((t) => t.id),
    );
    return items.map((t) => toTransferResponse(t, transferKind(t, dustBelow), merchantId, applied.get(t.id)));
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/transfers',
      tags: ['Transfers'],
      operationId: 'listTransfers',
      summary: 'List wrong payments (unmatched, late and dust transfers), newest first',
      description:
        'Verified USDT transfers to your addresses that paid no invoice by themselves: `unmatched` (a wrong amount; a partial payment of an ' +
        "invoice carries its `invoice_id`), `late` (an invoice's exact amount after its window or after it was settled) and `dust`. " +
        'An unmatched transfer to an address several merchants registered is listed to each of them; a late or partial payment only to the ' +
        'owner of its invoice. Paged like GET /invoices: `limit`, `starting_after` / `ending_before` (transfer ids), `has_more`; filters ' +
        '`kind` (repeatable), `wallet_id`, `invoice_id`, `created_gte` / `created_lt` (by when the transfer was recorded). ' +
        'An unknown wallet_id or invoice_id gives an empty list.',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      request: { query: TransferListQuerySchema },
      responses: { 200: jsonResponse(TransferListSchema, 'One page of transfers'), ...errorResponses(400, 401, 403, 429) },
    }),
    async (c) => {
      const merchantId = c.get('auth').merchantId;
      const q = c.req.valid('query');
      const page = await pageRequest(q, 'transfer', (id) => findTransferCursor(deps.db, networks, merchantId, id));
      let address: string | undefined;
      if (q.wallet_id !== undefined) {
        // Another merchant's (or an unknown) wallet: an address no transfer can have.
        address = (await onConnection(deps.db, (conn) => findMerchantWallet(conn, merchantId, q.wallet_id!)))?.address ?? '';
      }
      const { items, hasMore } = await listTransferPage(deps.db, networks, merchantId, dustBelow, { kinds: q.kind, address, invoiceId: q.invoice_id }, page);
      return c.json({ transfers: await respond(merchantId, items), has_more: hasMore }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/transfers/{id}/contest',
      tags: ['Transfers'],
      operationId: 'contestTransfer',
      summary: 'Contest a payment another merchant of a shared address applied by hand',
      description:
        'On an address several merchants registered, a transfer applied by hand by one of them shows who applied it to every other. ' +
        'Any other merchant of that address may contest it: the contest is recorded once and shown to every merchant of the address ' +
        '(`applied.contested_by`). It moves no money and changes no invoice; the merchants settle it between themselves. ' +
        'A transfer not applied, or applied by you: 409 `transfer_not_contestable`. A transfer you cannot see: 404.',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { params: TransferIdParamSchema },
      responses: { 200: jsonResponse(TransferEnvelopeSchema, 'The transfer with your contest'), ...errorResponses(400, 401, 403, 404, 409) },
    }),
    async (c) => {
      const merchantId = c.get('auth').merchantId;
      const transfer = await findVisibleTransfer(deps.db, networks, merchantId, c.req.valid('param').id);
      if (!transfer) throw new AppError('not_found', 'Transfer not found');
      const applied = (await appliedTransfers(deps.db, [transfer.id])).get(transfer.id);
      if (!applied || applied.merchantId === merchantId) {
        throw new AppError('transfer_not_contestable', applied ? 'You applied this transfer yourself' : 'This transfer was not applied to an invoice by hand');
      }
      await insertContest(deps.db, transfer.id, merchantId, deps.clock.now());
      deps.log.info({ transfer_id: transfer.id, merchant_id: merchantId, applied_by: applied.merchantId }, 'transfer contested');
      const [view] = await respond(merchantId, [transfer]);
      return c.json({ transfer: view! }, 200);
    },
  );

  return app;
}
