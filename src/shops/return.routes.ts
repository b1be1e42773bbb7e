/**
 * The payer's way back to the shop: the checkout's "Return" link of a shop's invoice points here,
 * and this sends the browser on to the shop's return_url. For a paid Epay order the signed fields
 * of the notification are added as Rainbow Epay does, unless the return_url holds a "#" (V2Board's
 * `/#/order/...`): a query after a fragment would reach no server, so the URL is left as it is.
 */
import { Hono } from 'hono';
import type { AppDeps } from '../app-deps.js';
import type { AppEnv } from '../http/context.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import { createRenderer, pageContext } from '../pages/render.js';
import { epayQuery, withQuery } from './shop-notify.js';
import { findConnectionById, findShopOrderByNumber } from './shops.repo.js';

export function shopReturnRoutes(deps: AppDeps) {
  const app = new Hono<AppEnv>();
  const renderer = createRenderer(deps);

  app.get('/shops/return/:connection/:order', async (c) => {
    const connection = await findConnectionById(deps.db, c.req.param('connection'));
    const order = connection ? await findShopOrderByNumber(deps.db, connection.id, c.req.param('order')) : undefined;
    const invoice = order ? await findInvoiceAnyMerchant(deps.db, order.invoiceId) : undefined;
    if (!connection || !order?.returnUrl || !invoice) {
      const ctx = pageContext(c, deps);
      return renderer.page(c, ctx, 'message', { title: ctx.t('page.error.not_found_title') }, { message: ctx.t('page.error.not_found'), back: '/' }, 404);
    }
    const signed = connection.protocol === 'epay' && invoice.status === 'confirmed' && !order.returnUrl.includes('#');
    return c.redirect(signed ? withQuery(order.returnUrl, epayQuery(connection, order, invoice)) : order.returnUrl, 302);
  });

  return app;
}
