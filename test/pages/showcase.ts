/**
 * One shop with something on every console page (invoices in each state, a payment applied by
 * hand, unmatched and late transfers, a key, a webhook and its deliveries), for the layout test and
 * for `npm run screenshots` (the README's pictures come from the same pages the test checks).
 */
import type { Page } from 'playwright-core';
import { insertTransfer } from '../../src/chain/chain.repo.js';
import { writeTransaction } from '../../src/db/database.js';
import type { TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { insertInvoice, insertWallet, WALLET_ADDRESS } from './rows.js';
import { micros } from '../../src/lib/amounts.js';

export interface Showcase {
  owner: SignedIn;
  pendingId: string;
  pendingToken: string;
  paidId: string;
  paidToken: string;
}

const PAYER = 'TWd4WrZ9wn84f5x1hZhL4DHvk738ns5jwb';

export async function seedShowcase(app: TestApp): Promise<Showcase> {
  const owner = await signedInMerchant(app, { name: 'Blue Lantern Books', email: 'owner@bluelantern.example' });
  const merchantId = owner.merchant.id;
  const now = app.clock.now();
  const walletId = await insertWallet(app.deps.db, merchantId, now);
  const pending = await insertInvoice(app.deps.db, {
    merchantId,
    walletId,
    now,
    base: 42_500_000n,
    adjustment: 137n,
    description: 'Order #1042: two hardcover books, shipping included',
    orderId: 'order-1042',
    expiresInMinutes: 30,
    // Priced in the shop's currency: 302.38 CNY at 7.115, rounded up to 42.50 USDT.
    price: { amount: '302.38', currency: 'CNY', rate: '7.115', markupPercent: '0', sources: ['coinbase', 'coingecko'], rateAt: now - 40_000 },
  });
  const paid = await insertInvoice(app.deps.db, {
    merchantId,
    walletId,
    now: now - 3_600_000,
    base: 18_000_000n,
    adjustment: 42n,
    description: 'Order #1041: gift card',
    orderId: 'order-1041',
    // 16.58 EUR at 0.9215 with a 0 % markup: 17.992… rounded up to 18.00 USDT.
    price: { amount: '16.58', currency: 'EUR', rate: '0.9215', markupPercent: '0', sources: ['coingecko', 'kraken'], rateAt: now - 3_640_000 },
    status: 'confirmed',
    txHash: '7c1e4f0b9a3d2e8f6c5b4a3928171605f4e3d2c1b0a99887766554433221100f',
  });
  const expired = await insertInvoice(app.deps.db, {
    merchantId,
    walletId,
    now: now - 7_200_000,
    base: 5_000_000n,
    adjustment: 7n,
    orderId: 'order-1040',
    status: 'expired',
  });
  await insertInvoice(app.deps.db, {
    merchantId,
    walletId,
    now: now - 600_000,
    base: 1_000_000_000_000_000n,
    adjustment: 99_999n,
    orderId: 'wholesale-2026-0001-ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    status: 'review',
  });
  await app.deps.db
    .insertInto('api_keys')
    .values({
      id: 'key_screens1',
      merchant_id: merchantId,
      name: 'Shop backend',
      prefix: 'gw_live_Qx3v',
      secret_hash: '0'.repeat(64),
      scopes: 'invoices:read invoices:write ledger:read',
      expires_in_days: null,
      created_at: now - 86_400_000,
      last_used_at: now - 60_000,
      revoked_at: null,
      expires_at: null,
      replaced_key_id: null,
    })
    .execute();
  await app.deps.db
    .insertInto('webhooks')
    .values({
      id: 'whk_screens1',
      merchant_id: merchantId,
      url: 'https://bluelantern.example/gateway/webhook',
      secret: 'whsec_x',
      created_at: now - 86_400_000,
      deactivated_at: null,
      // Limited to two event types, in the middle of a secret roll: the page shows both.
      enabled_events: JSON.stringify(['invoice.confirmed', 'invoice.expired']),
      previous_secret: 'whsec_y',
      previous_secret_expires_at: now + 20 * 3_600_000,
    })
    .execute();
  for (const [i, status] of (['delivered', 'failed', 'pending'] as const).entries()) {
    await app.deps.db
      .insertInto('events')
      .values({ id: `evt_screens${i}`, merchant_id: merchantId, type: 'invoice.confirmed', invoice_id: paid.id, data: '{}', created_at: now - 3_000_000 + i })
      .execute();
    await app.deps.db
      .insertInto('deliveries')
      .values({
        id: `dlv_screens${i}`,
        webhook_id: 'whk_screens1',
        event_id: `evt_screens${i}`,
        merchant_id: merchantId,
        status,
        attempts: i + 1,
        next_attempt_at: status === 'pending' ? now + 60_000 : null,
        delivered_at: status === 'delivered' ? now - 2_999_000 : null,
        last_error: status === 'delivered' ? null : 'HTTP 503 from bluelantern.example',
        response_status: status === 'delivered' ? 200 : 503,
        created_at: now - 3_000_000,
        updated_at: now - 2_999_000,
      })
      .execute();
  }
  // A payment of the price without the adjustment (unmatched) and the exact amount of the expired invoice after its window (late).
  await writeTransaction(app.deps.db, async (trx) => {
    const base = { from: PAYER, to: WALLET_ADDRESS, blockNumber: 69_316_562, tokenContract: app.deps.config.network.usdtContract };
    await insertTransfer(
      trx,
      app.deps.config.network,
      { ...base, txHash: 'a1'.repeat(32), logIndex: 0, amount: micros(42_500_000n), blockTimestamp: now - 120_000 },
      'unmatched',
      null,
      now,
    );
    await insertTransfer(
      trx,
      app.deps.config.network,
      { ...base, txHash: 'b2'.repeat(32), logIndex: 3, amount: micros(5_000_007n), blockTimestamp: now - 60_000 },
      'late',
      expired.id,
      now,
    );
  });
  return { owner, pendingId: pending.id, pendingToken: pending.checkoutToken, paidId: paid.id, paidToken: paid.checkoutToken };
}

/** The console pages of the layout check, by name. */
export function showcasePages(s: Showcase): Array<{ name: string; path: string }> {
  return [
    { name: 'overview', path: '/console' },
    { name: 'invoices', path: '/console/invoices' },
    { name: 'invoice', path: `/console/invoices/${s.paidId}` },
    { name: 'transfers', path: '/console/transfers' },
    { name: 'webhooks', path: '/console/webhooks' },
    { name: 'account', path: '/console/account' },
    { name: 'wallets', path: '/console/wallets' },
    { name: 'api-keys', path: '/console/api-keys' },
    { name: 'checkout', path: `/pay/${s.pendingToken}` },
    { name: 'not-found', path: '/console/no-such-page' },
  ];
}

/**
 * What a person would see wrong on the open page: horizontal overflow (the page, or any element
 * that sticks out of the viewport), a catalogue key shown instead of its text, or "undefined" /
 * "null" in visible text. An empty list means the page is fine.
 */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const problems = [];
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width) problems.push('page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + width);
    for (const el of document.querySelectorAll('body *')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || getComputedStyle(el).visibility === 'hidden' || el.closest('.skip')) continue;
      if (r.right > width + 1 || r.left < -1) problems.push('sticks out: <' + el.tagName.toLowerCase() + (el.className ? ' class=' + el.className : '') + '> ' + Math.round(r.left) + '..' + Math.round(r.right));
    }
    const rtl = getComputedStyle(document.documentElement).direction === 'rtl';
    const ADDRESS = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
    // Dates, amounts, addresses and ids: each its own isolated run, or right-to-left text reorders its parts.
    const RUN = /\\d{4}-\\d{2}-\\d{2}|\\d\\.\\d{6}\\b|\\bT[1-9A-HJ-NP-Za-km-z]{33}\\b|\\b(?:inv|wal|whk|key|evt|dlv)_[0-9a-z]{8,}/;
    const isolated = (node) => {
      for (let el = node.parentElement; el && el !== document.body; el = el.parentElement) {
        const cs = getComputedStyle(el);
        // A block is enough only when the run is all there is in it and the block is left-to-right.
        if (!cs.display.startsWith('inline')) return cs.direction === 'ltr' && el.textContent.trim() === node.textContent.trim();
        if (el.tagName === 'BDI' || /isolate|plaintext/.test(cs.unicodeBidi)) return true;
      }
      return false;
    };
    const clipper = (node) => {
      for (let el = node.parentElement; el && el !== document.body; el = el.parentElement) {
        if (getComputedStyle(el).overflowX !== 'visible') return el;
      }
      return null;
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent.trim();
      const parent = node.parentElement;
      if (!text || !parent || parent.closest('script, style, template, [hidden], .skip, svg') || parent.getClientRects().length === 0) continue;
      const match = text.match(RUN);
      if (match && !isolated(node)) problems.push('not an isolated run: "' + match[0] + '" in "' + text.slice(0, 60) + '"');
      const range = document.createRange();
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      const box = clipper(node);
      if (r.width > 0 && box) {
        const b = box.getBoundingClientRect();
        // Visually hidden labels (1 px, clipped) are for screen readers: not clipped text.
        if (b.width > 2 && b.height > 2 && (r.right > b.right + 1 || r.left < b.left - 1)) {
          // A transaction hash may be cut on purpose: the whole value is in its title (and its link and copy). An address never.
          if (ADDRESS.test(text)) problems.push('address cut: ' + text);
          else if (box.getAttribute('title') !== text) problems.push('clipped text: "' + text.slice(0, 40) + '"');
        }
      }
    }
    // An address, hash or id in groups (.g), a URL in parts (.u): each line holds whole groups, never a piece of one.
    for (const box of new Set([...document.querySelectorAll('.g, .u')].map((g) => g.parentElement))) {
      if (box.getClientRects().length === 0 || box.closest('[hidden]')) continue;
      const groups = [...box.children].filter((c) => c.matches('.g, .u')).map((c) => c.textContent);
      const lines = [];
      let top = null;
      const chars = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (let n = chars.nextNode(); n; n = chars.nextNode()) {
        if (!n.parentElement.matches('.g, .u')) continue;
        for (let i = 0; i < n.textContent.length; i++) {
          const range = document.createRange();
          range.setStart(n, i);
          range.setEnd(n, i + 1);
          const rect = range.getClientRects()[0];
          if (!rect) continue;
          if (top === null || rect.top > top + rect.height / 2) {
            lines.push('');
            top = rect.top;
          }
          lines[lines.length - 1] += n.textContent[i];
        }
      }
      let k = 0;
      for (const line of lines) {
        let rest = line;
        while (rest && k < groups.length && rest.startsWith(groups[k])) rest = rest.slice(groups[k++].length);
        if (rest) {
          problems.push('broken inside a group: line "' + line + '" of ' + groups.join(''));
          break;
        }
      }
    }
    // A placeholder wider than its field shows only a part (in right-to-left, its end: "ttps://").
    const ctx = document.createElement('canvas').getContext('2d');
    for (const input of document.querySelectorAll('input[placeholder]')) {
      const cs = getComputedStyle(input);
      if (input.getClientRects().length === 0) continue;
      ctx.font = cs.font;
      const room = input.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      if (ctx.measureText(input.placeholder).width > room + 1) problems.push('placeholder clipped: ' + input.placeholder);
    }
    // A label sits on the reading side of its value: right of it in right-to-left, left of it otherwise.
    const beside = (a, b) => a.top < b.bottom - 1 && b.top < a.bottom - 1;
    for (const label of document.querySelectorAll('dl.facts > dt, .label')) {
      const value = label.nextElementSibling;
      if (!value || label.getClientRects().length === 0 || value.getClientRects().length === 0) continue;
      const a = label.getBoundingClientRect();
      const b = value.getBoundingClientRect();
      if (beside(a, b) && (rtl ? a.left < b.right - 1 : a.right > b.left + 1)) problems.push('label on the wrong side: ' + label.textContent.trim());
    }
    // A stacked table cell's label (::before) comes first in the cell's own direction: it must be the page's.
    for (const td of document.querySelectorAll('td[data-th]')) {
      if (getComputedStyle(td, '::before').content === 'none' || td.getClientRects().length === 0) continue;
      if (getComputedStyle(td).direction !== (rtl ? 'rtl' : 'ltr')) problems.push('label on the wrong side: ' + td.getAttribute('data-th'));
    }
    const text = document.body.innerText;
    const key = text.match(/\\b(?:page|console|email)\\.[a-z_]+\\.[a-z_.]+/);
    if (key) problems.push('untranslated key: ' + key[0]);
    const bad = text.match(/\\b(?:undefined|null|NaN)\\b/);
    if (bad) problems.push('shows "' + bad[0] + '"');
    if (document.title.includes('undefined')) problems.push('title: ' + document.title);
    return [...new Set(problems)].slice(0, 15);
  })()`);
}

/**
 * The wrong payments of the showcase's shop: a fee-deducted 41.500137 of order-1042 (42.500137
 * less 1 USDT, related to it), and 19.5 USDT sent for order-1043 (20.000011), unmatched.
 */
export async function seedWrongPayments(app: TestApp, s: Showcase): Promise<{ wrong: { id: string; checkoutToken: string }; wrongTx: string }> {
  const merchantId = s.owner.merchant.id;
  const now = app.clock.now();
  const walletId = (await app.deps.db.selectFrom('wallets').select('id').where('merchant_id', '=', merchantId).executeTakeFirstOrThrow()).id;
  const wrong = await insertInvoice(app.deps.db, {
    merchantId,
    walletId,
    now: now - 300_000,
    base: 20_000_000n,
    adjustment: 11n,
    orderId: 'order-1043',
    expiresInMinutes: 60,
  });
  const wrongTx = 'd4'.repeat(32);
  await writeTransaction(app.deps.db, async (trx) => {
    const base = { from: PAYER, to: WALLET_ADDRESS, blockNumber: 69_316_570, tokenContract: app.deps.config.network.usdtContract };
    await insertTransfer(
      trx,
      app.deps.config.network,
      { ...base, txHash: 'c3'.repeat(32), logIndex: 0, amount: micros(41_500_137n), blockTimestamp: now - 30_000 },
      'unmatched',
      s.pendingId,
      now,
    );
    await trx.updateTable('invoices').set({ amount_received: 41_500_137 }).where('id', '=', s.pendingId).execute();
    await insertTransfer(
      trx,
      app.deps.config.network,
      { ...base, txHash: wrongTx, logIndex: 1, amount: micros(19_500_000n), blockTimestamp: now - 20_000 },
      'unmatched',
      null,
      now,
    );
  });
  return { wrong, wrongTx };
}
