/**
 * The console's new-invoice form in Chromium, on an instance with EVM networks beside TRON: no box
 * ticked asks the wallet's first network in USDT; ticked boxes become the invoice's options, the
 * first ticked option 0, each with its own amount. Every locale at 1280 and 390 px, fa and ar right to left.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { ADDRESSES } from '../helpers/shop.js';
import { layoutProblems } from './showcase.js';

const EVM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const PROVIDER = [{ url: 'http://127.0.0.1:9/' }];

test('New invoice in Chromium: the networks the payer may choose, by their plain names; ticked boxes are the options, none the default; every locale lays out', async (t) => {
  const app = await startBrowserApp({
    config: {
      evm: {
        networks: [
          { id: 'bsc-mainnet', providers: PROVIDER },
          { id: 'base-mainnet', providers: PROVIDER },
        ],
      },
    },
  });
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  const ids: Record<string, string> = {};
  for (const [label, address, networks] of [
    ['Tron', ADDRESSES[0], undefined],
    ['EVM', EVM, ['bsc-mainnet', 'base-mainnet']],
  ] as const) {
    const r = await owner.client.post('/wallets', { label, address, ...(networks ? { networks } : {}) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    ids[label] = r.body.wallet.id;
  }
  const browser = await openBrowser({ viewport: { width: 1280, height: 900 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  await context.addCookies([{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const form = page.locator('main form[data-api="/api/v1/invoices"]');

  await page.goto(`${app.baseUrl}/console/invoices/new?lang=en`);
  assert.deepEqual(await form.locator('fieldset label').allInnerTexts(), [
    'USDT · TRON (TRC20)',
    'USDT · BNB Smart Chain (BEP20)',
    'USDC · BNB Smart Chain (BEP20)',
    'USDC · Base',
  ]);
  // Several ticked: the payer's choice, in the order shown.
  await form.getByLabel('Order', { exact: true }).fill('order-choice');
  await form.getByLabel('Price', { exact: true }).fill('25');
  await form.getByLabel('Receiving wallet').selectOption(ids.EVM!);
  await form.getByLabel('USDT · TRON (TRC20)').check();
  await form.getByLabel('USDC · Base').check();
  await form.getByRole('button', { name: 'Create invoice' }).click();
  await page.waitForURL(/\/console\/invoices\/inv_/);
  const id = page.url().split('/').pop()!.split('?')[0]!;
  const made = (await owner.client.get(`/invoices/${id}`)).body.invoice;
  assert.deepEqual(
    made.options.map((o: any) => [o.network, o.token]),
    [
      ['tron-mainnet', 'USDT'],
      ['base-mainnet', 'USDC'],
    ],
  );
  assert.notEqual(made.options[0].payable_amount, undefined);

  // None ticked: the wallet's first network, USDT, one option.
  await page.goto(`${app.baseUrl}/console/invoices/new?lang=en`);
  await form.getByLabel('Receiving wallet').selectOption(ids.Tron!);
  await form.getByLabel('Order', { exact: true }).fill('order-plain');
  await form.getByLabel('Price', { exact: true }).fill('10');
  await form.getByRole('button', { name: 'Create invoice' }).click();
  await page.waitForURL(/\/console\/invoices\/inv_/);
  const plain = (await owner.client.get(`/invoices/${page.url().split('/').pop()!.split('?')[0]}`)).body.invoice;
  assert.deepEqual([plain.network, plain.token, plain.options.length], ['tron-mainnet', 'USDT', 1]);

  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of ['en', 'fa', 'ar', 'zh', 'ru', 'es', 'fr']) {
      const res = await page.goto(`${app.baseUrl}/console/invoices/new?lang=${lang}`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.getAttribute('html', 'dir'), lang === 'fa' || lang === 'ar' ? 'rtl' : 'ltr');
      for (const problem of await layoutProblems(page)) failures.push(`${lang} ${width}px: ${problem}`);
      const text = await page.locator('body').innerText();
      const keys = text.match(/\b(?:console|page)\.[a-z_]+\.[a-z_.]+/g);
      if (keys) failures.push(`${lang} ${width}px: untranslated ${keys.join(', ')}`);
      if (text.includes('undefined')) failures.push(`${lang} ${width}px: "undefined" shown`);
      if (lang !== 'en' && text.includes('Networks the payer may choose')) failures.push(`${lang}: English left`);
    }
  }
  assert.deepEqual(failures, []);
});
