/**
 * The merchant console (owner session). Pages are rendered on the server from the merchant's own
 * rows; every action is a form that plain JavaScript sends to the JSON API, so the console obeys
 * exactly the API's rules: the SameSite=Lax session cookie plus the Origin check on every unsafe
 * request (a same-origin fetch always carries Origin), and the same validation and errors.
 */
import type { Context, Hono } from 'hono';
import { defaultName } from '../accounts/auth.service.js';
import { findMerchantById, type Merchant } from '../accounts/merchants.repo.js';
import type { InvoiceStatus } from '../db/schema.js';
import { optionalSession } from '../http/auth.js';
import type { AppEnv } from '../http/context.js';
import { toInvoiceResponse } from '../invoices/invoices.schemas.js';
import { findInvoiceCursor, findMerchantInvoice, listInvoicePage, listMerchantInvoices, resolveInvoiceSearch } from '../invoices/invoices.repo.js';
import { isSupportStaff } from '../accounts/support-staff.js';
import { twoFactorStatus } from '../accounts/two-factor.service.js';
import { telegramPanel } from '../telegram/telegram.panel.js';
import { findFillingPools } from '../dashboard/pools.repo.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import { countUnmatchedDust, listLatePayments, listMerchantLatePayments, listUnmatchedTransfers } from '../payments/transfers.repo.js';
import { listOpenDisputes } from '../payments/scan.repo.js';
import { formMessages } from './auth.pages.js';
import { readOverviewFigures } from '../dashboard/dashboard.js';
import { listDeliveryViews, listWalletViews } from '../dashboard/dashboard.repo.js';
import { EVENT_TYPES, listInvoiceEvents } from '../events/events.repo.js';
import { isKeyActive, listMerchantKeys } from '../api-keys/api-keys.repo.js';
import { listWebhooks } from '../webhooks/webhooks.repo.js';
import { formatAmount, parseAmount } from '../lib/amounts.js';
import { formatDate, pageContext, type PageContext, type Renderer } from './render.js';
import { networkName } from './checkout-options.js';
import { codeRun, listRun, timeRun, translateHtml } from './runs.js';
import { livePayments } from '../system/live-payments.js';
import { appliedTransfers } from '../dashboard/transfers.repo.js';
import { invoiceChoices, transferRows } from './console-resolve.js';
import { BOUNDED_TOLERANCE_PATTERN, findPaymentSettings } from '../accounts/underpayment.js';
import type { ChainTransfer } from '../payments/transfer.model.js';
import type { Db } from '../db/database.js';
import { liveQuotes, toPricingHealthResponse } from '../pricing/pricing.schemas.js';
import { MARKUP_PATTERN } from '../pricing/pricing.service.js';
import type { RateBook } from '../pricing/rate-book.js';
import type { TelegramRuntime } from '../telegram/telegram.runtime.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock' | 'log' | 'rateLimiter'> & {
  watcherStatus: WatcherStatus;
  rates: RateBook;
  telegram: TelegramRuntime | undefined;
};

/** The event types a webhook can be limited to (webhook.test always reaches the webhook it tests). */
const CHOOSABLE_EVENTS = EVENT_TYPES.filter((type) => type !== 'webhook.test');
/** Invoices a page of the console's list shows. */
export const CONSOLE_INVOICE_PAGE = 50;
const STATUSES: readonly InvoiceStatus[] = ['pending', 'review', 'confirmed', 'expired'];
const RECENT_INVOICES = 10;

/** Every token contract of the networks this instance watches (the wallet list counts open invoices in any of them). */
export function tokenContracts(deps: Pick<Deps, 'config'>): string[] {
  return deps.config.networks.flatMap((n) => n.tokens.map((token) => token.contract));
}

/** Price pools on the merchant's addresses that are filling up, as the pool-warnings partial shows them. */
export async function poolWarnings(deps: Deps, merchantId: string) {
  const pools = await findFillingPools(deps.db, merchantId, parseAmount(deps.config.invoices.max_adjustment)!);
  return pools.map((p) => ({
    wallet: p.walletLabel,
    address: p.address,
    price: formatAmount(p.baseAmount),
    used: p.used.toString(),
    size: p.size.toString(),
    percent: ((p.used * 100n) / p.size).toString(),
    sharedWith: p.sharedWith,
  }));
}

/**
 * The new-invoice form's amount pattern (an HTML `pattern`, matched whole): the API's amount
 * pattern narrowed to its limits, 0.000001 to 1000000000 with at most six decimals, so the browser
 * refuses exactly what the API would refuse.
 */
export const FORM_AMOUNT_PATTERN = '0\\.(?!0{1,6}$)[0-9]{1,6}|[1-9][0-9]{0,8}(\\.[0-9]{1,6})?|1000000000(\\.0{1,6})?';

