/** GET/POST /invoices, GET /invoices/{id} (key or session) and POST /invoices/{id}/review (session). */
import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../deps.js';
import { requireKeyOrSession, requireSession } from '../http/auth.js';
import { createRouter, errorResponses, jsonBody, jsonResponse, KEY_OR_SESSION, SESSION_ONLY } from '../http/openapi.js';
import { formatAmount } from '../lib/amounts.js';
import { AppError } from '../lib/errors.js';
import { findMerchantInvoice, listMerchantInvoices } from './invoices.repo.js';
import {
  CreateInvoiceSchema,
  IdempotencyHeaderSchema,
  InvoiceEnvelopeSchema,
  InvoiceIdParamSchema,
  InvoiceListSchema,
  ReviewDecisionSchema,
  toInvoiceResponse,
} from './invoices.schemas.js';
import { decideReview, InvoiceCreator } from './invoices.service.js';

export function invoiceRoutes(deps: AppDeps) {
  const creator = new InvoiceCreator(deps);
  const app = createRouter();
  const publicUrl = deps.config.server.public_url;

  app.openapi(
    createRoute({
      method: 'get',
      path: '/invoices',
      tags: ['Invoices'],
      summary: 'The most recent 500 invoices, newest first',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      responses: { 200: jsonResponse(InvoiceListSchema, 'Invoices'), ...errorResponses(401, 403, 429) },
    }),
    async (c) => {
      const invoices = await listMerchantInvoices(deps.db, c.get('auth').merchantId);
      return c.json({ invoices: invoices.map((inv) => toInvoiceResponse(inv, publicUrl)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/invoices',
      tags: ['Invoices'],
      summary: 'Create an invoice with a unique payable amount',
      description:
        'The adjustment is the smallest value in [0.000001, invoices.max_adjustment] whose final amount was never used on the wallet address ' +
        '(across every merchant sharing it); the amount is reserved for 90 days. When every amount was used but some reservation is older ' +
        'than 90 days, the least recently used amount is reused and the invoice is created in status `review`. ' +
        'Same Idempotency-Key and same body: 200 replay. Errors 409: `idempotency_key_reused`, `duplicate_order_id`, `amount_pool_exhausted`.',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:write')] as const,
      request: { headers: IdempotencyHeaderSchema, body: jsonBody(CreateInvoiceSchema) },
      responses: {
        201: jsonResponse(InvoiceEnvelopeSchema, 'Created and allocated'),
        200: jsonResponse(InvoiceEnvelopeSchema, 'Identical idempotent replay (idempotent_replay: true)'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 429),
      },
    }),
    async (c) => {
      const { invoice, replay, view } = await creator.create({
        merchantId: c.get('auth').merchantId,
        idempotencyKey: c.req.valid('header')['idempotency-key'],
        body: c.req.valid('json'),
      });
      if (!replay) {
        deps.log.info(
          {
            invoice_id: invoice.id,
            merchant_id: invoice.merchantId,
            wallet_id: invoice.walletId,
            payable: formatAmount(invoice.payableAmount),
            status: invoice.status,
          },
          'invoice created',
        );
      }
      const envelope = { invoice: view ?? toInvoiceResponse(invoice, publicUrl), idempotent_replay: replay };
      return replay ? c.json(envelope, 200) : c.json(envelope, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/invoices/{id}',
      tags: ['Invoices'],
      summary: 'One invoice of the calling merchant',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      request: { params: InvoiceIdParamSchema },
      responses: { 200: jsonResponse(InvoiceEnvelopeSchema.omit({ idempotent_replay: true }), 'The invoice'), ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (c) => {
      const invoice = await findMerchantInvoice(deps.db, c.get('auth').merchantId, c.req.valid('param').id);
      if (!invoice) throw new AppError('not_found', 'Invoice not found');
      return c.json({ invoice: toInvoiceResponse(invoice, publicUrl) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/invoices/{id}/review',
      tags: ['Invoices'],
      summary: "The owner's decision on a paid review invoice",
      description:
        'accept: `confirmed` and event invoice.confirmed; reject: `expired` and event invoice.expired. Only for an invoice in status `review` ' +
        'with a recorded payment (tx_hash); otherwise 409 `invoice_not_reviewable`.',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { params: InvoiceIdParamSchema, body: jsonBody(ReviewDecisionSchema) },
      responses: {
        200: jsonResponse(InvoiceEnvelopeSchema.omit({ idempotent_replay: true }), 'The decided invoice'),
        ...errorResponses(400, 401, 403, 404, 409, 413),
      },
    }),
    async (c) => {
      const { decision } = c.req.valid('json');
      const invoice = await decideReview(deps, c.get('auth').merchantId, c.req.valid('param').id, decision);
      deps.log.info({ invoice_id: invoice.id, merchant_id: invoice.merchantId, decision, status: invoice.status }, 'review decided');
      return c.json({ invoice: toInvoiceResponse(invoice, publicUrl) }, 200);
    },
  );

  return app;
}
