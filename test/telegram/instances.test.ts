/**
 * Several instances on one PostgreSQL database (issue 31): the work `serve` starts (createWorkers)
 * in two real apps on one database, each with its own clock, pool and leases. The chain scanner, the
 * Telegram update reader and the Telegram outbox each run in one instance; a payer's "I already
 * paid" sent to both instances at once is recorded once, and its notice is sent once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import type { Worker } from '../../src/lib/loop.js';
import { createWorkers } from '../../src/workers.js';
import { createChainRuntime } from '../../src/chain/chain.worker.js';
import { startTestApp, tempDir, type TestApp } from '../helpers/app.js';
import { onPostgres, scratchDatabase } from '../helpers/database.js';
import { eventsOf, transfersOf } from '../helpers/chain-fixtures.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';
import { startFakeBotApi } from '../helpers/telegram.js';
import { startTronGrid } from '../helpers/trongrid.js';

test('the workers serve starts run the scanner once: one chain loop per process', async () => {
  const t = await startTestApp();
  try {
    const names = createWorkers(t.deps).map((w) => w.name);
    assert.deepEqual(
      names.filter((n) => n === 'chain'),
      ['chain'],
    );
    assert.equal(new Set(names).size, names.length, `each worker once: ${names.join(', ')}`);
  } finally {
    await t.close();
  }
});

test(
  'two instances: Telegram updates are read and notices sent by one instance, once; "I already paid" on both at once records one payment',
  { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (several instances share a PostgreSQL database)' },
  async () => {
    const bot = await startFakeBotApi();
    let now = Date.UTC(2026, 0, 15, 12, 0, 0);
    const tg = await startTronGrid({ now: () => now });
    const scratch = await scratchDatabase();
    const config = (name: string) => ({
      database: { path: join(tempDir(), `${name}.db`), url: scratch.url },
      tron: { api_url: tg.url, poll_interval_seconds: 5 },
      notify: { telegram_bot_token: bot.token, telegram_api_url: bot.url },
    });
    const instances: TestApp[] = [];
    const workers: Worker[][] = [];
    try {
      for (const name of ['a', 'b']) {
        const t = await startTestApp({ now, config: config(name) });
        t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0, timeoutMs: 2000 });
        t.deps.telegram!.pollSeconds = 0;
        instances.push(t);
        workers.push(createWorkers(t.deps));
      }
      const [a, b] = instances as [TestApp, TestApp];
      const advance = (ms: number) => {
        now += ms;
        for (const t of instances) t.clock.advance(ms);
      };
      /** One pass of the named worker in both instances at once. */
      const both = (name: string) => Promise.all(workers.map((ws) => ws.find((w) => w.name === name)!.runOnce()));

      const s = await shop(a, ADDRESSES[0], 'Shop A');
      const code = (await s.client.post('/me/telegram/code', {})).body.telegram.code as string;
      bot.message(4242, `/start ${code}`);
      for (let i = 0; i < 4; i++) await both('telegram-updates');
      assert.equal(bot.updateRequests.length, 4, 'getUpdates is asked by one instance only (Telegram refuses a second reader)');
      for (let i = 0; i < 3; i++) await both('telegram-outbox');
      assert.deepEqual(
        bot.sent.map((m) => m.chat_id),
        ['4242'],
        'the "linked" notice is sent once',
      );

      const inv = (await createInvoice(s.client, { amount: '25', wallet_id: s.walletId, expires_in_minutes: 60 })).body.invoice;
      const payable = BigInt(Math.round(Number(inv.payable_amount) * 1e6));
      // The scanner runs in one instance (the other is refused the lease) and has not reached the payment.
      await both('chain');
      const paid = tg.pay({ to: ADDRESSES[0], amount: payable, blockTimestamp: now + 10 * SECOND });
      advance(2 * MINUTE);
      const claims = await Promise.all(
        instances.map((t) => t.client({ origin: null }).post(`/checkout/${inv.checkout_token}/transaction`, { tx_hash: paid.txId })),
      );
      for (const c of claims) assert.equal(c.status, 200, c.text);
      assert.deepEqual(claims.map((c) => c.body.claim.outcome).sort(), ['already_recorded', 'recorded']);
      // Then the scanner reaches the block, in whichever instance leads.
      for (let i = 0; i < 5; i++) {
        advance(5 * SECOND);
        await both('chain');
      }
      assert.equal((await transfersOf(a)).filter((r) => r.tx_hash === paid.txId).length, 1);
      assert.equal((await eventsOf(b, inv.id)).filter((e) => e.type === 'invoice.confirmed').length, 1);
      for (let i = 0; i < 3; i++) await both('telegram-outbox');
      const confirmed = bot.sent.filter((m) => /25/.test(m.text) && m.chat_id === '4242');
      assert.equal(confirmed.length, 1, `the payment's notice is sent once: ${JSON.stringify(bot.sent)}`);
      assert.equal(bot.sent.length, 2);
    } finally {
      for (const ws of workers) for (const w of ws) await w.drain?.();
      for (const t of instances) await t.close();
      await scratch.drop();
      await tg.close();
      await bot.close();
    }
  },
);
