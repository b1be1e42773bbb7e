/**
 * The payer's way back to the shop: the checkout's "Return" link of a shop's invoice points here,
 * and this sends the browser on to the shop's return_url. For a paid Epay order the signed fields
 * of the notification are added as Rainbow Epay does, unless the return_url holds a "#" (V2Board's
 * `/#/order/...`): a query after a fragment would reach no server, so the URL is left as it is.
 *
 * The hop is `/shops/return/{checkout_token}`: only the holder of the invoice's checkout link (the
 * payer, the merchant) can follow it. Anything else, the old `/shops/return/{connection}/{order}`
 * form included (a connection id is public and order numbers are often sequential), gets one page
 * saying the link is not valid: no redirect, no signed field, and the same answer whether or not
 * such an order exists.
 */
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import { findByCheckoutToken } from '../invoices/invoices.repo.js';
import { createRenderer, pageContext } from '../pages/render.js';
import { epayQuery, withQuery } from './shop-notify.js';
import { findConnectionById, findShopOrder } from './shops.repo.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config'>;

/** A checkout token's shape (32 random bytes, base64url): anything else is not looked up. */
const CHECKOUT_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function shopReturnRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();
  const renderer = createRenderer(deps);

  const invalid = (c: Context<AppEnv>) => {
    const ctx = pageContext(c, deps);
    return renderer.page(c, ctx, 'message', { title: ctx.t('page.shop_return.invalid_title') }, { message: ctx.t('page.shop_return.invalid'), back: '/' }, 404);
  };

  app.get('/shops/return/:token', async (c) => {
    const token = c.req.param('token');
    const found = CHECKOUT_TOKEN.test(token) ? await findByCheckoutToken(deps.db, token) : undefined;
    const order = found ? await findShopOrder(deps.db, found.invoice.id) : undefined;
    const connection = order ? await findConnectionById(deps.db, order.connectionId) : undefined;
    if (!found || !connection || !order?.returnUrl) return invalid(c);
    const invoice = found.invoice;
    const signed = connection.protocol === 'epay' && invoice.status === 'confirmed' && !order.returnUrl.includes('#');
    return c.redirect(signed ? withQuery(order.returnUrl, epayQuery(connection, order, invoice)) : order.returnUrl, 302);
  });

  // Links of the old form, on checkout pages opened before the upgrade: never followed.
  app.get('/shops/return/:connection/:order', (c) => invalid(c));

  return app;
}
