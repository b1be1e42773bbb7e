/**
 * Seen, then final, on the payer's page: a payment seen before its block is final says so, with the
 * network and about how long ("less than a minute" below one); one whose block left the chain says
 * so and sends the payer to their wallet; an open page turns to the notice by itself when the poll
 * brings `payment_seen`. In Chromium, en and fa, at 1280 and 390 px, without overflow.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTransaction } from '../../src/db/database.js';
import { translate } from '../../src/lib/i18n.js';
import { SECOND } from '../../src/lib/clock.js';
import { markSeenDropped, saveSeen } from '../../src/payments/seen.repo.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { insertInvoice, insertWallet, WALLET_ADDRESS } from './rows.js';
import { layoutProblems } from './showcase.js';

test('the payer page says a payment is seen (about N min, under a minute) or dropped, and turns to it by polling; en and fa at 1280 and 390 px', async (t) => {
  const app = await startBrowserApp({ now: Date.UTC(2026, 4, 12, 9, 30) });
  t.after(() => app.close());
  const { merchant } = await signedInMerchant(app, { name: 'Blue Lantern Books' });
  const now = app.clock.now();
  const network = app.deps.config.network;
  const walletId = await insertWallet(app.deps.db, merchant.id, now - 3_600_000);
  const row = (base: bigint) =>
    insertInvoice(app.deps.db, { merchantId: merchant.id, walletId, now: now - 60_000, expiresInMinutes: 60, base, adjustment: 1n });
  const seenNow = await row(10_000_000n);
  const seenSoon = await row(11_000_000n);
  const dropped = await row(12_000_000n);
  const later = await row(13_000_000n);
  let k = 0;
  const seen = (invoiceId: string, seenAt: number) =>
    writeTransaction(app.deps.db, async (trx) => {
      k += 1;
      const s = {
        network: network.id,
        txHash: String(k).repeat(64).slice(0, 64),
        logIndex: 0,
        to: WALLET_ADDRESS,
        tokenContract: network.usdtContract,
        amount: 1n,
        rawAmount: 1n,
        blockNumber: 69_316_570 + k,
        blockHash: 'ab'.repeat(32),
        invoiceId,
        seenAt,
      };
      await saveSeen(trx, s);
      return s;
    });
  await seen(seenNow.id, now); // TRON: final about a minute after
  await seen(seenSoon.id, now - 40 * SECOND);
  const gone = await seen(dropped.id, now - 20 * SECOND);
  await writeTransaction(app.deps.db, (trx) => markSeenDropped(trx, gone, now));

  const payer = app.client({ origin: null });
  const viewOf = async (token: string) => (await payer.get(`/checkout/${token}`)).body.invoice;
  assert.equal((await viewOf(seenNow.checkoutToken)).payment_seen.network, network.id);
  assert.equal((await viewOf(seenNow.checkoutToken)).payment_dropped, false);
  assert.equal((await viewOf(dropped.checkoutToken)).payment_seen, null);
  assert.equal((await viewOf(dropped.checkoutToken)).payment_dropped, true);
  assert.equal((await viewOf(later.checkoutToken)).payment_dropped, false);

  const failures: string[] = [];
  for (const lang of ['en', 'fa'] as const) {
    for (const width of [1280, 390]) {
      const browser = await openBrowser({ viewport: { width, height: 900 } });
      try {
        const { page } = browser;
        const notice = page.locator('#seen-notice');
        const check = async (name: string) => {
          for (const problem of await layoutProblems(page)) failures.push(`${name} ${lang} ${width}: ${problem}`);
          const text = await page.locator('#checkout').innerText();
          assert.doesNotMatch(text, /undefined|page\.checkout\./, `${name} ${lang}`);
        };
        const name = 'TRON (TRC20)';
        await page.goto(`${app.baseUrl}/pay/${seenNow.checkoutToken}?lang=${lang}`);
        assert.equal(await notice.innerText(), translate(lang, 'page.checkout.seen_body', { network: name, minutes: '1' }));
        await check('seen');
        await page.goto(`${app.baseUrl}/pay/${seenSoon.checkoutToken}?lang=${lang}`);
        assert.equal(await notice.innerText(), translate(lang, 'page.checkout.seen_soon', { network: name }));
        await check('seen-soon');
        await page.goto(`${app.baseUrl}/pay/${dropped.checkoutToken}?lang=${lang}`);
        assert.equal(await notice.innerText(), translate(lang, 'page.checkout.dropped_body', { network: name }));
        assert.equal(await notice.getAttribute('class'), 'notice warn');
        await check('dropped');
        if (lang === 'en') assert.match(await notice.innerText(), /left the blockchain[\s\S]*Check your wallet/);
        else assert.match(await notice.innerText(), /[\u0600-\u06ff]/);
        if (lang === 'en' && width === 390) {
          // An open page: the poll brings payment_seen and the page says it, without the payer reloading.
          await page.goto(`${app.baseUrl}/pay/${later.checkoutToken}?lang=${lang}`);
          assert.equal(await notice.count(), 0);
          await seen(later.id, app.clock.now());
          await notice.waitFor({ timeout: 15_000 });
          assert.match(await notice.innerText(), /^Payment seen on TRON \(TRC20\): waiting for the network to finalize it/);
        }
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    }
  }
  assert.deepEqual(failures, []);
});