/**
 * Unmatched (at least minUnmatched micro-units: dust is folded) and late transfers of the merchant
 * (the newest 100 of each). A partial payment recorded against another merchant's invoice on a
 * shared address is theirs and not listed; the owner's own partial payments come first.
 */
async function merchantTransfers(
  db: Db,
  networks: ReadonlyArray<{ readonly id: string }>,
  merchantId: string,
  minUnmatched: number,
): Promise<{ unmatched: ChainTransfer[]; late: ChainTransfer[] }> {
  const unmatched = [];
  // Every network the instance watches, newest first across them.
  const found: ChainTransfer[] = [];
  for (const network of networks) found.push(...(await listUnmatchedTransfers(db, network, merchantId, 100, minUnmatched)));
  found.sort((a, b) => b.blockTimestamp - a.blockTimestamp || (a.id < b.id ? -1 : 1));
  for (const x of found.slice(0, 100)) {
    if (x.invoiceId === null || (await findMerchantInvoice(db, merchantId, x.invoiceId))) unmatched.push(x);
  }
  // A partial payment of one of the owner's invoices waits for them: first in the list.
  const partialFirst = [...unmatched.filter((x) => x.invoiceId !== null), ...unmatched.filter((x) => x.invoiceId === null)];
  return { unmatched: partialFirst, late: await listMerchantLatePayments(db, merchantId) };
}

export interface ConsoleRequest {
  ctx: PageContext;
  merchant: Merchant;
  staff: boolean;
  /** Since when the oldest open chain dispute is held (chain_disputes: any instance sees it), or null. */
  disputedSince: number | null;
}

/** The signed-in owner, or a redirect to /login that comes back here afterwards. */
export async function consoleRequest(c: Context, deps: Deps): Promise<ConsoleRequest | Response> {
  const ctx = pageContext(c, deps);
  const auth = await optionalSession(c, deps);
  const merchant = auth ? await findMerchantById(deps.db, auth.merchantId) : undefined;
  if (!merchant) return c.redirect(`/login?next=${encodeURIComponent(c.req.path)}`, 303);
  const staff = isSupportStaff(deps.config, merchant.email);
  const disputes = await listOpenDisputes(deps.db, deps.config.network);
  return { ctx, merchant, staff, disputedSince: disputes.length === 0 ? null : Math.min(...disputes.map((d) => d.since)) };
}

export type ConsoleRender = (
  c: Context,
  req: ConsoleRequest,
  name: string,
  active: string,
  title: string,
  data: Record<string, unknown>,
  status?: number,
) => Response;

/**
 * The console's banner while payments are confirmed late or not at all: the reason and since when.
 * An open dispute has its own text (payments held until a second provider confirms, not lost; what
 * the operator can do), shown only while a dispute is open.
 */
/** A date inside a sentence, as markup: its own isolated run, so right-to-left text never reorders it. */
const dateRun = (ms: number) => timeRun(new Date(ms).toISOString(), formatDate(ms));

function healthBanner(ctx: PageContext, status: WatcherStatus, now: number, disputedSince: number | null): string | null {
  if (disputedSince !== null) return translateHtml(ctx.t, 'console.health.disputed', { since: dateRun(disputedSince) });
  const live = livePayments(status);
  if (live.condition === 'ok') return null;
  const since = live.since ?? now;
  const params = {
    since: dateRun(since),
    minutes: String(Math.max(1, Math.round((now - since) / 60_000))),
    lag: String(Math.max(1, Math.round((live.lagSeconds ?? 0) / 60))),
  };
  return translateHtml(ctx.t, live.condition === 'down' ? 'console.health.down' : 'console.health.behind', params);
}

export function consoleRenderer(renderer: Renderer, deps: Deps): ConsoleRender {
  return (c, req, name, active, title, data, status = 200) =>
    renderer.page(
      c,
      req.ctx,
      name,
      {
        title,
        scripts: ['copy.js', 'two-factor.js', 'forms.js'],
        data: { messages: formMessages(req.ctx) },
        nav: {
          merchantName: req.merchant.name,
          staff: req.staff,
          active,
          banner: healthBanner(req.ctx, deps.watcherStatus, deps.clock.now(), req.disputedSince),
        },
      },
      { merchant: req.merchant, ...data },
      status,
    );
}

/** GET handlers that need the signed-in owner. */
export function consoleGet(app: Hono<AppEnv>, deps: Deps, path: string, handler: (c: Context, req: ConsoleRequest) => Promise<Response>): void {
  app.get(path, async (c) => {
    const req = await consoleRequest(c, deps);
    return req instanceof Response ? req : handler(c, req);
  });
}

