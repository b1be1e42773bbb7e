import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { readUpdates, sendDue } from '../../src/telegram/telegram.worker.js';
import { pass, startChainHarness } from '../helpers/chain-fixtures.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';
import { startFakeBotApi } from '../helpers/telegram.js';

test('a merchant links a Telegram chat with a one-time code and gets its notices, durably, honouring retry_after', async () => {
  const bot = await startFakeBotApi({ username: 'gw_notices_bot' });
  const h = await startChainHarness({ config: { notify: { telegram_bot_token: bot.token, telegram_api_url: bot.url } } });
  try {
    const { t, tg } = h;
    t.deps.telegram!.pollSeconds = 0;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const before = await a.client.get('/me/telegram');
    assert.equal(before.status, 200, before.text);
    assert.equal(before.body.telegram.linked, false);
    const coded = (await a.client.post('/me/telegram/code', {})).body.telegram;
    assert.match(coded.code, /^[A-Z2-9]{10}$/);
    assert.equal(coded.deep_link, `https://t.me/gw_notices_bot?start=${coded.code}`);
    const page = async (lang: string) => (await a.client.get(`${t.baseUrl}/console/account?lang=${lang}`, { headers: { accept: 'text/html' } })).text;
    const shown = await page('en');
    assert.match(shown, new RegExp(`id="telegram-code" dir="ltr">${coded.code}<`));
    assert.match(shown, new RegExp(`href="https://t.me/gw_notices_bot\\?start=${coded.code}"`));
    assert.match(await page('fa'), /اعلان‌های تلگرام/);

    // A wrong code links nothing; the right one, as /start <code> from the deep link, links that chat.
    bot.message(999, '/start AAAAAAAAAA');
    bot.message(4242, `/start ${coded.code}`);
    assert.equal(await readUpdates(t.deps), true);
    const linked = (await a.client.get('/me/telegram')).body.telegram;
    assert.match(await page('en'), /A Telegram chat is linked/);
    assert.equal(linked.linked, true);
    assert.equal(linked.code, null, 'the code is used once');
    await sendDue(t.deps);
    assert.equal(bot.sent.length, 1);
    assert.equal(bot.sent[0]!.chat_id, '4242');
    assert.match(bot.sent[0]!.text, /linked to Shop A/);
    // The offset moves past what was read: nothing is handled twice.
    await readUpdates(t.deps);
    assert.equal(bot.updateRequests.at(-1)!.offset, 102);
    bot.message(5555, `/start ${coded.code}`);
    await readUpdates(t.deps);
    await sendDue(t.deps);
    assert.equal(bot.sent.length, 1, 'a used code links no other chat');

    // Payments: confirmed and unmatched notices, queued with their events.
    await a.client.patch('/me/telegram', { notices: ['confirmed', 'unmatched'] });
    const inv = (await createInvoice(a.client, { amount: '12', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    const payable = BigInt(inv.payable_amount.replace('.', ''));
    await pass(h, 0);
    tg.pay({ to: ADDRESSES[0], amount: payable, blockTimestamp: t.clock.now() + 10 * SECOND });
    tg.pay({ to: ADDRESSES[0], amount: 3_000_000n, blockTimestamp: t.clock.now() + 13 * SECOND });
    await pass(h, 2 * MINUTE);
    const queued = await t.deps.db.selectFrom('telegram_outbox').select(['kind', 'status']).where('kind', '!=', 'linked').execute();
    assert.deepEqual(queued.map((q) => q.kind).sort(), ['confirmed', 'unmatched']);

    // Telegram answers 429 with retry_after 90: nothing is sent before 90 s, then both are.
    bot.failNext('sendMessage', 429, { ok: false, error_code: 429, description: 'Too Many Requests: retry after 90', parameters: { retry_after: 90 } });
    await sendDue(t.deps);
    assert.equal(bot.sent.length, 1);
    t.clock.advance(60 * SECOND);
    await sendDue(t.deps);
    assert.equal(bot.sent.length, 1, 'retry_after is honoured');
    t.clock.advance(31 * SECOND);
    await sendDue(t.deps);
    await sendDue(t.deps);
    assert.equal(bot.sent.length, 3);
    const texts = bot.sent.slice(1).map((s) => s.text);
    const paid = texts.find((x) => x.startsWith('Paid:'))!;
    assert.match(paid, new RegExp(`invoice ${inv.id} \\(${inv.merchant_order_id}\\), ${inv.payable_amount.replace('.', '\\.')} USDT`));
    const unmatched = texts.find((x) => x.startsWith('Unmatched'))!;
    assert.match(unmatched, /3\.000000 USDT to TL24LC…U1tHre/);
    for (const text of texts) {
      assert.doesNotMatch(text, new RegExp(ADDRESSES[0]), 'never a full address');
      assert.doesNotMatch(text, new RegExp(inv.checkout_token), 'never a checkout token');
    }

    // In the merchant's locale; unlinking stops everything.
    await t.deps.db.updateTable('merchants').set({ locale: 'fa' }).where('id', '=', a.merchant.id).execute();
    tg.pay({ to: ADDRESSES[0], amount: 4_000_000n, blockTimestamp: t.clock.now() + 10 * SECOND });
    await pass(h, 2 * MINUTE);
    await sendDue(t.deps);
    assert.match(bot.sent.at(-1)!.text, /انتقال بدون صورت‌حساب/);
    assert.equal((await a.client.delete('/me/telegram')).body.telegram.linked, false);
    tg.pay({ to: ADDRESSES[0], amount: 5_000_000n, blockTimestamp: t.clock.now() + 10 * SECOND });
    const count = bot.sent.length;
    await pass(h, 2 * MINUTE);
    await sendDue(t.deps);
    assert.equal(bot.sent.length, count);
  } finally {
    await h.close();
    await bot.close();
  }
});

test('without a bot token the Telegram endpoints answer 503 telegram_unavailable', async () => {
  const h = await startChainHarness();
  try {
    const a = await shop(h.t, ADDRESSES[0]);
    const res = await a.client.get('/me/telegram');
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'telegram_unavailable');
  } finally {
    await h.close();
  }
});

test('a linked chat that wants it hears once when the chain watcher has been down for 5 minutes', async () => {
  const bot = await startFakeBotApi();
  const h = await startChainHarness({ config: { notify: { telegram_bot_token: bot.token, telegram_api_url: bot.url } } });
  try {
    const { t, tg } = h;
    t.deps.telegram!.pollSeconds = 0;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const b = await shop(t, ADDRESSES[1], 'Shop B');
    for (const [s, chat] of [
      [a, 1001],
      [b, 1002],
    ] as const) {
      const code = (await s.client.post('/me/telegram/code', {})).body.telegram.code;
      bot.message(chat, code);
    }
    await readUpdates(t.deps);
    await b.client.patch('/me/telegram', { notices: ['confirmed'] });
    await sendDue(t.deps);
    const linkedMessages = bot.sent.length;
    await createInvoice(a.client, { amount: '3', wallet_id: a.walletId, expires_in_minutes: 60 });
    await pass(h, 0);
    // Every provider fails from now on: the watcher degrades.
    tg.fail('*', { status: 500 }, 10_000);
    await pass(h, 10 * SECOND);
    assert.equal(t.deps.watcherStatus.state, 'degraded');
    await sendDue(t.deps);
    assert.equal(bot.sent.length, linkedMessages, 'not before 5 minutes');
    for (let i = 0; i < 6; i += 1) {
      await pass(h, MINUTE);
      await sendDue(t.deps);
    }
    const down = bot.sent.slice(linkedMessages);
    assert.equal(down.length, 1, 'once per outage, and only to the chat that wants it');
    assert.equal(down[0]!.chat_id, '1001');
    assert.match(down[0]!.text, /Payments are not being confirmed/);
  } finally {
    await h.close();
    await bot.close();
  }
});
