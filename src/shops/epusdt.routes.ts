/**
 * The Epusdt facade (docs/shops.md, Epusdt): POST /api/v1/order/create-transaction exactly where
 * the drivers append it to the base URL, and BEpusdt's GET /api/v1/order/check-status/{trade_id},
 * which the WooCommerce plugin polls. Answers are in Epusdt's shape ({status_code, message, data}),
 * errors included, never in the gateway's own envelope. Mounted before the JSON body guard of
 * /api/v1, which would answer in the gateway's envelope.
 */
import { payerAddress } from '../chains/address-codec.js';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../http/context.js';
import { checkoutUrl } from '../invoices/invoice.model.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import { formatAmount } from '../lib/amounts.js';
import { checkProtocolText, createShopOrder, invoiceCurrency, refuseAuthentication, returnThroughGateway, ShopRefusal } from './shop-orders.js';
import { findConnectionById, findShopOrder, listActiveOfProtocol, type ShopConnection } from './shops.repo.js';
import { callbackNumber, signedText, verify, type SignedValue } from './signing.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { RateBook } from '../pricing/rate-book.js';

type Deps = Pick<CoreDeps, 'db' | 'sqlite' | 'config' | 'clock' | 'rateLimiter' | 'deliveriesQueued'> & { rates: RateBook };

const MAX_BODY = 64 * 1024;
/** What the Epusdt protocol can carry; BEpusdt's extensions (fiat, trade_type, name, timeout...) are signed like the rest. */
/** What a trade id (an invoice id) can look like; anything else is not looked up (PostgreSQL's text cannot hold NUL). */
const TRADE_ID = /^[A-Za-z0-9_-]{1,100}$/;
/** The text fields the gateway keeps or acts on, checked for unsafe characters (checkProtocolText). */
const PROTOCOL_TEXT = ['order_id', 'amount', 'notify_url', 'redirect_url', 'name', 'fiat', 'trade_type'] as const;

function refusal(c: Context, message: string, statusCode = 400) {
  return c.json({ status_code: statusCode, message, request_id: c.get('requestId') ?? '' }, 200);
}

/** A scalar field as text (order ids and amounts arrive as JSON numbers or strings); null when absent or empty. */
function text(body: Record<string, SignedValue>, name: string): string | null {
  const value = body[name];
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  return signedText(value) ?? null;
}

/** The active Epusdt connection whose key signs this body (the protocol names no merchant), checked in constant time each. */
async function matchConnection(deps: Deps, body: Record<string, SignedValue>): Promise<ShopConnection | undefined> {
  let found: ShopConnection | undefined;
  for (const connection of await listActiveOfProtocol(deps.db, 'epusdt')) {
    if (verify(body, connection.secret, body.signature) && !found) found = connection;
  }
  return found;
}

export function epusdtRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();
  const publicUrl = deps.config.server.public_url;

  // The body is read only up to the limit (a larger one is refused before it is buffered).
  const limit = bodyLimit({ maxSize: MAX_BODY, onError: (c) => refusal(c, 'request too large') });
  app.post('/api/v1/order/create-transaction', limit, async (c) => {
    const raw = await c.req.text();
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return refusal(c, 'the body must be a JSON object');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return refusal(c, 'the body must be a JSON object');
    const fields = body as Record<string, SignedValue>;
    try {
      // A signature that matches no connection names none to charge: it counts per client address.
      const connection = typeof fields.signature === 'string' ? await matchConnection(deps, fields) : undefined;
      if (!connection) return await refuseAuthentication(deps, c);
      checkProtocolText(Object.fromEntries(PROTOCOL_TEXT.map((name) => [name, text(fields, name)])));
      const tradeType = text(fields, 'trade_type');
      const orderId = text(fields, 'order_id');
      const amount = text(fields, 'amount');
      const notifyUrl = text(fields, 'notify_url');
      if (orderId === null || amount === null || notifyUrl === null) throw new ShopRefusal('order_id, amount and notify_url are required');
      const timeout = typeof fields.timeout === 'number' && Number.isInteger(fields.timeout) && fields.timeout > 0 ? fields.timeout : null;
      const { invoice, order } = await createShopOrder(deps, c, connection, {
        outTradeNo: orderId,
        money: amount,
        notifyUrl,
        returnUrl: text(fields, 'redirect_url'),
        type: null,
        name: text(fields, 'name'),
        param: null,
        timeoutSeconds: timeout,
        currency: text(fields, 'fiat'),
        tradeType,
      });
      return c.json(
        {
          status_code: 200,
          message: 'success',
          data: {
            trade_id: invoice.id,
            order_id: order.outTradeNo,
            amount: callbackNumber(order.money),
            actual_amount: callbackNumber(formatAmount(invoice.payableAmount)),
            token: payerAddress(invoice.network, invoice.walletAddress),
            expiration_time: Math.floor(invoice.expiresAt / 1000),
            payment_url: checkoutUrl(publicUrl, invoice.checkoutToken),
            status: invoice.status === 'confirmed' ? 2 : invoice.status === 'expired' ? 3 : 1,
            // The order's own currency (a `fiat` sent with the order wins over the connection's), as BEpusdt answers.
            fiat: invoiceCurrency(invoice),
          },
          request_id: c.get('requestId') ?? '',
        },
        200,
      );
    } catch (err) {
      if (err instanceof ShopRefusal) return refusal(c, err.message, err.status);
      throw err;
    }
  });

  // BEpusdt's status poll: unauthenticated there too; the trade id (an unguessable invoice id) is the capability,
  // and only invoices created through an Epusdt connection answer. BEpusdt serves it under /pay/ (its Python
  // SDK's query_order polls there); the WooCommerce plugin polls /api/v1/order/: both answer the same.
  const checkStatus = async (c: Context<AppEnv>) => {
    const tradeId = c.req.param('trade_id') ?? '';
    const order = TRADE_ID.test(tradeId) ? await findShopOrder(deps.db, tradeId) : undefined;
    const connection = order ? await findConnectionById(deps.db, order.connectionId) : undefined;
    const invoice = order && connection?.protocol === 'epusdt' ? await findInvoiceAnyMerchant(deps.db, order.invoiceId) : undefined;
    // A status changes: no cache may answer for it (the /pay/ path is outside /api/v1, which is no-store anyway).
    c.header('Cache-Control', 'no-store');
    if (!order || !invoice) return refusal(c, 'order not found');
    const paid = invoice.status === 'confirmed';
    return c.json(
      {
        trade_id: invoice.id,
        trade_hash: invoice.txHash ?? '',
        status: paid ? 2 : invoice.status === 'expired' ? 3 : 1,
        return_url: paid && order.returnUrl ? returnThroughGateway(publicUrl, invoice.checkoutToken) : '',
      },
      200,
    );
  };
  for (const path of ['/api/v1/order/check-status/:trade_id', '/pay/check-status/:trade_id']) app.get(path, checkStatus);

  return app;
}
