/**
 * The console's Wallets page with Solana and TON enabled, in Chromium: a Solana owner and a TON
 * address (given as UQ…) added through the form; the Solana wallet shows its token account for each
 * token, the TON wallet its UQ form beside the raw one; a mint given as the address is refused at
 * the address field (the API saying why). en and fa at 1280 and 390 px: no overflow, no untranslated key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { associatedTokenAddress } from '../../src/chains/solana/address.js';
import { toFriendlyAddress } from '../../src/chains/ton/address.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { layoutProblems } from './showcase.js';

const OWNER = '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c';
const USDT_MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const TON_RAW = '0:237e5119ffa2a028cc4f95c9ca37566852f1dd4d3ea15704d6f791065507de4a';
const TON_UQ = toFriendlyAddress(TON_RAW, { bounceable: false });
const PROVIDER = [{ url: 'http://127.0.0.1:9/' }];

const squeeze = (s: string) => s.replace(/\s+/g, '');

test('Wallets in Chromium with Solana and TON: token accounts and the UQ form shown, a mint refused; en and fa at 1280 and 390 px', async (t) => {
  const app = await startBrowserApp({
    config: {
      solana: { networks: [{ id: 'solana-mainnet', providers: PROVIDER }] },
      ton: { networks: [{ id: 'ton-mainnet', providers: [{ url: 'http://127.0.0.1:9/', kind: 'toncenter' }] }] },
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

  await page.goto(`${app.baseUrl}/console/wallets?lang=en`);
  for (const [label, address] of [
    ['Phantom', OWNER],
    ['Tonkeeper', TON_UQ],
  ] as const) {
    await add.getByLabel('Label').fill(label);
    await add.getByLabel('Wallet address').fill(address);
    await add.getByRole('button', { name: 'Add a wallet' }).click();
    await main.locator('table').getByText(label).waitFor();
  }
  const sol = squeeze(await main.locator('tbody tr', { hasText: 'Phantom' }).innerText());
  for (const a of [OWNER, associatedTokenAddress(OWNER, USDT_MINT), associatedTokenAddress(OWNER, USDC_MINT)]) assert.ok(sol.includes(a), a);
  assert.ok(sol.includes(squeeze('USDC token account on Solana (SPL)')));
  const ton = squeeze(await main.locator('tbody tr', { hasText: 'Tonkeeper' }).innerText());
  assert.ok(ton.includes(TON_RAW) && ton.includes(TON_UQ), 'the raw form and the UQ form');

  // A mint as the address: refused, the address named at fault, nothing added.
  await add.getByLabel('Label').fill('Mint');
  await add.getByLabel('Wallet address').fill(USDT_MINT);
  await add.getByRole('button', { name: 'Add a wallet' }).click();
  await add.locator('[data-error]').waitFor({ state: 'visible' });
  // The page names the field with its hint in the page's language (the API's message is the English one).
  assert.match(await add.locator('[data-error]').innerText(), /Wallet address: .*On Solana give your wallet's address, not a token account/);
  const refused = await owner.client.post('/wallets', { label: 'Mint', address: USDT_MINT });
  assert.match(refused.body.error.message, /USDT mint of solana-mainnet, not a wallet/);
  assert.equal(await add.getByLabel('Wallet address').getAttribute('aria-invalid'), 'true');
  assert.equal((await owner.client.get('/wallets')).body.wallets.length, 2);

  const failures: string[] = [];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const lang of ['en', 'fa']) {
      const res = await page.goto(`${app.baseUrl}/console/wallets?lang=${lang}`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.getAttribute('html', 'dir'), lang === 'fa' ? 'rtl' : 'ltr');
      for (const problem of await layoutProblems(page)) failures.push(`${lang} ${width}px: ${problem}`);
      const text = await page.locator('body').innerText();
      const keys = text.match(/\b(?:console|page)\.[a-z_]+\.[a-z_.]+|undefined/g);
      if (keys) failures.push(`${lang} ${width}px: untranslated ${keys.join(', ')}`);
      await page.screenshot({ path: `/tmp/gatewayd-wallets-solana-ton-${lang}-${width}.png`, fullPage: true });
    }
  }
  assert.deepEqual(failures, []);
});
