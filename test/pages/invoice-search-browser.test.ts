/**
 * The console shows what happened (issue 43): "Apply here" turns the invoice page to its new state
 * (no stale Pending or Cancel), the list says what arrived and how an invoice was resolved and marks
 * partly paid ones, and invoices are found by order id, amount, transaction hash or address, server
 * side and a page at a time, in the console and through GET /invoices?q=.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { CONSOLE_INVOICE_PAGE } from '../../src/pages/console.pages.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { insertInvoice, WALLET_ADDRESS } from './rows.js';
import { layoutProblems, seedShowcase, seedWrongPayments } from './showcase.js';

test('console: Apply turns the invoice page, the list shows received amounts and resolutions, search and pages (Chromium, en and fa at 390 px; GET /invoices?q=)', async (t) => {
  const app = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30) });
  t.after(() => app.close());
  const showcase = await seedShowcase(app);
  const merchantId = showcase.owner.merchant.id;
  const now = app.clock.now();
  const walletId = (await app.deps.db.selectFrom('wallets').select('id').where('merchant_id', '=', merchantId).executeTakeFirstOrThrow()).id;
  // Older invoices than a page holds, then the one a payer short-paid.
  for (let i = 0; i < CONSOLE_INVOICE_PAGE; i++) {
    await insertInvoice(app.deps.db, {
      merchantId,
      walletId,
      now: now - 86_400_000 - i * 60_000,
      base: 3_000_000n,
      adjustment: BigInt(100 + i),
      orderId: `old-${i}`,
    });
  }
  const { wrong, wrongTx: WRONG_TX } = await seedWrongPayments(app, showcase);

  const out = mkdtempSync(join(tmpdir(), 'gatewayd-search-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const browser = await openBrowser({ viewport: { width: 390, height: 844 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  page.on('dialog', (d) => void d.accept());
  await context.addCookies([{ name: SESSION_COOKIE, value: showcase.owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);

  // Apply here: the page is the invoice's new state, not a stale Pending with Cancel.
  await page.goto(`${app.baseUrl}/console/invoices/${wrong.id}?lang=en`);
  assert.equal(await page.locator('h1 .badge').innerText(), 'Pending');
  await page.locator('#maybe form.resolve button[type=submit]').first().click();
  await page.waitForURL(/applied=1/);
  assert.equal(await page.locator('#applied').innerText(), 'Payment applied to this invoice.');
  assert.equal(await page.locator('h1 .badge').innerText(), 'Paid');
  assert.equal(await page.getByRole('button', { name: 'Cancel invoice' }).count(), 0, 'no Cancel on a paid invoice');
  assert.equal(await page.locator('#maybe').count(), 0);

  const failures: string[] = [];
  const rowOf = (order: string) => page.locator('tbody tr', { has: page.locator(`a:text-is("${order}")`) });
  for (const lang of ['en', 'fa']) {
    await page.goto(`${app.baseUrl}/console/invoices?lang=${lang}`);
    assert.equal(await page.locator('tbody tr').count(), CONSOLE_INVOICE_PAGE);
    assert.match(await rowOf('order-1043').innerText(), /19\.500000/);
    assert.match(await rowOf('order-1042').innerText(), /41\.500137/);
    assert.equal(await rowOf('order-1042').locator('.badge.partial').count(), 1, 'partly paid is marked');
    if (lang === 'en') {
      assert.match(await rowOf('order-1043').innerText(), /received 19\.500000[\s\S]*Paid[\s\S]*applied by hand/);
      assert.match(await rowOf('order-1042').innerText(), /Pending Partly paid/);
      assert.match(await rowOf('order-1043').innerText(), /2026-05-12 09:25 UTC/, 'dates say UTC');
    }
    for (const problem of await layoutProblems(page)) failures.push(`list ${lang}: ${problem}`);
    await page.screenshot({ path: join(out, `list-${lang}.png`), fullPage: true });
    // The next page holds the older ones, and links back.
    await page.locator('nav.pager a[rel=next]').click();
    await page.waitForURL(/after=/);
    assert.ok((await page.locator('tbody tr').count()) > 0);
    assert.match(await page.locator('tbody').innerText(), /old-4\d/);
    await page.locator('nav.pager a[rel=prev]').click();
    await page.waitForURL(/before=/);
    assert.equal(await page.locator('tbody tr').count(), CONSOLE_INVOICE_PAGE);

    // Search: order id, amount (price or payable), transaction hash, address.
    for (const [q, expect] of [
      ['order-1043', ['order-1043']],
      ['20', ['order-1043']],
      ['20.000011', ['order-1043']],
      [WRONG_TX, ['order-1043']],
      [`0x${'C3'.repeat(32)}`, ['order-1042']],
      ['nothing-like-it', []],
    ] as const) {
      await page.goto(`${app.baseUrl}/console/invoices?lang=${lang}&q=${encodeURIComponent(q)}`);
      const orders = await page.locator('tbody tr td:first-child a').allInnerTexts();
      assert.deepEqual(orders, expect, q);
      assert.equal(await page.locator('#f-q').inputValue(), q);
    }
    await page.goto(`${app.baseUrl}/console/invoices?lang=${lang}&q=${WALLET_ADDRESS}`);
    assert.equal(await page.locator('tbody tr').count(), CONSOLE_INVOICE_PAGE, 'every invoice of the wallet, a page at a time');
    await page.locator('#f-q').fill('order-1042');
    await page.locator('#f-q').press('Enter');
    await page.waitForURL(/q=order-1042/);
    assert.deepEqual(await page.locator('tbody tr td:first-child a').allInnerTexts(), ['order-1042']);
    for (const problem of await layoutProblems(page)) failures.push(`search ${lang}: ${problem}`);
    await page.screenshot({ path: join(out, `search-${lang}.png`), fullPage: true });
  }
  assert.deepEqual(failures, []);
  assert.deepEqual(browser.errors, []);

  // The API: the same search, paged, combined with the other filters; bad input is a 400.
  const api = showcase.owner.client;
  const ids = async (query: string) => {
    const res = await api.get(`/invoices?${query}`);
    assert.equal(res.status, 200, res.text);
    return (res.body.invoices as Array<{ merchant_order_id: string }>).map((i) => i.merchant_order_id);
  };
  assert.deepEqual(await ids(`q=${WRONG_TX}`), ['order-1043']);
  assert.deepEqual(await ids('q=3&limit=5'), ['old-0', 'old-1', 'old-2', 'old-3', 'old-4']);
  const page1 = await api.get('/invoices?q=3&limit=5');
  assert.equal(page1.body.has_more, true);
  const last = page1.body.invoices.at(-1).id;
  assert.deepEqual(await ids(`q=3&limit=5&starting_after=${last}`), ['old-5', 'old-6', 'old-7', 'old-8', 'old-9']);
  assert.deepEqual(await ids('q=20&status=pending'), [], 'combined with status: order-1043 is paid now');
  assert.deepEqual(await ids(`q=${WALLET_ADDRESS}&status=review`), ['wholesale-2026-0001-ABCDEFGHIJKLMNOPQRSTUVWXYZ']);
  for (const bad of ['q=', `q=${'x'.repeat(121)}`]) {
    const res = await api.get(`/invoices?${bad}`);
    assert.equal(res.status, 400, bad);
    assert.equal(res.body.error.code, 'validation_error');
  }
});
