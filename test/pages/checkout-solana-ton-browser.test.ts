/**
 * The checkout of an invoice payable on TRON, Solana (USDT and USDC) and TON, on the real server
 * with those mainnets enabled: the picker names them plainly; each option's QR code holds its
 * payment link (Solana Pay with the option's reference and the shop's name; a TON transfer link with
 * the option's comment); Solana says what a payer pays to create a missing token account; TON shows
 * the address as wallets expect it (UQ…) and the comment, saying the exact amount is what counts.
 * Chromium, en and fa at 1280 and 390 px, no overflow. "I already paid" takes TRON ids and EVM hashes
 * only: it is not offered while a Solana or TON option is shown, and the API refuses a claim naming
 * those networks with 400 rather than reading a TON hash as a TRON id.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import QRCode from 'qrcode';
import type { Page } from 'playwright-core';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';
import { NETWORKS } from '../../src/chains/networks.js';
import { optionReference } from '../../src/chains/payment-reference.js';
import { toFriendlyAddress } from '../../src/chains/ton/address.js';
import type { TestApp } from '../helpers/app.js';

const shots = join(tmpdir(), 'gatewayd-checkout-solana-ton');
mkdirSync(shots, { recursive: true });

const OWNER = '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c';
const TON_RAW = '0:237e5119ffa2a028cc4f95c9ca37566852f1dd4d3ea15704d6f791065507de4a';
const TON_UQ = toFriendlyAddress(TON_RAW, { bounceable: false });
const NAMES = ['USDT · TRON (TRC20)', 'USDT · Solana (SPL)', 'USDC · Solana (SPL)', 'USDT · TON'];
const SHOP_NAME = 'Café Ünïcode & Co';

const modulesOf = async (text: string) =>
  /<path stroke="#000000" d="([^"]+)"/.exec(await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }))![1];

const unescape = (html: string) =>
  html
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');

function panels(html: string): Array<{ index: number; hidden: boolean; html: string }> {
  const re = /<div class="option" id="option-(\d+)" data-option="\d+" data-network="[a-z-]+" data-claim="[01]"( hidden)?>/g;
  const starts = [...html.matchAll(re)];
  return starts.map((m, i) => ({
    index: Number(m[1]),
    hidden: m[2] !== undefined,
    html: html.slice(m.index!, i + 1 < starts.length ? starts[i + 1]!.index : html.indexOf('<details class="claim"')),
  }));
}

async function start(): Promise<TestApp> {
  return startBrowserApp({
    config: {
      rate_limits: { invoices_per_merchant: 0 },
      solana: { networks: [{ id: 'solana-mainnet', providers: [{ url: 'http://127.0.0.1:9/' }] }] },
      ton: { networks: [{ id: 'ton-mainnet', providers: [{ url: 'http://127.0.0.1:9/', kind: 'toncenter' }] }] },
    },
  });
}

async function fourOptionInvoice(app: TestApp) {
  const s = await shop(app, ADDRESSES[0]);
  assert.equal((await s.client.patch('/me', { name: SHOP_NAME })).status, 200);
  for (const [label, address] of [
    ['Phantom', OWNER],
    ['Tonkeeper', TON_UQ],
  ]) {
    const res = await s.client.post('/wallets', { label, address });
    assert.equal(res.status, 201, res.text);
  }
  const res = await createInvoice(s.client, {
    amount: '25',
    wallet_id: s.walletId,
    options: [
      { network: 'tron-mainnet', token: 'USDT' },
      { network: 'solana-mainnet', token: 'USDT' },
      { network: 'solana-mainnet', token: 'USDC' },
      { network: 'ton-mainnet', token: 'USDT' },
    ],
  });
  assert.equal(res.status, 201, res.text);
  const inv = res.body.invoice;
  return { s, inv, token: inv.checkout_url.split('/pay/')[1] as string };
}

test('invoice options on Solana and TON: Solana Pay and TON links with the option reference; the checkout shows rent, the UQ form and the comment', async (t) => {
  const app = await start();
  t.after(() => app.close());
  const { inv, token } = await fourOptionInvoice(app);
  const [, solUsdt, solUsdc, ton] = inv.options;
  const mint = (symbol: string) => NETWORKS['solana-mainnet'].tokens.find((x) => x.symbol === symbol)!.contract;
  // The merchant's view: the links with their references (the shop's name only where the payer sees it).
  assert.equal(solUsdt.address, OWNER);
  assert.equal(
    solUsdt.payment_uri,
    `solana:${OWNER}?amount=${solUsdt.payable_amount}&spl-token=${mint('USDT')}&reference=${optionReference(NETWORKS['solana-mainnet'], inv.id, 1)}`,
  );
  assert.match(solUsdc.payment_uri, new RegExp(`spl-token=${mint('USDC')}&reference=${optionReference(NETWORKS['solana-mainnet'], inv.id, 2)}$`));
  assert.equal(ton.address, TON_RAW);
  const raw = ton.payable_amount.replace('.', '').replace(/^0+/, '');
  assert.equal(
    ton.payment_uri,
    `ton://transfer/${TON_UQ}?jetton=EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs&amount=${raw}&text=${encodeURIComponent(`${inv.id}/3`)}`,
  );

  const res = await fetch(`${app.baseUrl}/pay/${token}`);
  assert.equal(res.status, 200);
  const html = await res.text();
  for (const name of NAMES) assert.ok(html.includes(`>${name}</a>`), `the picker offers ${name}`);
  const view = (await (await fetch(`${app.baseUrl}/api/v1/checkout/${token}`)).json()) as { invoice?: any; options?: any };
  const options = (view.invoice ?? view).options;
  const shown = panels(html);
  for (const p of shown.slice(1)) {
    const o = options[p.index];
    assert.equal(unescape(/<figure class="qr" data-text="([^"]+)"/.exec(p.html)![1]!), o.payment_uri, `option ${p.index}: the QR code text`);
    assert.equal(/<path stroke="#000000" d="([^"]+)"/.exec(p.html)![1], await modulesOf(o.payment_uri), `option ${p.index}: the QR code`);
    assert.equal(unescape(/<a class="button wallet-link" href="([^"]+)"/.exec(p.html)![1]!), o.payment_uri, `option ${p.index}: the wallet link`);
    assert.ok(!p.html.includes('TRX'), `option ${p.index}: no TRX fee warning`);
  }
  // The payer's Solana Pay link names the shop.
  assert.ok(options[1].payment_uri.endsWith(`&label=${encodeURIComponent(SHOP_NAME)}`), options[1].payment_uri);
  assert.ok(options[1].payment_uri.startsWith(solUsdt.payment_uri));
  for (const p of [shown[1]!, shown[2]!]) {
    assert.ok(p.html.includes('you pay its rent once: 0.00203928 SOL'), 'the rent of a missing token account');
    assert.ok(p.html.includes('Your wallet needs some SOL for the network fee'));
    assert.ok(p.html.includes(`data-copy="${OWNER}"`), 'the owner address to copy');
  }
  const tonPanel = shown[3]!.html;
  assert.ok(tonPanel.includes(`data-copy="${TON_UQ}"`), 'the UQ form to copy');
  assert.ok(!tonPanel.includes(`data-copy="${TON_RAW}"`));
  assert.ok(tonPanel.includes(`data-copy="${inv.id}/3"`), 'the comment to copy');
  assert.ok(tonPanel.includes('but the exact amount is what counts'));
  assert.ok(tonPanel.includes('Your wallet needs some TON for the network fee'));
  assert.ok(
    tonPanel
      .replace(/<[^>]+>/g, '')
      .replace(/\s/g, '')
      .includes('EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs'),
    'the jetton master as explorers print it',
  );
  assert.ok(shown[0]!.html.includes('TRX'), 'the TRON option keeps its fee warning');
  assert.doesNotMatch(html, /undefined|page\.checkout\./);
});

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

test('Solana and TON options in Chromium, en and fa at 1280 and 390 px: chosen in place, no overflow, the comment copied', async (t) => {
  const app = await start();
  t.after(() => app.close());
  const { inv, token } = await fourOptionInvoice(app);
  for (const locale of ['en', 'fa']) {
    for (const width of [1280, 390]) {
      const browser = await openBrowser({ locale, viewport: { width, height: 900 } });
      try {
        const { page } = browser;
        await page.goto(`${app.baseUrl}/pay/${token}?lang=${locale}`);
        for (const index of [1, 3]) {
          await page.locator(`#picker a[data-option="${index}"]`).click();
          await page.locator(`#option-${index}`).waitFor({ state: 'visible' });
          assert.equal(await page.locator('#picker a[aria-current="true"]').innerText(), NAMES[index]);
          await looksRight(page, `${locale}-${width}-${index === 1 ? 'solana' : 'ton'}`);
        }
        assert.equal(await page.locator('#comment-3').innerText(), `${inv.id}/3`);
        assert.ok(await page.locator('#claim').isHidden(), 'no "I already paid" on the TON option');
        await page.locator('#picker a[data-option="0"]').click();
        await page.locator('#option-0').waitFor({ state: 'visible' });
        assert.ok(await page.locator('#claim').isVisible(), '"I already paid" back on the TRON option');
        await page.locator('#picker a[data-option="1"]').click();
        await page.locator('#option-1').waitFor({ state: 'visible' });
        assert.ok(await page.locator('#claim').isHidden(), 'no "I already paid" on the Solana option');
        await page.goto(`${app.baseUrl}/pay/${token}?lang=${locale}&option=3`);
        await page.locator('#option-3').waitFor({ state: 'visible' });
        assert.ok(await page.locator('#claim').isHidden(), 'no "I already paid" when the page opens on the TON option');
        await looksRight(page, `${locale}-${width}-ton-opened`);
        assert.ok(await page.locator('#option-3 .ton-comment button.copy').isVisible(), 'the comment has its copy button');
        assert.deepEqual(browser.errors, [], 'no console errors (CSP violations included)');
      } finally {
        await browser.close();
      }
    }
  }
});

test('"I already paid" on Solana and TON: not offered on their panels; the API refuses their claims with 400, never a TRON lookup', async (t) => {
  const app = await start();
  t.after(() => app.close());
  const { token } = await fourOptionInvoice(app);
  const html = await (await fetch(`${app.baseUrl}/pay/${token}`)).text();
  assert.deepEqual(
    [...html.matchAll(/<div class="option" id="option-(\d+)" data-option="\d+" data-network="([a-z-]+)" data-claim="([01])"/g)].map(
      (m) => `${m[1]} ${m[2]} ${m[3]}`,
    ),
    ['0 tron-mainnet 1', '1 solana-mainnet 0', '2 solana-mainnet 0', '3 ton-mainnet 0'],
  );
  const claim = async (body: Record<string, unknown>) => {
    const res = await fetch(`${app.baseUrl}/api/v1/checkout/${token}/transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  // A TON transaction hash is 64 hex digits, as a TRON id is: named as TON, it is refused, not looked up on TRON.
  const ton = await claim({ tx_hash: 'ab'.repeat(32), network: 'ton-mainnet' });
  assert.equal(ton.status, 400, JSON.stringify(ton.body));
  assert.equal(ton.body.error.code, 'validation_error');
  assert.equal(ton.body.error.details[0].path, 'network');
  assert.match(ton.body.error.message, /TON takes no transaction id here: its watcher sees it by itself/);
  const sig = '5'.repeat(87);
  const solana = await claim({ tx_hash: sig, network: 'solana-mainnet' });
  assert.equal(solana.status, 400, JSON.stringify(solana.body));
  assert.match(solana.body.error.message, /Solana \(SPL\) takes no transaction id here/);
  // A Solana signature without a network: 400 naming the forms taken, and that Solana and TON take none.
  const bare = await claim({ tx_hash: sig });
  assert.equal(bare.status, 400, JSON.stringify(bare.body));
  assert.equal(bare.body.error.details[0].path, 'tx_hash');
  assert.match(bare.body.error.message, /64 hexadecimal characters on TRON; a payment on Solana \(SPL\), TON takes none, it is seen automatically/);
  const other = await claim({ tx_hash: 'ab'.repeat(32), network: 'bsc-mainnet' });
  assert.equal(other.status, 400, JSON.stringify(other.body));
  assert.match(other.body.error.message, /not payable on bsc-mainnet/);
  // Named as TRON, the id goes on to the TRON lookup (no provider answers here: not a 400, never a 500).
  const tron = await claim({ tx_hash: 'ab'.repeat(32), network: 'tron-mainnet' });
  assert.ok((tron.status !== 400 && tron.status < 500) || tron.status === 503, `${tron.status} ${JSON.stringify(tron.body)}`);
});
