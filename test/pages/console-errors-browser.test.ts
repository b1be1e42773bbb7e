import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { translate } from '../../src/lib/i18n.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { insertWallet, WALLET_ADDRESS } from './rows.js';

test('console errors in Chromium: every refusal says precisely what is wrong, in the page language, and marks the field at fault', async (t) => {
  const app = await startBrowserApp();
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  const walletId = await insertWallet(app.deps.db, owner.merchant.id, app.clock.now());
  const taken = await owner.client.post(
    '/invoices',
    { merchant_order_id: 'A-1', amount: '5', wallet_id: walletId },
    { headers: { 'idempotency-key': 'k-a1' } },
  );
  assert.equal(taken.status, 201);
  const browser = await openBrowser({ viewport: { width: 1280, height: 900 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  await context.addCookies([{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const sent: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST') sent.push(r.url());
  });
  const main = page.locator('main');
  const errorBox = main.locator('[data-error]:visible');
  const fa = (key: string) => translate('fa', key);

  // Webhook URLs the API refuses, in Persian: the reason itself, never "something went wrong".
  await page.goto(`${app.baseUrl}/console/webhooks?lang=fa`);
  const url = main.locator('#h-url');
  for (const [value, reason] of [
    ['http://shop.example/hook', 'scheme'],
    ['https://shop.example:8443/hook', 'port'],
    ['https://localhost/hook', 'localhost'],
    ['https://203.0.113.7/hook', 'ip_literal'],
  ] as const) {
    await url.fill(value);
    await main.locator('form[data-api="/api/v1/webhooks"] button[type="submit"]').click();
    await errorBox.filter({ hasText: fa(`page.error.webhook.${reason}`) }).waitFor();
    const text = await errorBox.innerText();
    assert.ok(text.includes(fa('page.error.invalid_webhook_url')), value);
    assert.ok(!text.includes(fa('page.error.generic')), `${value}: no generic message`);
    assert.equal(await url.getAttribute('aria-invalid'), 'true', `${value}: the URL field is marked`);
  }
  // Typing clears the mark.
  await url.fill('https://shop.example/hook2');
  assert.equal(await url.getAttribute('aria-invalid'), null);

  // New invoice, in English.
  await page.goto(`${app.baseUrl}/console/invoices/new?lang=en`);
  const amount = main.getByLabel('Price', { exact: true });
  const order = main.getByLabel('Order');
  // Above the API's maximum: the form itself refuses it (nothing is sent) and says the limits.
  await order.fill('B-1');
  for (const bad of ['1000000001', '1000000000.5', '0', '0.000000', '12.1234567']) {
    const before = sent.length;
    await amount.fill(bad);
    await main.getByRole('button', { name: 'Create invoice' }).click();
    assert.equal(sent.length, before, `${bad} is refused before sending`);
    assert.match(
      await amount.evaluate((el) => (el as unknown as { validationMessage: string }).validationMessage),
      /^Price: In the currency above: USDT from 0\.000001 to 1000000000/,
      bad,
    );
  }
  // A duplicate order id: the API's 409, said plainly, the order field marked.
  await amount.fill('7');
  await order.fill('A-1');
  await main.getByRole('button', { name: 'Create invoice' }).click();
  await errorBox.filter({ hasText: 'already used by another invoice' }).waitFor();
  assert.equal(await order.getAttribute('aria-invalid'), 'true');
  assert.equal(await amount.getAttribute('aria-invalid'), null);
  // Pasted values with spaces around them are trimmed, then accepted.
  await order.fill('  B-2  ');
  await amount.fill('  1000000000.000000 ');
  await main.getByRole('button', { name: 'Create invoice' }).click();
  await page.waitForURL(/\/console\/invoices\/inv_/);
  assert.equal(
    await main
      .locator('h1')
      .innerText()
      .then((s) => s.split(' ')[0]),
    'B-2',
  );

  // A pattern-valid address with a bad checksum: the API's detail names the field, shown with its rule.
  await page.goto(`${app.baseUrl}/console/wallets?lang=zh`);
  await main.locator('#w-label').fill('Second');
  const address = main.locator('#w-address');
  await address.fill(' TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8 ');
  await main.locator('form[data-api="/api/v1/wallets"] button[type="submit"]').click();
  await errorBox.waitFor();
  const text = await errorBox.innerText();
  assert.ok(text.includes(translate('zh', 'page.error.validation_error')), text);
  assert.ok(text.includes(`${translate('zh', 'console.wallets.address')}: ${translate('zh', 'console.wallets.address_hint')}`), text);
  assert.doesNotMatch(text, /\(address\)/);
  // The field is named once even when the API found two faults in it.
  assert.equal(text.split(translate('zh', 'console.wallets.address')).length - 1, 1, text);
  assert.equal(await address.getAttribute('aria-invalid'), 'true');
  assert.equal(await address.inputValue(), 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8', 'trimmed');

  // An address this merchant already has: the API answers 200 with that wallet; the form says so, by its label, and keeps what was typed.
  await page.goto(`${app.baseUrl}/console/wallets?lang=en`);
  await main.locator('#w-label').fill('Again');
  await main.locator('#w-address').fill(WALLET_ADDRESS);
  await main.locator('form[data-api="/api/v1/wallets"] button[type="submit"]').click();
  await errorBox.waitFor();
  assert.equal(await errorBox.innerText(), 'This address is already registered as “Main wallet”. Nothing was changed.');
  assert.equal(await main.locator('#w-address').inputValue(), WALLET_ADDRESS);
  assert.deepEqual(
    browser.errors.filter((e) => !/^(400|409) /.test(e) && !/status of 40[09]/.test(e)),
    [],
  );
});
