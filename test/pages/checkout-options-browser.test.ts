/**
 * The checkout of an invoice with several options (TRON USDT, BNB Smart Chain USDT, Ethereum USDC),
 * on the real server with those mainnets enabled beside TRON's: each option's panel with its own
 * exact amount, address, QR code of its payment link and wallet link, the picker choosing with
 * `?option=` (no JavaScript) and in place (Chromium, en and fa at 1280 and 390 px), the warnings
 * naming the chosen network and token, and, once paid through one option, that option alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import QRCode from 'qrcode';
import type { Page } from 'playwright-core';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { applyPayment, EVM_ADDRESSES, multichainConfig, multichainShop } from '../helpers/multichain.js';
import { ADDRESSES, createInvoice } from '../helpers/shop.js';
import { groupDigits } from '../../src/pages/checkout.pages.js';
import type { TestApp } from '../helpers/app.js';

const shots = join(tmpdir(), 'gatewayd-checkout-options');
mkdirSync(shots, { recursive: true });

const NAMES = ['USDT · TRON (TRC20)', 'USDT · BNB Smart Chain (BEP20)', 'USDC · Ethereum (ERC20)'];

/** The dark modules of the QR code of `text`, as the page's qrcode package draws them. */
const modulesOf = async (text: string) =>
  /<path stroke="#000000" d="([^"]+)"/.exec(await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }))![1];

const unescape = (html: string) =>
  html
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');

/** Each option panel of a checkout page: its index, whether hidden, and its markup. */
function panels(html: string): Array<{ index: number; hidden: boolean; html: string }> {
  const re = /<div class="option" id="option-(\d+)" data-option="\d+"[^>]*?( hidden)?>/g;
  const starts = [...html.matchAll(re)];
  return starts.map((m, i) => ({
    index: Number(m[1]),
    hidden: m[2] !== undefined,
    html: html.slice(m.index!, i + 1 < starts.length ? starts[i + 1]!.index : html.indexOf('<details class="claim"')),
  }));
}

async function start(): Promise<TestApp> {
  const { server: _server, ...config } = multichainConfig();
  return startBrowserApp({ config });
}

/** A merchant with a TRON and an EVM wallet, its QR codes carrying links, and an invoice on three options. */
async function threeOptionInvoice(app: TestApp) {
  const s = await multichainShop(app, ADDRESSES[0], EVM_ADDRESSES[0]);
  assert.equal((await s.client.patch('/me', { checkout_qr: 'tron_uri' })).status, 200);
  // Earlier invoices on BSC and Ethereum, so each option's amount is its own.
  for (const options of [
    [{ network: 'bsc-mainnet', token: 'USDT' }],
    [{ network: 'ethereum-mainnet', token: 'USDC' }],
    [{ network: 'ethereum-mainnet', token: 'USDC' }],
  ]) {
    assert.equal((await createInvoice(s.client, { amount: '25', wallet_id: s.evmWalletId, options })).status, 201);
  }
  const res = await createInvoice(s.client, {
    amount: '25',
    wallet_id: s.walletId,
    options: [
      { network: 'tron-mainnet', token: 'USDT' },
      { network: 'bsc-mainnet', token: 'USDT' },
      { network: 'ethereum-mainnet', token: 'USDC' },
    ],
  });
  assert.equal(res.status, 201, res.text);
  const inv = res.body.invoice;
  return { s, inv, token: inv.checkout_url.split('/pay/')[1] as string };
}

