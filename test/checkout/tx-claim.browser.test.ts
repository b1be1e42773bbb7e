import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { createChainRuntime } from '../../src/chain/chain.worker.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';
import { startTronGrid } from '../helpers/trongrid.js';

test('the checkout\'s "I already paid" form in Chromium at 390 px (en, fa): a wrong id is explained, a real payment confirms the page', async () => {
  let clockNow = () => Date.UTC(2026, 0, 15, 12, 0, 0);
  const tg = await startTronGrid({ now: () => clockNow() });
  const t = await startBrowserApp({ config: { tron: { api_url: tg.url, poll_interval_seconds: 5 } } });
  try {
    clockNow = () => t.clock.now();
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0, timeoutMs: 2000 });
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    for (const lang of ['fa', 'en']) {
      const inv = (await createInvoice(a.client, { amount: lang === 'en' ? '9' : '8', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
      const paid = tg.pay({ to: ADDRESSES[0], amount: BigInt(inv.payable_amount.replace('.', '')), blockTimestamp: t.clock.now() + 10 * SECOND });
      t.clock.advance(2 * MINUTE);
      const b = await openBrowser({ viewport: { width: 390, height: 844 } });
      try {
        await b.page.goto(`${t.baseUrl}/pay/${inv.checkout_token}?lang=${lang}`);
        const claim = b.page.locator('#claim');
        await claim.locator('summary').click();
        await b.page.locator('#claim-tx').fill('not-a-transaction');
        await b.page.locator('#claim-form button[type=submit]').click();
        const result = b.page.locator('#claim-result');
        await result.filter({ hasText: lang === 'en' ? /64 characters/ : /۶۴ نویسه/ }).waitFor();
        // Nothing overflows the narrow screen.
        const overflow = Number(await b.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
        assert.ok(overflow <= 0, `${lang}: horizontal overflow ${overflow}px`);
        await b.page.screenshot({ path: `/tmp/claim-${lang}.png` });
        await b.page.locator('#claim-tx').fill(paid.txId);
        await b.page.locator('#claim-form button[type=submit]').click();
        await b.page.locator('#screen-confirmed').waitFor({ state: 'visible' });
        assert.equal(await b.page.locator('#screen-confirmed [data-field="tx_hash"]').innerText(), paid.txId);
        assert.deepEqual(b.errors, []);
      } finally {
        await b.close();
      }
    }
  } finally {
    await t.close();
    await tg.close();
  }
});
