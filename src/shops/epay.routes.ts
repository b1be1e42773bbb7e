/**
 * The Epay V1 facade under {public_url}/epay/ (docs/shops.md, Epay): submit.php (a browser form,
 * GET or POST, redirected to the checkout), mapi.php (a server POST answered in JSON) and
 * api.php?act=order (the order query). Base URLs that end in "/" reach here as /epay//submit.php
 * (V2Board and Xboard append "/submit.php" blindly), so both spellings are served.
 */
import { payerAddress } from '../chains/address-codec.js';
import { isTradeType } from './trade-types.js';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../http/context.js';
import { checkoutUrl, type Invoice } from '../invoices/invoice.model.js';
import { safeEqual } from '../lib/crypto.js';
import { createRenderer, pageContext } from '../pages/render.js';
import { chargeConnection, checkProtocolText, createShopOrder, NO_SHOP_KEY, refuseAuthentication, ShopRefusal } from './shop-orders.js';
import { findActiveByPid, findShopOrderByNumber, type ShopConnection } from './shops.repo.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import { verify } from './signing.js';
import type { CoreDeps } from '../core/core-deps.js';
import type { RateBook } from '../pricing/rate-book.js';

type Deps = Pick<CoreDeps, 'db' | 'sqlite' | 'config' | 'clock' | 'rateLimiter' | 'deliveriesQueued'> & { rates: RateBook };

const MAX_BODY = 64 * 1024;
type Params = Record<string, string>;

/** Every field received, from the query and (for a POST) the form body, which wins, as PHP's $_REQUEST does. */
async function readParams(c: Context): Promise<Params> {
  const params: Params = {};
  for (const [k, v] of new URL(c.req.url).searchParams) params[k] = v;
  if (c.req.method === 'POST') {
    const type = c.req.header('content-type') ?? '';
    if (/application\/x-www-form-urlencoded|multipart\/form-data/i.test(type)) {
      let body: Awaited<ReturnType<typeof c.req.parseBody>>;
      try {
        body = await c.req.parseBody();
      } catch {
        throw new ShopRefusal('the form body cannot be read');
      }
      for (const [k, v] of Object.entries(body)) if (typeof v === 'string') params[k] = v;
    }
  }
  return params;
}

/**
 * The connection a request names by pid, once `passes` accepts its key (the signature over every
 * non-empty field received, or api.php's key). A pid that names no active connection is checked
 * against a key no shop holds, so it costs the same work and gets the same answer, counted against
 * the same per-address limit, as a wrong key. Only a request that passes is charged: an order query
 * here, a creation or replay by createShopOrder.
 */
async function authenticate(deps: Deps, c: Context, params: Params, passes: (secret: string) => boolean): Promise<ShopConnection> {
  const pid = params.pid ?? '';
  const connection = /^[0-9]{1,9}$/.test(pid) ? await findActiveByPid(deps.db, 'epay', Number(pid)) : undefined;
  const passed = passes(connection?.secret ?? NO_SHOP_KEY);
  if (!connection || !passed) return refuseAuthentication(deps, c);
  return connection;
}

async function createFrom(deps: Deps, c: Context, params: Params) {
  const connection = await authenticate(deps, c, params, (secret) => verify(params, secret, params.sign));
  const { out_trade_no, name, param, type, notify_url, return_url, money, fiat, currency } = params;
  checkProtocolText({ out_trade_no, name, param, type, notify_url, return_url, money, fiat, currency });
  for (const field of ['out_trade_no', 'notify_url', 'money'] as const) {
    if (!params[field]) throw new ShopRefusal(`${field} is missing`);
  }
  const timeout = params.timeout && /^[0-9]{1,7}$/.test(params.timeout) ? Number(params.timeout) : null;
  const result = await createShopOrder(deps, c, connection, {
    outTradeNo: params.out_trade_no!,
    money: params.money!,
    notifyUrl: params.notify_url!,
    returnUrl: params.return_url || null,
    type: params.type || null,
    name: params.name || null,
    param: params.param || null,
    timeoutSeconds: timeout,
    currency: params.fiat || params.currency || null,
    // An Epay `type` is the shop's payment method name; one that is a trade type picks the network.
    tradeType: params.type && isTradeType(params.type) ? params.type : null,
  });
  return { connection, ...result };
}

