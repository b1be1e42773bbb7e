/**
 * The merchant console (owner session). Pages read through the feature repositories and post
 * plain HTML forms back to /console/...; every POST must carry our own Origin (browsers send it on
 * form posts), on top of the SameSite=Lax session cookie.
 */
import type { Context, Hono } from 'hono';
import { findMerchantById, type Merchant } from '../accounts/merchants.repo.js';
import { optionalSession } from '../http/auth.js';
import type { AppDeps, AppEnv } from '../http/context.js';
import { formatAmount, fromDbAmount } from '../lib/amounts.js';
import { iso } from '../lib/clock.js';
import { pageContext, type PageContext, type Renderer } from './render.js';

export interface ConsoleRequest {
  ctx: PageContext;
  merchant: Merchant;
  staff: boolean;
}

/** The signed-in owner, or a redirect to /login that comes back here afterwards. */
export async function consoleRequest(c: Context, deps: AppDeps): Promise<ConsoleRequest | Response> {
  const ctx = pageContext(c, deps);
  const auth = await optionalSession(c, deps);
  const merchant = auth ? await findMerchantById(deps.db, auth.merchantId) : undefined;
  if (!merchant) return c.redirect(`/login?next=${encodeURIComponent(c.req.path)}`, 303);
  const staff = deps.config.support.staff_emails.some((e) => e.trim().toLowerCase() === merchant.email);
  return { ctx, merchant, staff };
}

export function consolePages(app: Hono<AppEnv>, deps: AppDeps, renderer: Renderer): void {
  app.get('/console', async (c) => {
    const req = await consoleRequest(c, deps);
    if (req instanceof Response) return req;
    const { ctx, merchant } = req;
    const counts = await deps.db
      .selectFrom('invoices')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('merchant_id', '=', merchant.id)
      .groupBy('status')
      .execute();
    const paid = await deps.db
      .selectFrom('invoices')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('payable_amount'), eb.lit(0)).as('total'))
      .where('merchant_id', '=', merchant.id)
      .where('status', '=', 'confirmed')
      .executeTakeFirstOrThrow();
    const wallets = await deps.db.selectFrom('wallets').select((eb) => eb.fn.countAll<number>().as('n')).where('merchant_id', '=', merchant.id).executeTakeFirstOrThrow();
    const recent = await deps.db
      .selectFrom('invoices')
      .select(['id', 'merchant_order_id', 'status', 'payable_amount', 'created_at'])
      .where('merchant_id', '=', merchant.id)
      .orderBy('created_at', 'desc')
      .limit(10)
      .execute();
    const byStatus = Object.fromEntries(counts.map((r) => [r.status, Number(r.n)]));
    return renderer.page(
      c,
      ctx,
      'console-overview',
      { title: ctx.t('console.overview.title'), nav: { merchantName: merchant.name, staff: req.staff, active: 'overview' } },
      {
        merchant,
        stats: {
          pending: byStatus.pending ?? 0,
          confirmed: byStatus.confirmed ?? 0,
          review: byStatus.review ?? 0,
          expired: byStatus.expired ?? 0,
          wallets: Number(wallets.n),
          received: formatAmount(fromDbAmount(paid.total)),
        },
        recent: recent.map((r) => ({ ...r, payable_amount: formatAmount(fromDbAmount(r.payable_amount)), created_at: iso(r.created_at) })),
      },
    );
  });
}
