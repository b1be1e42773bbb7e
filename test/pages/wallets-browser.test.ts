import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { ADDRESSES } from '../helpers/shop.js';
import { layoutProblems } from './showcase.js';

const EVM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const PROVIDER = [{ url: 'http://127.0.0.1:9/' }];

test('Wallets in Chromium: an EVM address with its networks ticked (all at first), the networks by their plain names, changed later; every locale lays out at 1280 and 390 px, fa right to left', async (t) => {
  const app = await startBrowserApp({
    config: {
      evm: {
        networks: [
          { id: 'bsc-mainnet', providers: PROVIDER },
          { id: 'ethereum-mainnet', providers: PROVIDER },
          { id: 'polygon-mainnet', providers: PROVIDER },
        ],
      },
    },
  });
  t.after(() => app.close());
  const owner = await signedInMerchant(app);
  const browser = await openBrowser({ viewport: { width: 1280, height: 900 } });
  t.after(() => browser.close());
  const { page, context } = browser;
  await context.addCookies([{ name: SESSION_COOKIE, value: owner.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
  const main = page.locator('main');
  const add = main.locator('form[data-api="/api/v1/wallets"]');
  const boxes = add.locator('input[name="networks"]');

  await page.goto(`${app.baseUrl}/console/wallets?lang=en`);
  // A TRON address: no networks to choose, its TRON network is the one.
  await add.getByLabel('Label').fill('Tron wallet');
  await add.getByLabel('TRON or EVM address').fill(ADDRESSES[0]);
  assert.equal(await add.locator('fieldset').isVisible(), false);
  await add.getByRole('button', { name: 'Add a wallet' }).click();
  await main.locator('table').getByText('Tron wallet').waitFor();
  assert.equal(await main.locator('tbody tr', { hasText: 'Tron wallet' }).locator('ul.networks').innerText(), 'TRON');

  // An EVM address in lower case: every enabled EVM network ticked; the merchant leaves Polygon out.
  await add.getByLabel('Label').fill('Shop EVM');
  await add.getByLabel('TRON or EVM address').fill(EVM.toLowerCase());
  await add.locator('fieldset').waitFor({ state: 'visible' });
  assert.deepEqual(
    await boxes.evaluateAll((els) => els.map((e) => [(e as unknown as { value: string }).value, (e as unknown as { checked: boolean }).checked])),
    [
      ['bsc-mainnet', true],
      ['ethereum-mainnet', true],
      ['polygon-mainnet', true],
    ],
  );
  await add.getByLabel('Polygon PoS').uncheck();
  await add.getByRole('button', { name: 'Add a wallet' }).click();
  const row = main.locator('tbody tr', { hasText: 'Shop EVM' });
  await row.waitFor();
  assert.deepEqual(await row.locator('ul.networks li').allInnerTexts(), ['BNB Smart Chain (BEP20)', 'Ethereum (ERC20)']);
  const stored = (await owner.client.get('/wallets')).body.wallets.find((w: any) => w.label === 'Shop EVM');
  assert.deepEqual([stored.address, stored.networks], [EVM, ['bsc-mainnet', 'ethereum-mainnet']]);

  // A TRON wallet has no networks to change; the EVM one does: Polygon in, BSC out.
  assert.equal(await main.locator('tbody tr', { hasText: 'Tron wallet' }).locator('details.wallet-networks').count(), 0);
  await row.getByText('Change networks').click();
  const edit = row.locator('details.wallet-networks form');
  await edit.getByLabel('Polygon PoS').check();
  await edit.getByLabel('BNB Smart Chain (BEP20)').uncheck();
  await edit.getByRole('button', { name: 'Save networks' }).click();
  await main.locator('tbody tr', { hasText: 'Shop EVM' }).locator('ul.networks li', { hasText: 'Polygon PoS' }).waitFor();
  assert.deepEqual(await main.locator('tbody tr', { hasText: 'Shop EVM' }).locator('ul.networks li').allInnerTexts(), ['Ethereum (ERC20)', 'Polygon PoS']);
  assert.deepEqual((await owner.client.get('/wallets')).body.wallets.find((w: any) => w.label === 'Shop EVM').networks, [
    'ethereum-mainnet',
    'polygon-mainnet',
  ]);

  // None ticked: refused, and the page says which field (the networks) and why.
  await main.locator('tbody tr', { hasText: 'Shop EVM' }).getByText('Change networks').click();
  const again = main.locator('tbody tr', { hasText: 'Shop EVM' }).locator('details.wallet-networks form');
  for (const label of ['Ethereum (ERC20)', 'Polygon PoS']) await again.getByLabel(label).uncheck();
  await again.getByRole('button', { name: 'Save networks' }).click();
  const error = again.locator('[data-error]');
  await error.waitFor({ state: 'visible' });
  assert.match(await error.innerText(), /Networks: The networks this address receives payments on; tick at least one/);

  // A mistyped checksum: the address is named at fault.
  await page.goto(`${app.baseUrl}/console/wallets?lang=en`);
  await add.getByLabel('Label').fill('Typo');
  await add.getByLabel('TRON or EVM address').fill(`${EVM.slice(0, -1)}D`);
  await add.getByRole('button', { name: 'Add a wallet' }).click();
  await add.locator('[data-error]').waitFor({ state: 'visible' });
  assert.equal(await add.getByLabel('TRON or EVM address').getAttribute('aria-invalid'), 'true');
  assert.equal((await owner.client.get('/wallets')).body.wallets.length, 2);
  // The two refusals above are the only failed requests.
  assert.deepEqual(
    browser.errors.filter((e) => !/^400 .*\/api\/v1\/wallets/.test(e) && !/status of 400/.test(e)),
    [],
  );

  // Every locale at both widths, the networks form open: no overflow, no untranslated key; fa and ar right to left.
  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of ['en', 'fa', 'ar', 'zh', 'ru', 'es', 'fr']) {
      const res = await page.goto(`${app.baseUrl}/console/wallets?lang=${lang}`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.getAttribute('html', 'dir'), lang === 'fa' || lang === 'ar' ? 'rtl' : 'ltr');
      await add.locator('input[name="address"]').fill(EVM);
      await add.locator('fieldset').waitFor({ state: 'visible' });
      await page.evaluate(`document.querySelectorAll('details.wallet-networks').forEach((d) => { d.open = true; })`);
      for (const problem of await layoutProblems(page)) failures.push(`${lang} ${width}px: ${problem}`);
      const text = await page.locator('body').innerText();
      const keys = text.match(/\b(?:console|page)\.[a-z_]+\.[a-z_.]+/g);
      if (keys) failures.push(`${lang} ${width}px: untranslated ${keys.join(', ')}`);
      if (lang !== 'en') {
        const english = ['Networks', 'Change networks', 'Save networks', 'TRON or EVM address'].filter((s) => text.includes(s));
        if (english.length > 0) failures.push(`${lang}: English left: ${english.join(', ')}`);
      }
    }
  }
  assert.deepEqual(failures, []);
});
