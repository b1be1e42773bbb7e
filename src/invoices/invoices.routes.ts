/**
 * GET/POST /invoices, GET /invoices/{id}, POST /invoices/{id}/cancel (key or session),
 * POST /invoices/{id}/review and POST /invoices/{id}/resolve (session).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { requireKeyOrSession, requireSession } from '../http/auth.js';
import { createRouter, EmptyBody, errorResponses, jsonBody, jsonResponse, optionalJsonBody, KEY_OR_SESSION, SESSION_ONLY } from '../http/openapi.js';
import { pageRequest, pagingQuery, repeatable } from '../http/paging.js';
import { formatAmount } from '../lib/amounts.js';
import { AppError } from '../lib/errors.js';
import { priceCurrencies, requireCurrency } from '../pricing/currencies.js';
import { findInvoiceCursor, findMerchantInvoice, listInvoicePage, resolveInvoiceSearch } from './invoices.repo.js';
import {
  CreateInvoiceSchema,
  IdempotencyHeaderSchema,
  INVOICE_ID_EXAMPLE,
  InvoiceEnvelopeSchema,
  InvoiceIdParamSchema,
  InvoiceListSchema,
  InvoiceStatusSchema,
  ResolveInvoiceSchema,
  ReviewDecisionSchema,
  STATUSES,
  toInvoiceResponse,
} from './invoices.schemas.js';
import { resolveInvoice } from './resolve.service.js';
import { MAX_INVOICE_OPTIONS } from './invoice-options.schemas.js';
import { withPaymentSeen } from '../payments/seen.js';
import { cancelInvoice, decideReview, InvoiceCreator } from './invoices.service.js';
import type { RateBook } from '../pricing/rate-book.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'sqlite' | 'config' | 'clock' | 'log' | 'rateLimiter' | 'deliveriesQueued' | 'metrics'> & { rates: RateBook };

export const InvoiceListQuerySchema = z.strictObject({
  ...pagingQuery('invoice', INVOICE_ID_EXAMPLE),
  status: repeatable(InvoiceStatusSchema, STATUSES.length)
    .optional()
    .openapi({
      param: { name: 'status', in: 'query', style: 'form', explode: true, description: 'Only invoices in these statuses; repeat it for several' },
      example: ['pending'],
    }),
  wallet_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({ param: { name: 'wallet_id', in: 'query', description: 'Only invoices paid to this wallet' }, example: 'wal_Qm4Zr8Tn2Vb6Xc0Lk5Jh1g' }),
  merchant_order_id: z
    .string()
    .min(1)
    .max(120)
    .optional()
    .openapi({ param: { name: 'merchant_order_id', in: 'query', description: 'The invoice holding this order id (at most one)' }, example: 'order-1042' }),
  q: z
    .string()
    .trim()
    .min(1)
    .max(120)
    .optional()
    .openapi({
      param: {
        name: 'q',
        in: 'query',
        description:
          'Search: the invoices whose order id is exactly this text, whose payable or base amount it is (a decimal such as `25` or `25.000137`), that a transaction with this hash (a TRON id of 64 hex or an EVM hash of `0x` and 64, either with or without `0x`) paid or was applied to by hand, or that were paid to your wallet at this TRON or EVM address. Combines with the other filters and pages like the list',
      },
      example: '25.000137',
    }),
});

export function invoiceRoutes(deps: Deps) {
  const creator = new InvoiceCreator(deps);
  const app = createRouter();
  const publicUrl = deps.config.server.public_url;
  const acceptedCurrencies = priceCurrencies(deps.config.pricing.currencies);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/invoices',
      tags: ['Invoices'],
      operationId: 'listInvoices',
      summary: 'List invoices, newest first, a page at a time',
      description:
        'Paged by cursor: `limit` (1 to 500, 500 when absent), then `starting_after` the last id of a page for the next (older) page, ' +
        'or `ending_before` the first id for the previous (newer) one; `has_more` says whether more lie that way. ' +
        'Filters combine: `status` (repeatable), `wallet_id`, `merchant_order_id`, `created_gte`, `created_lt`, and `q`, a search by order id, amount, transaction hash or address. ' +
        'An unknown or malformed query parameter, or a cursor id that is not one of your invoices, is 400 `validation_error` naming it.',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      request: { query: InvoiceListQuerySchema },
      responses: { 200: jsonResponse(InvoiceListSchema, 'One page of invoices'), ...errorResponses(400, 401, 403, 429) },
    }),
    async (c) => {
      const merchantId = c.get('auth').merchantId;
      const q = c.req.valid('query');
      const page = await pageRequest(q, 'invoice', (id) => findInvoiceCursor(deps.db, merchantId, id));
      const { items, hasMore } = await listInvoicePage(
        deps.db,
        merchantId,
        {
          statuses: q.status,
          walletId: q.wallet_id,
          merchantOrderId: q.merchant_order_id,
          search: q.q === undefined ? undefined : await resolveInvoiceSearch(deps.db, merchantId, q.q),
        },
        page,
      );
      return c.json({ invoices: (await withPaymentSeen(deps, items)).map((inv) => toInvoiceResponse(inv, publicUrl)), has_more: hasMore }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/invoices',
      tags: ['Invoices'],
      operationId: 'createInvoice',
      summary: 'Create an invoice with a unique payable amount',
      description:
        'The adjustment is the smallest value in [0.000001, invoices.max_adjustment] whose final amount was never used on the wallet address ' +
        '(across every merchant sharing it); the amount is reserved for 90 days. When every amount was used but some reservation is older ' +
        'than 90 days, the least recently used amount is reused and the invoice is created in status `review`. ' +
        'Same Idempotency-Key and same body: 200 replay. Errors 409: `idempotency_key_reused`, `duplicate_order_id` (its `details[0].invoice_id` ' +
        'names the invoice holding the order id), `amount_pool_exhausted` (every amount of the price is reserved, or, on an address another ' +
        'account registered too, this account already holds `invoices.shared_pool_max_percent` (default 50) percent of them). ' +
        'Creations are limited per merchant, summed over all its API keys and sessions (`rate_limits.invoices_per_merchant` a minute, default 600, ' +
        'on top of the per-key limit): past it, 429 `rate_limited` with `Retry-After` in seconds. A replay is never charged, even one that arrives with its original. ' +
        'With `currency` a fiat ISO 4217 code from pricing.currencies, `amount` is in that currency: it is converted at the median of the fresh rates, ' +
        "plus `markup_percent` (or the merchant's markup), rounded up to pricing.round_to, and the invoice carries `price`. " +
        'When there is no honest rate (fewer than pricing.min_sources sources younger than pricing.max_age_seconds, rates further apart than ' +
        'pricing.max_spread_percent): 503 `rate_unavailable` (with `Retry-After`) and nothing is created; an instance without rate sources answers it without `Retry-After`. ' +
        'A currency this instance does not price in (not in the enum) is 400 `validation_error`, naming the accepted ones. ' +
        'A replay returns the stored price whatever the rates are now. ' +
        "Networks and tokens: `network` (the wallet's first network when absent) and `token` (USDT, or the network's only token), or `options`, " +
        `1 to ${MAX_INVOICE_OPTIONS} networks and tokens the payer chooses from, the first being option 0. Each option gets its own unique payable amount on its own ` +
        '(network, token contract, address), reserved at creation, and its own `payment_uri` in `options`; the first verified exact payment on any option ' +
        "confirms the invoice, which then says that option's `network`, `token`, `token_contract`, `wallet_address` and `payable_amount`. " +
        "A network this instance does not watch (the enum), a token the network lacks, an option twice, `network` or `token` other than options[0]'s, " +
        'or a network none of your wallets receives on: 400 `validation_error` naming what is allowed. The fingerprint of a replay includes them.',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:write')] as const,
      request: { headers: IdempotencyHeaderSchema, body: jsonBody(CreateInvoiceSchema) },
      responses: {
        201: jsonResponse(InvoiceEnvelopeSchema, 'Created and allocated'),
        200: jsonResponse(InvoiceEnvelopeSchema, 'Identical idempotent replay (idempotent_replay: true)'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 429, 503),
      },
    }),
    async (c) => {
      const currency = c.req.valid('json').currency;
      if (currency !== undefined) requireCurrency(currency, acceptedCurrencies);
      const { invoice, replay, view } = await creator.create(
        {
          merchantId: c.get('auth').merchantId,
          idempotencyKey: c.req.valid('header')['idempotency-key'],
          body: c.req.valid('json'),
        },
        c,
      );
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
      operationId: 'getInvoice',
      summary: 'One invoice of the calling merchant',
      description: "Another merchant's invoice answers 404, as an unknown id does.",
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:read')] as const,
      request: { params: InvoiceIdParamSchema },
      responses: { 200: jsonResponse(InvoiceEnvelopeSchema.omit({ idempotent_replay: true }), 'The invoice'), ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (c) => {
      const invoice = await findMerchantInvoice(deps.db, c.get('auth').merchantId, c.req.valid('param').id);
      if (!invoice) throw new AppError('not_found', 'Invoice not found');
      const [shown] = await withPaymentSeen(deps, [invoice]);
      return c.json({ invoice: toInvoiceResponse(shown!, publicUrl) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/invoices/{id}/review',
      tags: ['Invoices'],
      operationId: 'reviewInvoice',
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

  app.openapi(
    createRoute({
      method: 'post',
      path: '/invoices/{id}/cancel',
      tags: ['Invoices'],
      operationId: 'cancelInvoice',
      summary: 'Cancel an unpaid invoice',
      description:
        'A `pending` invoice, or a `review` invoice with no recorded payment, becomes `expired` (event `invoice.expired`, `cancelled_at` set, ' +
        '`expires_at` moved to the cancel time). The amount stays reserved for its 90 days, so a transfer that arrives later is still recorded ' +
        'against this invoice as a late payment. Cancelling a cancelled invoice answers 200 with it. A confirmed invoice, a paid review ' +
        'invoice or one that expired by itself: 409 `invoice_not_cancellable`.',
      security: KEY_OR_SESSION,
      middleware: [requireKeyOrSession(deps, 'invoices:write')] as const,
      request: { params: InvoiceIdParamSchema, body: optionalJsonBody(EmptyBody) },
      responses: {
        200: jsonResponse(InvoiceEnvelopeSchema.omit({ idempotent_replay: true }), 'The cancelled invoice'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 429),
      },
    }),
    async (c) => {
      const { invoice, changed } = await cancelInvoice(deps, c.get('auth').merchantId, c.req.valid('param').id);
      if (changed) deps.log.info({ invoice_id: invoice.id, merchant_id: invoice.merchantId }, 'invoice cancelled');
      return c.json({ invoice: toInvoiceResponse(invoice, publicUrl) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/invoices/{id}/resolve',
      tags: ['Invoices'],
      operationId: 'resolveInvoice',
      summary: 'Apply a wrong payment to an invoice by hand',
      description:
        "The owner applies a verified `unmatched` or `late` transfer (one that reached the invoice's wallet address) to an unpaid invoice: " +
        '`pending`, `expired` (also cancelled) or `review` without a payment. The invoice becomes `confirmed` with that transaction, ' +
        "`received_amount` is the transfer's amount (it may differ from `payable_amount`), and `invoice.confirmed` is emitted with " +
        '`data.transaction` (the transfer) and `data.resolution: "manual"`. A transfer pays at most one invoice: a transfer that already paid ' +
        'one, automatically or by hand, is 409 `transfer_already_used`. An invoice already paid, or a transfer to another of your wallets: ' +
        "409 `invoice_not_resolvable`. A transfer that reached none of your wallets, or a late or partial payment of another merchant's invoice: 404. " +
        "On an address several merchants registered, only a plausible claim that no other merchant's unpaid invoice beats may apply it " +
        '(amount within 10% or 2 USDT, and the same last six decimals or a block time inside the window); otherwise 409 ' +
        '`invoice_not_resolvable` with `details[0].reason` `no_plausible_claim` or `stronger_claim_of_another`.',
      security: SESSION_ONLY,
      middleware: [requireSession(deps)] as const,
      request: { params: InvoiceIdParamSchema, body: jsonBody(ResolveInvoiceSchema) },
      responses: {
        200: jsonResponse(InvoiceEnvelopeSchema.omit({ idempotent_replay: true }), 'The confirmed invoice'),
        ...errorResponses(400, 401, 403, 404, 409, 413),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const invoice = await resolveInvoice(deps, {
        merchantId: c.get('auth').merchantId,
        invoiceId: c.req.valid('param').id,
        txHash: body.tx_hash,
        logIndex: body.log_index,
      });
      deps.log.info({ invoice_id: invoice.id, merchant_id: invoice.merchantId, tx_hash: body.tx_hash, log_index: body.log_index }, 'payment resolved by hand');
      return c.json({ invoice: toInvoiceResponse(invoice, publicUrl) }, 200);
    },
  );

  return app;
}
