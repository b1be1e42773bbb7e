/**
 * The Epusdt facade (docs/shops.md, Epusdt): POST /api/v1/order/create-transaction exactly where
 * the drivers append it to the base URL, and BEpusdt's GET /api/v1/order/check-status/{trade_id},
 * which the WooCommerce plugin polls. Answers are in Epusdt's shape ({status_code, message, data}),
 * errors included, never in the gateway's own envelope. Mounted before the JSON body guard of
 * /api/v1, which would answer in the gateway's envelope.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppDeps } from '../app-deps.js';
import type { AppEnv } from '../http/context.js';
import { clientIp } from '../http/client-ip.js';
import { checkoutUrl } from '../invoices/invoice.model.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import { formatAmount } from '../lib/amounts.js';
import { AppError } from '../lib/errors.js';
import { AUTH_REFUSAL, chargeConnection, createShopOrder, returnThroughGateway, ShopRefusal } from './shop-orders.js';
import { findConnectionById, findShopOrder, listActiveOfProtocol, type ShopConnection } from './shops.repo.js';
import { callbackNumber, signedText, verify, type SignedValue } from './signing.js';

const MAX_BODY = 64 * 1024;
/** Requests whose signature matches no connection, per client address and minute (they name no connection to charge). */
export const UNSIGNED_PER_MINUTE = 30;
/** What the Epusdt protocol can carry; BEpusdt's extensions (fiat, trade_type, name, timeout...) are signed like the rest. */
const TRADE_TYPES = new Set(['usdt.trc20', 'usdt_trc20', 'usdt']);

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
async function matchConnection(deps: AppDeps, body: Record<string, SignedValue>): Promise<ShopConnection | undefined> {
  let found: ShopConnection | undefined;
  for (const connection of await listActiveOfProtocol(deps.db, 'epusdt')) {
    if (verify(body, connection.secret, body.signature) && !found) found = connection;
  }
  return found;
}

export function epusdtRoutes(deps: AppDeps) {
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
      const connection = typeof fields.signature === 'string' ? await matchConnection(deps, fields) : undefined;
      if (!connection) {
        try {
          await deps.rateLimiter.consume('epusdt_unsigned', clientIp(c, deps.config.server.trust_proxy), UNSIGNED_PER_MINUTE);
        } catch (err) {
          if (err instanceof AppError) return refusal(c, 'too many requests with a wrong signature; retry in a minute', 429);
          throw err;
        }
        return refusal(c, AUTH_REFUSAL, 401);
      }
      await chargeConnection(deps, connection);
      const tradeType = text(fields, 'trade_type');
      if (tradeType !== null && !TRADE_TYPES.has(tradeType.toLowerCase()))
        throw new ShopRefusal(`trade_type ${tradeType} is not available; this gateway takes usdt.trc20`);
      const orderId = text(fields, 'order_id');
      const amount = text(fields, 'amount');
      const notifyUrl = text(fields, 'notify_url');
      if (orderId === null || amount === null || notifyUrl === null) throw new ShopRefusal('order_id, amount and notify_url are required');
      const timeout = typeof fields.timeout === 'number' && Number.isInteger(fields.timeout) && fields.timeout > 0 ? fields.timeout : null;
      const { invoice, order } = await createShopOrder(deps, connection, {
        outTradeNo: orderId,
        money: amount,
        notifyUrl,
        returnUrl: text(fields, 'redirect_url'),
        type: null,
        name: text(fields, 'name'),
        param: null,
        timeoutSeconds: timeout,
        currency: text(fields, 'fiat'),
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
            token: invoice.walletAddress,
            expiration_time: Math.floor(invoice.expiresAt / 1000),
            payment_url: checkoutUrl(publicUrl, invoice.checkoutToken),
            status: invoice.status === 'confirmed' ? 2 : invoice.status === 'expired' ? 3 : 1,
            fiat: connection.currency,
          },
          request_id: c.get('requestId') ?? '',
        },
        200,
      );
    } catch (err) {
      if (err instanceof ShopRefusal) return refusal(c, err.message);
      throw err;
    }
  });

  // BEpusdt's status poll: unauthenticated there too; the trade id (an unguessable invoice id) is the capability,
  // and only invoices created through an Epusdt connection answer.
  app.get('/api/v1/order/check-status/:trade_id', async (c) => {
    const tradeId = c.req.param('trade_id');
    const order = tradeId.length <= 100 ? await findShopOrder(deps.db, tradeId) : undefined;
    const connection = order ? await findConnectionById(deps.db, order.connectionId) : undefined;
    const invoice = order && connection?.protocol === 'epusdt' ? await findInvoiceAnyMerchant(deps.db, order.invoiceId) : undefined;
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
  });

  return app;
}
