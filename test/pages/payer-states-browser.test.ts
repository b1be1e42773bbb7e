/**
 * The payer's page says one true thing in every state (issue 43): the amount to send while nothing
 * arrived (with the fiat sum step by step), what arrived and that nothing more is to be sent after a
 * partial payment, that a payment of another amount arrived (without whose), and one message for each
 * answer of "I already paid". In Chromium at 390 px, in English and Persian.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { insertTransfer } from '../../src/chain/chain.repo.js';
import { createChainRuntime } from '../../src/chain/chain.worker.js';
import { writeTransaction } from '../../src/db/database.js';
import { FAKE_USDT_CONTRACTS } from '../../src/devnet/tron-node.js';
import { micros } from '../../src/lib/amounts.js';
import { MINUTE } from '../../src/lib/clock.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { insertInvoice, insertWallet, WALLET_ADDRESS } from './rows.js';
import { layoutProblems } from './showcase.js';

const PAYER = 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb';
const SHORT_TX = 'd4'.repeat(32);
const PARTIAL_TX = 'c3'.repeat(32);
const OTHER_TX = 'e5'.repeat(32);

test('the payer page in each state, and each "I already paid" answer, in Chromium at 390 px (en, fa)', async (t) => {
  let clockNow = () => Date.UTC(2026, 4, 12, 9, 30);
  const tg = await startTronGrid({ now: () => clockNow() });
  t.after(() => tg.close());
  const app = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30), config: { tron: { api_url: tg.url } } });
  t.after(() => app.close());
  clockNow = () => app.clock.now();
  app.deps.chain = createChainRuntime(app.config, { maxRequestsPerSecond: 0, timeoutMs: 2000 });
  const { merchant } = await signedInMerchant(app, { name: 'Blue Lantern Books' });
  const now = app.clock.now();
  const walletId = await insertWallet(app.deps.db, merchant.id, now - 3_600_000);
  const row = (o: Partial<Parameters<typeof insertInvoice>[1]>) =>
    insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now, expiresInMinutes: 60, ...o });
  // 24.000001 of 25.000001 related to its invoice (a tolerance), 19.5 of 20.000001 unmatched (no tolerance), another invoice paid.
  const partial = await row({ now: now - 600_000, base: 25_000_000n, adjustment: 1n, orderId: 'order-partial' });
  const short = await row({ now: now - 500_000, base: 20_000_000n, adjustment: 1n, orderId: 'order-short' });
  const other = await row({ now: now - 400_000, base: 7_000_000n, adjustment: 3n, orderId: 'order-other', status: 'confirmed', txHash: OTHER_TX });
  await writeTransaction(app.deps.db, async (trx) => {
    const base = { from: PAYER, to: WALLET_ADDRESS, blockNumber: 69_316_570, tokenContract: app.deps.config.network.usdtContract };
    const put = (txHash: string, amount: bigint, kind: 'unmatched' | 'confirmed', invoiceId: string | null, at: number) =>
      insertTransfer(trx, app.deps.config.network, { ...base, txHash, logIndex: 0, amount: micros(amount), blockTimestamp: at }, kind, invoiceId, now);
    await put(PARTIAL_TX, 24_000_001n, 'unmatched', partial.id, now - 300_000);
    await put(SHORT_TX, 19_500_000n, 'unmatched', null, now - 200_000);
    await put(OTHER_TX, 7_000_003n, 'confirmed', other.id, now - 100_000);
    await trx.updateTable('invoices').set({ amount_received: 24_000_001 }).where('id', '=', partial.id).execute();
    await trx
      .updateTable('invoices')
      .set({ amount_received: 7_000_003, confirmed_at: now - 100_000 })
      .where('id', '=', other.id)
      .execute();
  });
  // Created after the wrong amount arrived: nothing to say but the amount. 88 CNY at 7.115 is 12.37 USDT, plus 2 % = 12.62.
  const fiat = await row({
    base: 12_620_000n,
    adjustment: 5n,
    orderId: 'order-fiat',
    price: { amount: '88.00', currency: 'CNY', rate: '7.115', markupPercent: '2', sources: ['coinbase', 'kraken'], rateAt: now - 40_000 },
  });
  // A payment with another token, on the chain and never recorded.
  const wrongToken = tg.pay({ to: WALLET_ADDRESS, amount: 20_000_001n, blockTimestamp: now - 150_000, contract: FAKE_USDT_CONTRACTS[0] });
  app.clock.advance(MINUTE);

  const payer = app.client({ origin: null });
  const claim = (token: string, tx: string) => payer.post(`/checkout/${token}/transaction`, { tx_hash: tx });
  // The API's words first: where each transaction went, and whether a wrong amount arrived.
  const viewOf = async (token: string) => (await payer.get(`/checkout/${token}`)).body.invoice;
  assert.equal((await viewOf(short.checkoutToken)).unmatched_payment_seen, true);
  assert.equal((await viewOf(fiat.checkoutToken)).unmatched_payment_seen, false, 'created after it arrived');
  assert.equal((await viewOf(partial.checkoutToken)).unmatched_payment_seen, false, 'something is recorded for it');
  for (const [token, tx, paidTo, amount] of [
    [short.checkoutToken, SHORT_TX, 'no_invoice', '19.500000'],
    [short.checkoutToken, OTHER_TX, 'another_invoice', '7.000003'],
    [partial.checkoutToken, PARTIAL_TX, 'this_invoice', '24.000001'],
  ] as const) {
    const res = await claim(token, tx);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.claim.outcome, 'already_recorded');
    assert.equal(res.body.claim.paid_to, paidTo, tx);
    assert.equal(res.body.claim.amount, amount, tx);
  }

  const out = mkdtempSync(join(tmpdir(), 'gatewayd-payer-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const failures: string[] = [];
  for (const lang of ['en', 'fa']) {
    const browser = await openBrowser({ viewport: { width: 390, height: 844 } });
    try {
      const { page } = browser;
      const check = async (name: string) => {
        for (const problem of await layoutProblems(page)) failures.push(`${name} ${lang}: ${problem}`);
        await page.screenshot({ path: join(out, `${name}-${lang}.png`), fullPage: true });
      };
      const ask = async (tx: string) => {
        const result = page.locator('#claim-result');
        const before = await result.innerText();
        await page.locator('#claim-tx').fill(tx);
        await page.locator('#claim-form button[type=submit]').click();
        await page.waitForFunction((was) => {
          const text = String(
            (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('claim-result')
              .textContent,
          );
          return text !== was && !/…$/.test(text);
        }, before);
        return result.innerText();
      };

      // Not paid: the amount, with the fiat sum step by step.
      await page.goto(`${app.baseUrl}/pay/${fiat.checkoutToken}?lang=${lang}`);
      assert.equal(await page.locator('#amount').innerText(), '12.620\u202F005 USDT');
      assert.equal(await page.locator('#unmatched').count(), 0);
      if (lang === 'en') {
        assert.match(
          await page.locator('#fiat-price').innerText(),
          /^¥88\.00 = 12\.37 USDT at 7\.1150 CNY\/USDT \(rate of 09:\d\d UTC\), plus a 2\u00a0% markup = 12\.62 USDT$/,
        );
      } else assert.match(await page.locator('#fiat-price').innerText(), /12\.37[\s\S]*2[\s\S]*12\.62/);
      await check('unpaid-fiat');

      // Partly paid: what arrived is the headline; no amount to copy, no "send exactly" anywhere.
      await page.goto(`${app.baseUrl}/pay/${partial.checkoutToken}?lang=${lang}`);
      assert.equal(await page.locator('#received-amount').innerText(), '24.000\u202F001 USDT');
      assert.equal(await page.locator('#amount').count(), 0, 'no amount to send');
      assert.equal(await page.locator('.warnings').count(), 0, 'no "Before you send" box');
      assert.equal(await page.locator('button.copy[data-copy="25.000001"]').count(), 0);
      assert.equal(await page.locator('.qr').count(), 0);
      if (lang === 'en') {
        const text = await page.locator('#screen-pay').innerText();
        assert.match(text, /Received so far\s+24\.000\u202F001 USDT\s+of 25\.000001 USDT: 1\.000000 USDT short/);
        assert.match(await page.locator('#received-do').innerText(), /^Do not pay again\. Blue Lantern Books sees this payment/);
        assert.doesNotMatch(text, /Send exactly/);
      }
      await check('partial');
      await page.locator('#claim summary').click();
      const already = await ask(PARTIAL_TX);
      if (lang === 'en') assert.equal(already, 'This payment is already recorded for this invoice.');
      await check('claim-already');

      // A wrong amount arrived while it was open: said without whose; "I already paid" is open.
      app.clock.advance(MINUTE); // five lookups a minute for one invoice
      await page.goto(`${app.baseUrl}/pay/${short.checkoutToken}?lang=${lang}`);
      assert.ok(await page.locator('#unmatched').isVisible());
      assert.equal(await page.locator('#claim').getAttribute('open'), '');
      assert.doesNotMatch(await page.locator('#screen-pay').innerText(), /19\.5/, "not another payer's amount");
      if (lang === 'en')
        assert.match(
          await page.locator('#unmatched').innerText(),
          /^A payment of another amount arrived at this address while this invoice was open\. If you sent it, do not pay again/,
        );
      await check('unmatched');
      const wrongAmount = await ask(SHORT_TX);
      assert.match(wrongAmount, /19\.500000[\s\S]*20\.000001/);
      if (lang === 'en')
        assert.match(wrongAmount, /^This transaction sent 19\.500000 USDT, not this invoice's 20\.000001 USDT, so it was not matched\. Do not pay again/);
      await check('claim-wrong-amount');
      const elsewhere = await ask(OTHER_TX);
      if (lang === 'en') assert.match(elsewhere, /^This transaction paid another invoice at the same address, not this one\./);
      assert.doesNotMatch(elsewhere, /7\.000003|order-other/, 'nothing of the other invoice');
      await check('claim-other-invoice');
      const unknown = await ask(randomBytes(32).toString('hex'));
      if (lang === 'en') assert.match(unknown, /^No confirmed transaction with this id yet/);
      const token = await ask(wrongToken.txId);
      if (lang === 'en') assert.match(token, /^This transaction sends no USDT \(TRC20\) to this invoice's address/);
      await check('claim-wrong-token');
      const said = new Set([already, wrongAmount, elsewhere, unknown, token]);
      assert.equal(said.size, 5, 'one message for each answer');
      // fa: the messages are Persian, not the English catalogue's.
      if (lang === 'fa') for (const text of said) assert.match(text, /[\u0600-\u06ff]/, text);
      assert.deepEqual(
        browser.errors.filter((e) => !/\/transaction$|status of 40[49]/.test(e)),
        [],
      );
    } finally {
      await browser.close();
    }
  }
  assert.deepEqual(failures, []);
});
