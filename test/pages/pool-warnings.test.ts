/**
 * The console tells a merchant when an address's pool of payable amounts for a price is being used
 * up, whoever uses it: here another account that registered the same address.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { LOCALES, translate } from '../../src/lib/i18n.js';
import { openBrowser, startBrowserApp } from '../helpers/browser.js';
import { addWallet, createInvoice, shop } from '../helpers/shop.js';

const ADDRESS = 'TJmmqjb1DK9TTZbQXzRQ2AuA94z4gKAPFh';

test("a price pool more than half used on the merchant's address is shown on the Overview and the wallet list, in every locale, rtl included", async (t) => {
  // 10 amounts per price, so the squatter needs only a few invoices; the pool share is off, so that
  // one squatter can pass half (with it, two squatting accounts can, which the warning is for).
  const app = await startBrowserApp({ config: { invoices: { max_adjustment: '0.000010', shared_pool_max_percent: 100 } } });
  t.after(() => app.close());
  const victim = await shop(app, ADDRESS, 'Victim');
  await addWallet(victim.client, 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx', 'Quiet wallet');
  const squatter = await shop(app, ADDRESS, 'Squatter');
  // The wallet label is the victim's own text, shown escaped.
  await app.deps.db.updateTable('wallets').set({ label: 'Shop <b>main</b>' }).where('id', '=', victim.walletId).execute();

  // Nothing is shown while no pool is past half.
  for (let i = 0; i < 5; i++) assert.equal((await createInvoice(squatter.client, { amount: '49.99', wallet_id: squatter.walletId })).status, 201);
  for (let i = 0; i < 3; i++) assert.equal((await createInvoice(victim.client, { amount: '5', wallet_id: victim.walletId })).status, 201);
  const quiet = await victim.client.get(`${app.baseUrl}/console`);
  assert.equal(quiet.status, 200);
  assert.doesNotMatch(quiet.text, /data-pool-warnings/);

  // The squatter takes a 6th and a 7th amount at 49.99: 7 of 10 used.
  for (let i = 0; i < 2; i++) assert.equal((await createInvoice(squatter.client, { amount: '49.99', wallet_id: squatter.walletId })).status, 201);
  for (const locale of LOCALES) {
    for (const path of ['/console', '/console/wallets']) {
      const res = await victim.client.get(`${app.baseUrl}${path}?lang=${locale}`);
      assert.equal(res.status, 200);
      const section = /<section class="warnings pool-warnings" role="status" data-pool-warnings>[\s\S]*?<\/section>/.exec(res.text)?.[0];
      assert.ok(section, `${locale} ${path}: warning shown`);
      const item = translate(locale, 'console.pools.item', {
        wallet: 'Shop &lt;b&gt;main&lt;/b&gt;',
        price: '49.990000',
        used: '7',
        size: '10',
        percent: '70',
      });
      assert.ok(section.includes(item), `${locale} ${path}: names the wallet, the price and the use:\n${section}`);
      assert.ok(section.includes(translate(locale, 'console.pools.shared', { count: '1' })), `${locale}: says another account uses the address`);
      assert.ok(section.replace(/<[^>]+>/g, '').includes(ADDRESS), 'the address, shown in groups');
      assert.doesNotMatch(section, /undefined|console\.pools|\{[a-z]+\}/, locale);
      // Only that pool: the price at 30 % and the other wallet are not listed.
      assert.doesNotMatch(section, /5\.000000|Quiet wallet/);
    }
  }
  // The squatter sees it too (the same pool on its wallet), naming its own wallet only.
  const theirs = await squatter.client.get(`${app.baseUrl}/console`);
  assert.match(theirs.text, /data-pool-warnings/);
  assert.doesNotMatch(theirs.text, /Shop &lt;b&gt;main/);

  // As a person sees it: Chromium, English and Persian (rtl), no overflow on a phone.
  const shots = process.env.KEEP_SCREENSHOTS ?? join(app.dir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  for (const locale of ['en', 'fa']) {
    const browser = await openBrowser({ locale, viewport: { width: 390, height: 844 } });
    try {
      await browser.context.addCookies([{ name: SESSION_COOKIE, value: victim.client.cookies.get(SESSION_COOKIE)!, url: app.baseUrl }]);
      for (const path of ['/console', '/console/wallets']) {
        await browser.page.goto(`${app.baseUrl}${path}?lang=${locale}`);
        const warning = browser.page.locator('[data-pool-warnings]');
        assert.ok(await warning.isVisible());
        assert.equal(await browser.page.getAttribute('html', 'dir'), locale === 'fa' ? 'rtl' : 'ltr');
        const text = await warning.innerText();
        assert.ok(text.includes('Shop <b>main</b>'), 'the label is shown as typed, not as markup');
        const overflow = Number(await browser.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
        assert.ok(overflow <= 0, `${locale} ${path}: the page is ${overflow}px wider than the screen`);
        await browser.page.screenshot({ path: join(shots, `pool-warning-${locale}${path.replaceAll('/', '-')}.png`), fullPage: true });
      }
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  }
});