/** Rainbow Epay's date format (the server's UTC time). */
function epayTime(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export function epayRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();
  const renderer = createRenderer(deps);
  const publicUrl = deps.config.server.public_url;
  const limit = bodyLimit({ maxSize: MAX_BODY, onError: (c) => c.json({ code: -1, msg: 'request too large' }, 413) });

  const submit = async (c: Context<AppEnv>) => {
    try {
      const { invoice } = await createFrom(deps, c, await readParams(c));
      return c.redirect(checkoutUrl(publicUrl, invoice.checkoutToken), 302);
    } catch (err) {
      if (!(err instanceof ShopRefusal)) throw err;
      const ctx = pageContext(c, deps);
      return renderer.page(c, ctx, 'shop-refused', { title: ctx.t('page.shop.refused_title') }, { detail: err.message }, 400);
    }
  };

  const mapi = async (c: Context<AppEnv>) => {
    try {
      const { invoice } = await createFrom(deps, c, await readParams(c));
      return c.json(
        {
          code: 1,
          msg: 'success',
          trade_no: invoice.id,
          payurl: checkoutUrl(publicUrl, invoice.checkoutToken),
          qrcode: payerAddress(invoice.network, invoice.walletAddress),
        },
        200,
      );
    } catch (err) {
      if (!(err instanceof ShopRefusal)) throw err;
      return c.json({ code: -1, msg: err.message }, 200);
    }
  };

  /** act=order: the order by out_trade_no (or trade_no), authenticated by pid and key as Rainbow Epay does. */
  const api = async (c: Context<AppEnv>) => {
    try {
      const params = await readParams(c);
      if (params.act !== 'order') throw new ShopRefusal('only act=order is served here (act=query would return the merchant key)');
      const connection = await authenticate(deps, c, params, (secret) => safeEqual(params.key ?? '', secret));
      await chargeConnection(deps, connection);
      checkProtocolText({ out_trade_no: params.out_trade_no, trade_no: params.trade_no });
      let invoice: Invoice | undefined;
      let order = params.out_trade_no ? await findShopOrderByNumber(deps.db, connection.id, params.out_trade_no) : undefined;
      if (order) invoice = await findInvoiceAnyMerchant(deps.db, order.invoiceId);
      else if (params.trade_no) {
        invoice = await findInvoiceAnyMerchant(deps.db, params.trade_no);
        order =
          invoice && invoice.merchantId === connection.merchantId ? await findShopOrderByNumber(deps.db, connection.id, invoice.merchantOrderId) : undefined;
      }
      if (!order || !invoice || order.invoiceId !== invoice.id) throw new ShopRefusal('order not found');
      return c.json(
        {
          code: 1,
          msg: 'success',
          trade_no: invoice.id,
          out_trade_no: order.outTradeNo,
          type: order.type ?? '',
          pid: connection.pid,
          addtime: epayTime(invoice.createdAt),
          endtime: epayTime(invoice.status === 'confirmed' ? invoice.confirmedAt : null),
          name: order.name ?? '',
          money: order.money,
          param: order.param ?? '',
          status: invoice.status === 'confirmed' ? 1 : 0,
        },
        200,
      );
    } catch (err) {
      if (!(err instanceof ShopRefusal)) throw err;
      return c.json({ code: -1, msg: err.message }, 200);
    }
  };

  for (const prefix of ['/epay/', '/epay//']) {
    app.on(['GET', 'POST'], `${prefix}submit.php`, limit, submit);
    app.on(['GET', 'POST'], `${prefix}mapi.php`, limit, mapi);
    app.on(['GET', 'POST'], `${prefix}api.php`, limit, api);
  }
  return app;
}