export function consolePages(app: Hono<AppEnv>, deps: Deps, renderer: Renderer): void {
  const render = consoleRenderer(renderer, deps);
  const publicUrl = deps.config.server.public_url;
  const dustThreshold = Number(parseAmount(deps.config.tron.dust_threshold) ?? 0n);

  consoleGet(app, deps, '/console', async (c, req) => {
    const figures = await readOverviewFigures(deps, req.merchant.id);
    const { stats, ...counts } = figures;
    const overview = { byStatus: stats.byStatus, received: formatAmount(stats.confirmed.received), ...counts };
    const recent = (await listMerchantInvoices(deps.db, req.merchant.id, RECENT_INVOICES)).map((inv) => toInvoiceResponse(inv, publicUrl));
    // Dust (poisoning spam) never asks for attention.
    const transfers = await merchantTransfers(deps.db, deps.config.networks, req.merchant.id, dustThreshold);
    const all = [...transfers.unmatched, ...transfers.late];
    const applied = await appliedTransfers(
      deps.db,
      all.map((x) => x.id),
    );
    const attention = all.filter((x) => !applied.has(x.id)).length;
    return render(c, req, 'console-overview', 'overview', req.ctx.t('console.overview.title'), {
      stats: overview,
      recent,
      hasWallet: figures.wallets > 0,
      pools: await poolWarnings(deps, req.merchant.id),
      attention,
      // Still the part of the email before "@": the checkout would read "Payment to you".
      nameIsDefault: req.merchant.name === defaultName(req.merchant.email, undefined),
    });
  });

  // The whole history, a page at a time (newer / older links by cursor), searchable as GET /invoices?q= is.
  consoleGet(app, deps, '/console/invoices', async (c, req) => {
    const status = STATUSES.find((s) => s === c.req.query('status'));
    const text = (c.req.query('q') ?? '').trim().slice(0, 120);
    const cursor = async (id: string | undefined) => (id ? await findInvoiceCursor(deps.db, req.merchant.id, id) : undefined);
    const startingAfter = await cursor(c.req.query('after'));
    const endingBefore = startingAfter ? undefined : await cursor(c.req.query('before'));
    const { items, hasMore } = await listInvoicePage(
      deps.db,
      req.merchant.id,
      { statuses: status ? [status] : undefined, search: text ? await resolveInvoiceSearch(deps.db, req.merchant.id, text) : undefined },
      { limit: CONSOLE_INVOICE_PAGE, startingAfter, endingBefore },
    );
    const invoices = items.map((inv) => toInvoiceResponse(inv, publicUrl));
    const link = (key: 'after' | 'before', id: string) => {
      const query = new URLSearchParams();
      if (status) query.set('status', status);
      if (text) query.set('q', text);
      query.set(key, id);
      return `/console/invoices?${query.toString()}`;
    };
    const first = invoices[0];
    const last = invoices.at(-1);
    const older = last && (endingBefore ? true : hasMore) ? link('after', last.id) : null;
    const newer = first && (endingBefore ? hasMore : startingAfter !== undefined) ? link('before', first.id) : null;
    return render(c, req, 'console-invoices', 'invoices', req.ctx.t('console.invoices.title'), {
      invoices,
      status: status ?? '',
      statuses: STATUSES,
      q: text,
      older,
      newer,
    });
  });

  consoleGet(app, deps, '/console/invoices/new', async (c, req) => {
    const wallets = (await listWalletViews(deps.db, req.merchant.id, tokenContracts(deps))).filter((w) => w.archivedAt === null);
    return render(c, req, 'console-invoice-new', 'invoices', req.ctx.t('console.invoice_new.title'), {
      wallets,
      amountPattern: FORM_AMOUNT_PATTERN,
      currencies: deps.rates.enabled ? deps.config.pricing.currencies : [],
      markupPattern: MARKUP_PATTERN,
      markup: req.merchant.markupPercent,
      // Every network and token this instance watches, as the payer's page names them.
      choices: deps.config.networks.flatMap((n) => n.tokens.map((token) => ({ network: n.id, token: token.symbol, name: networkName(n) }))),
    });
  });

  consoleGet(app, deps, '/console/invoices/:id', async (c, req) => {
    const invoice = await findMerchantInvoice(deps.db, req.merchant.id, c.req.param('id') ?? '');
    if (!invoice) {
      return renderer.page(
        c,
        req.ctx,
        'message',
        { title: req.ctx.t('page.error.not_found_title') },
        { message: req.ctx.t('page.error.not_found'), back: '/console/invoices' },
        404,
      );
    }
    const events = await listInvoiceEvents(deps.db, req.merchant.id, invoice.id);
    const deliveries = await listDeliveryViews(deps.db, req.merchant.id, { invoiceId: invoice.id });
    const late = await transferRows(deps.db, req.ctx, req.merchant.id, await listLatePayments(deps.db, invoice.id));
    return render(c, req, 'console-invoice', 'invoices', req.ctx.t('console.invoice.title', { order: invoice.merchantOrderId }), {
      inv: toInvoiceResponse(invoice, publicUrl),
      // Back from "Apply here": the page is read again, so its status and actions are the new ones.
      applied: c.req.query('applied') === '1' && invoice.resolution === 'manual',
      late,
      maybe: await invoiceChoices(deps.db, req.ctx, req.merchant.id, invoice, dustThreshold),
      metadata: JSON.stringify(invoice.metadata, null, 2),
      events,
      deliveries,
    });
  });

  // Dust (unmatched transfers below tron.dust_threshold: zero-value and tiny poisoning transfers)
  // is recorded but folded away unless asked for (?dust=1), so it does not bury real payments.
  consoleGet(app, deps, '/console/transfers', async (c, req) => {
    const showDust = c.req.query('dust') === '1';
    const { unmatched, late } = await merchantTransfers(deps.db, deps.config.networks, req.merchant.id, showDust ? 0 : dustThreshold);
    let dust = 0;
    for (const network of showDust ? [] : deps.config.networks) dust += await countUnmatchedDust(deps.db, network, req.merchant.id, dustThreshold);
    return render(c, req, 'console-transfers', 'transfers', req.ctx.t('console.transfers.title'), {
      unmatched: await transferRows(deps.db, req.ctx, req.merchant.id, unmatched),
      late: await transferRows(deps.db, req.ctx, req.merchant.id, late),
      dust,
      showDust,
      dustThreshold: deps.config.tron.dust_threshold,
      act: true,
    });
  });

  consoleGet(app, deps, '/console/api-keys', async (c, req) => {
    const now = deps.clock.now();
    const keys = (await listMerchantKeys(deps.db, req.merchant.id)).map((key) => ({ ...key, active: isKeyActive(key, now) }));
    return render(c, req, 'console-api-keys', 'api_keys', req.ctx.t('console.keys.title'), { keys, now });
  });

  consoleGet(app, deps, '/console/webhooks', async (c, req) => {
    // Without the signing secret: the page never needs it.
    const now = deps.clock.now();
    const webhooks = (await listWebhooks(deps.db, req.merchant.id)).map(({ id, url, active, paused, enabledEvents, previousSecretExpiresAt, createdAt }) => ({
      id,
      url,
      active,
      paused,
      enabledEvents,
      // While a roll is in progress: when the previous secret stops signing.
      rollingUntil: previousSecretExpiresAt !== null && previousSecretExpiresAt > now ? previousSecretExpiresAt : null,
      createdAt,
    }));
    const deliveries = await listDeliveryViews(deps.db, req.merchant.id, { limit: 100 });
    const { t, locale } = req.ctx;
    // Every event the API sends, and the URL rule of this instance (`gatewayd dev` takes any http(s) URL).
    const intro = translateHtml(t, 'console.webhooks.intro', { events: listRun(locale, EVENT_TYPES.map(codeRun)) });
    const urlHint = deps.config.devMode
      ? t('console.webhooks.url_hint_dev')
      : t('console.webhooks.url_hint', { ports: new Intl.ListFormat(locale, { type: 'disjunction' }).format(deps.config.webhooks.allowed_ports.map(String)) });
    return render(c, req, 'console-webhooks', 'webhooks', t('console.webhooks.title'), { webhooks, deliveries, eventTypes: CHOOSABLE_EVENTS, intro, urlHint });
  });

  consoleGet(app, deps, '/console/account', async (c, req) => {
    const now = deps.clock.now();
    const telegram = await telegramPanel(deps, req.merchant.id, now);
    return render(c, req, 'console-account', 'account', req.ctx.t('console.account.title'), {
      markupPattern: MARKUP_PATTERN,
      rates: toPricingHealthResponse(deps.rates, now),
      quotes: liveQuotes(deps.rates, now),
      settings: await findPaymentSettings(deps.db, req.merchant.id),
      twoFactor: await twoFactorStatus(deps, req.merchant.id),
      staffNeeds2fa: req.staff && deps.config.auth.require_2fa_for_staff,
      // The HTML pattern is matched whole: the API's pattern without its anchors.
      tolerancePattern: BOUNDED_TOLERANCE_PATTERN.slice(1, -1),
      telegram,
      telegramLinked: telegram?.linkedAt ? translateHtml(req.ctx.t, 'console.telegram.linked', { since: dateRun(telegram.linkedAt) }) : null,
    });
  });
}
