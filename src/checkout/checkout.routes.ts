/**
 * GET /checkout/{token}: the payer-safe view of an invoice, public, by its capability token.
 * POST /checkout/{token}/transaction: "I already paid", the payer names a transaction (tx-claim.ts).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { clientSubject } from '../http/client-ip.js';
import { createRouter, errorResponses, jsonBody, jsonResponse } from '../http/openapi.js';
import { AppError } from '../lib/errors.js';
import { CheckoutInvoiceSchema, PaymentSeenSchema } from '../invoices/invoices.schemas.js';
import { findByCheckoutToken } from '../invoices/invoices.repo.js';
import { checkoutView, dustOf, paidTo } from './checkout-view.js';
import { CLAIMS_PER_INVOICE_PER_MINUTE, CLAIMS_PER_IP_PER_MINUTE, claimedHash, claimEvmTransaction, claimTransaction } from './tx-claim.js';
import type { ChainRuntime } from '../chain/chain.runtime.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter' | 'deliveriesQueued'> & { chain: ChainRuntime };

const CheckoutViewSchema = CheckoutInvoiceSchema.extend({
  unmatched_payment_seen: z.boolean().openapi({
    description:
      "A transfer of another amount (at least tron.dust_threshold) that pays no invoice reached this invoice's address while it was open: whoever sent it should not pay again but name its transaction. Says nothing of whose it is; false once anything is recorded against this invoice",
  }),
  payment_seen: PaymentSeenSchema.nullable().openapi({
    description:
      'A transfer of the payable amount seen in a block the network does not call final yet: the payer is told it is seen and about when it will be final (`expected_final_at`); the invoice stays pending until then. Null otherwise, and once the invoice is paid',
  }),
  payment_dropped: z.boolean().openapi({
    description:
      'A transfer seen for this unpaid invoice left the chain before it was final (invoice.payment_dropped) and no other waits: the payer should check their wallet. False once a payment is seen again or the invoice is paid',
  }),
}).openapi('CheckoutView');
const CheckoutEnvelopeSchema = z.object({ invoice: CheckoutViewSchema }).openapi('CheckoutEnvelope');
const TokenParamSchema = z.object({
  token: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'token', in: 'path' }, description: 'The capability token from checkout_url' }),
});
const ClaimBodySchema = z
  .strictObject({
    tx_hash: z
      .string()
      .min(1)
      .max(128)
      .openapi({
        description:
          "The transaction id as a wallet or explorer shows it, in the form of the invoice's network (or one of its options' networks): 64 hex characters on TRON (0x allowed), 0x and 64 on the EVM networks; another form is 400 `validation_error` naming the form expected. Solana and TON take none: their payments are seen by their watchers alone",
        example: 'a'.repeat(64),
      }),
    network: z.string().max(64).optional().openapi({
      description:
        "The network of the option the payer paid on (the checkout's shown option), e.g. `tron-mainnet`: the id is then read in that network's form only. A network the invoice is not payable on, or a Solana or TON network, is 400 `validation_error` (path `network`)",
      example: 'tron-mainnet',
    }),
  })
  .openapi('CheckoutTransactionClaim');
const MONEY_OR_NULL = z
  .string()
  .regex(/^\d+\.\d{6}$/)
  .nullable();
const ClaimResultSchema = z
  .object({
    claim: z.object({
      tx_hash: z.string(),
      outcome: z.enum(['recorded', 'already_recorded', 'deferred']).openapi({
        description:
          '`recorded`: verified on the solidified chain and recorded now; `already_recorded`: it was recorded before; `deferred`: it could not be verified by two providers now, and the scanner will see it',
      }),
      reason: z.string().nullable().openapi({ description: 'Why it was deferred' }),
      paid_to: z.enum(['this_invoice', 'another_invoice', 'no_invoice']).nullable().openapi({
        description:
          "Where the USDT it sent to this invoice's address is recorded: `this_invoice` (matched, a partial payment, or applied by hand), `another_invoice` (it paid another invoice on the same address; which one is not said), `no_invoice` (a wrong amount: the merchant may apply it by hand); null when deferred",
      }),
      amount: MONEY_OR_NULL.openapi({ description: "The USDT it sent to this invoice's address (six decimals); null when deferred", example: '19.500000' }),
    }),
    invoice: CheckoutViewSchema,
  })
  .openapi('CheckoutTransactionClaimResult');

export function checkoutRoutes(deps: Deps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/checkout/{token}',
      operationId: 'getCheckout',
      description:
        'Unauthenticated: the checkout token in the path is the capability. The payer-safe view of the invoice (no order id, wallet id or metadata); the checkout page polls it.',
      tags: ['Checkout'],
      summary: 'What a payer needs to pay an invoice (no merchant-only fields)',
      request: { params: TokenParamSchema },
      responses: { 200: jsonResponse(CheckoutEnvelopeSchema, 'The invoice, payer-safe view'), ...errorResponses(400, 404) },
    }),
    async (c) => {
      const found = await findByCheckoutToken(deps.db, c.req.valid('param').token);
      if (!found) throw new AppError('not_found', 'No invoice for this checkout link');
      return c.json({ invoice: await checkoutView(deps, found.invoice, found.merchantName, dustOf(deps.config.tron.dust_threshold)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/checkout/{token}/transaction',
      operationId: 'claimCheckoutTransaction',
      description:
        'Unauthenticated, by the checkout token. The payer names the transaction that paid; the server looks it up on the solidified chain, verifies it as the scanner does and records it at once (same classification and events as the scanner; never twice). ' +
        `Rate limited: ${CLAIMS_PER_INVOICE_PER_MINUTE} a minute per invoice and ${CLAIMS_PER_IP_PER_MINUTE} a minute per client address. ` +
        '404 `transaction_not_found`: not on the solidified chain (yet); 409 `transaction_not_accepted` (`details[].reason` `failed` or `no_usdt_transfer`); 503 `chain_unavailable`: no provider answers.',
      tags: ['Checkout'],
      summary: '"I already paid": look up a transaction id now',
      request: { params: TokenParamSchema, body: jsonBody(ClaimBodySchema) },
      responses: {
        200: jsonResponse(ClaimResultSchema, 'What became of the transaction, and the invoice now'),
        ...errorResponses(400, 404, 409, 413, 429, 503),
      },
    }),
    async (c) => {
      const found = await findByCheckoutToken(deps.db, c.req.valid('param').token);
      if (!found) throw new AppError('not_found', 'No invoice for this checkout link');
      // The form is checked before a lookup is counted, as a malformed body is.
      const body = c.req.valid('json');
      const { txHash, family } = claimedHash(found.invoice, body.tx_hash, body.network);
      await deps.rateLimiter.consume('checkout_claim_ip', clientSubject(c, deps.config.server.trust_proxy), CLAIMS_PER_IP_PER_MINUTE, { context: c });
      await deps.rateLimiter.consume('checkout_claim_invoice', found.invoice.id, CLAIMS_PER_INVOICE_PER_MINUTE, {
        context: c,
        message: 'Too many lookups for this invoice; retry in a minute',
      });
      const result = family === 'evm' ? await claimEvmTransaction(deps, found.invoice, txHash) : await claimTransaction(deps, found.invoice, txHash);
      const now = (await findByCheckoutToken(deps.db, found.invoice.checkoutToken))!;
      const where = result.outcome === 'deferred' ? null : await paidTo(deps.db, now.invoice, txHash);
      return c.json(
        {
          claim: { tx_hash: txHash, ...result, paid_to: where?.paid_to ?? null, amount: where?.amount ?? null },
          invoice: await checkoutView(deps, now.invoice, now.merchantName, dustOf(deps.config.tron.dust_threshold)),
        },
        200,
      );
    },
  );

  return app;
}
