/** GET /checkout/{token}: the payer-safe view of an invoice, public, by its capability token. */
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../app-deps.js';
import { createRouter, errorResponses, jsonResponse } from '../http/openapi.js';
import { AppError } from '../lib/errors.js';
import { CheckoutInvoiceSchema, toCheckoutInvoiceResponse } from '../invoices/invoices.schemas.js';
import { findByCheckoutToken } from '../invoices/invoices.repo.js';

const CheckoutEnvelopeSchema = z.object({ invoice: CheckoutInvoiceSchema }).openapi('CheckoutEnvelope');
const TokenParamSchema = z.object({
  token: z.string().min(1).max(200).openapi({ param: { name: 'token', in: 'path' }, description: 'The capability token from checkout_url' }),
});

export function checkoutRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/checkout/{token}',
      operationId: 'getCheckout',
      description: 'Unauthenticated: the checkout token in the path is the capability. The payer-safe view of the invoice (no order id, wallet id or metadata); the checkout page polls it.',
      tags: ['Checkout'],
      summary: 'What a payer needs to pay an invoice (no merchant-only fields)',
      request: { params: TokenParamSchema },
      responses: { 200: jsonResponse(CheckoutEnvelopeSchema, 'The invoice, payer-safe view'), ...errorResponses(400, 404) },
    }),
    async (c) => {
      const found = await findByCheckoutToken(deps.db, c.req.valid('param').token);
      if (!found) throw new AppError('not_found', 'No invoice for this checkout link');
      return c.json({ invoice: toCheckoutInvoiceResponse(found.invoice, found.merchantName) }, 200);
    },
  );

  return app;
}