test('checkout HTML: every option its own amount, QR code of its payment_uri and wallet link; ?option= chooses; once paid, the paying option alone', async (t) => {
  const app = await start();
  t.after(() => app.close());
  const { s, inv, token } = await threeOptionInvoice(app);
  assert.equal(inv.options.length, 3);
  assert.equal(new Set(inv.options.map((o: { payable_amount: string }) => o.payable_amount)).size, 3, 'each option its own amount');
  const page = async (query = '') => {
    const res = await fetch(`${app.baseUrl}/pay/${token}${query}`);
    const text = await res.text();
    assert.equal(
      res.status,
      200,
      app
        .logText()
        .split('\n')
        .filter((l) => l.includes('rror'))
        .join('\n')
        .slice(-3000),
    );
    return text;
  };

  const html = await page();
  for (const name of NAMES) assert.ok(html.includes(`>${name}</a>`), `the picker offers ${name}`);
  const shown = panels(html);
  assert.deepEqual(
    shown.map((p) => [p.index, p.hidden]),
    [
      [0, false],
      [1, true],
      [2, true],
    ],
    'option 0 is shown first',
  );
  for (const p of shown) {
    const o = inv.options[p.index];
    assert.ok(p.html.includes(`<bdi dir="ltr">${groupDigits(o.payable_amount)}</bdi> <span class="unit">${o.token}</span>`), `option ${p.index}: its amount`);
    assert.ok(p.html.includes(`data-copy="${o.payable_amount}"`), `option ${p.index}: the plain amount to copy`);
    assert.ok(p.html.includes(`data-copy="${o.address}"`), `option ${p.index}: its address`);
    const path = /<path stroke="#000000" d="([^"]+)"/.exec(p.html)![1];
    assert.equal(path, await modulesOf(o.payment_uri), `option ${p.index}: the QR code holds its payment_uri`);
    assert.equal(unescape(/<figure class="qr" data-text="([^"]+)"/.exec(p.html)![1]!), o.payment_uri);
  }
  // EVM: EIP-681 with the token, the chain id, the address and the raw amount (18 decimals on BSC).
  const bsc = inv.options[1];
  assert.equal(bsc.payment_uri, `ethereum:${bsc.token_contract}@56/transfer?address=${bsc.address}&uint256=${bsc.payable_amount.replace('.', '')}000000000000`);
  assert.equal(unescape(/<a class="button wallet-link" href="([^"]+)"/.exec(shown[1]!.html)![1]!), bsc.payment_uri);
  assert.equal(unescape(/<a class="button wallet-link" href="([^"]+)"/.exec(shown[2]!.html)![1]!), inv.options[2].payment_uri);
  assert.ok(shown[1]!.html.includes('Send only USDT on BNB Smart Chain (BEP20) to this address; another network or token is not seen as this payment.'));
  assert.ok(shown[2]!.html.includes('Send only USDC on Ethereum (ERC20) to this address'));
  assert.ok(shown[0]!.html.includes('Send only USDT on TRON (TRC20) to this address'));
  assert.match(
    shown[2]!.html,
    /Price <bdi dir="ltr" class="num">25\.000000<\/bdi> USDC \+ identification adjustment <bdi dir="ltr" class="num">0\.00000\d<\/bdi> USDC/,
  );
  assert.ok(!shown[1]!.html.includes('TRX'), 'no TRX fee warning on BSC');
  assert.doesNotMatch(html, /undefined|page\.checkout\./);

  // Without JavaScript the picker's links choose on the server; an unknown choice shows option 0.
  const second = panels(await page('?option=1'));
  assert.deepEqual(
    second.map((p) => p.hidden),
    [true, false, true],
  );
  assert.match(await page('?option=1'), /<a href="\?option=1" data-option="1" aria-current="true">/);
  assert.deepEqual(
    panels(await page('?option=9')).map((p) => p.hidden),
    [false, true, true],
  );

  // Paid on BSC (18 decimals): the page names that option only, its amount in six decimals.
  const paid = await applyPayment(app, { network: 'bsc-mainnet', token: 'USDT', to: s.evmAddress, amount: bsc.payable_amount });
  assert.equal(paid.kind, 'confirmed');
  const after = await page('?option=0');
  assert.ok(!after.includes('id="picker"'), 'no picker once paid');
  const left = panels(after);
  assert.deepEqual(
    left.map((p) => p.index),
    [1],
  );
  assert.ok(left[0]!.html.includes('<dd>BNB Smart Chain (BEP20)</dd>'));
  assert.ok(left[0]!.html.includes(`data-copy="${bsc.payable_amount}"`) || left[0]!.html.includes(bsc.address));
});

/** No horizontal overflow, nothing clipped in the shown panel, no untranslated key; a screenshot. */
async function looksRight(page: Page, name: string): Promise<void> {
  const state = await page.evaluate(() => {
    const d = (globalThis as unknown as { document: any }).document;
    const clipped: string[] = [];
    for (const el of d.querySelectorAll('.option:not([hidden]) *, .picker *')) {
      if (el.scrollWidth > el.clientWidth + 1 && (globalThis as any).getComputedStyle(el).overflowX === 'hidden') clipped.push(el.className || el.tagName);
    }
    return { scroll: d.documentElement.scrollWidth, width: d.documentElement.clientWidth, text: d.body.innerText, clipped };
  });
  assert.ok(state.scroll <= state.width, `${name}: no horizontal overflow (${state.scroll} > ${state.width})`);
  assert.deepEqual(state.clipped, [], `${name}: nothing clipped`);
  assert.doesNotMatch(state.text, /undefined|\bpage\.[a-z_]+\.[a-z_]+/, name);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

test('checkout picker in Chromium, en and fa at 1280 and 390 px: switching shows the chosen option in place, with JavaScript and without', async (t) => {
  const app = await start();
  t.after(() => app.close());
  const { inv, token } = await threeOptionInvoice(app);
  for (const locale of ['en', 'fa']) {
    for (const width of [1280, 390]) {
      const browser = await openBrowser({ locale, viewport: { width, height: 900 } });
      try {
        const { page } = browser;
        await page.goto(`${app.baseUrl}/pay/${token}?lang=${locale}`);
        assert.equal((await page.getAttribute('html', 'dir')) === 'rtl', locale === 'fa');
        assert.ok(await page.locator('#option-0').isVisible());
        assert.ok(!(await page.locator('#option-2').isVisible()));
        await looksRight(page, `pick-${locale}-${width}-first`);
        await page.locator('#picker a[data-option="2"]').click();
        await page.locator('#option-2').waitFor({ state: 'visible' });
        assert.ok(!(await page.locator('#option-0').isVisible()), 'the first option is hidden');
        assert.equal(await page.locator('#picker a[aria-current="true"]').innerText(), NAMES[2]);
        assert.match(page.url(), /option=2/, 'the choice survives a reload');
        assert.equal(await page.locator('#option-2 .qr svg path[stroke]').getAttribute('d'), await modulesOf(inv.options[2].payment_uri));
        assert.equal(await page.locator('#option-2 a.wallet-link').getAttribute('href'), inv.options[2].payment_uri);
        assert.equal(await page.locator('#amount-2').innerText(), `${groupDigits(inv.options[2].payable_amount)} USDC`);
        await looksRight(page, `pick-${locale}-${width}-ethereum`);
        assert.deepEqual(browser.errors, [], 'no console errors (CSP violations included)');
      } finally {
        await browser.close();
      }
    }
  }
  const plain = await openBrowser({ javaScript: false });
  t.after(() => plain.close());
  await plain.page.goto(`${app.baseUrl}/pay/${token}`);
  await plain.page.locator('#picker a[data-option="1"]').click();
  await plain.page.waitForURL(/option=1/);
  assert.ok(await plain.page.locator('#option-1').isVisible());
  assert.ok(!(await plain.page.locator('#option-0').isVisible()));
  assert.equal(await plain.page.locator('#amount-1').innerText(), `${groupDigits(inv.options[1].payable_amount)} USDT`);
});
