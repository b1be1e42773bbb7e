/**
 * Amount squatting: an account registers another merchant's receiving address (ownership is not
 * verified) and reserves its payable amounts. On a shared address one account holds at most its
 * share of a price's pool, whatever its number of keys (which is capped) or its creation rate.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { MINUTE, SECOND, DAY } from '../../src/lib/clock.js';
import { createInvoice, newKey, shop } from '../helpers/shop.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { InvoiceCreator } from '../../src/invoices/invoices.service.js';
import { registerWallet } from '../../src/wallets/wallets.repo.js';

const VICTIM_ADDRESS = 'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi';

test('an account sharing the address, with as many keys as it can make, cannot use up the price pool; the owner still gets its amounts', async () => {
  // A pool of 100 amounts per price makes the attack quick to show; the limits are the defaults.
  const t = await startTestApp({ config: { invoices: { max_adjustment: '0.000100' } } });
  try {
    const victim = await shop(t, VICTIM_ADDRESS, 'Victim shop');
    const attacker = await shop(t, VICTIM_ADDRESS, 'Squatter');

    // 100 keys asked for: 20 made, then 409 api_key_limit_reached.
    const keys: string[] = [];
    let refused = 0;
    for (let i = 0; i < 100; i++) {
      const res = await attacker.client.post('/api-keys', { name: `k${i}` });
      if (res.status === 201) keys.push(res.body.secret as string);
      else {
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.error.code, 'api_key_limit_reached');
        refused += 1;
      }
    }
    assert.equal(keys.length, 20);
    assert.equal(refused, 80);

    // 150 creations at 49.99 at once, spread over every key and the session: the rate limit
    // (600 a minute by default) lets them through, the share of the pool does not.
    const api = t.client({ origin: null });
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        i % 21 === 20
          ? createInvoice(attacker.client, { amount: '49.99', wallet_id: attacker.walletId })
          : createInvoice(api, { amount: '49.99', wallet_id: attacker.walletId }, { bearer: keys[i % 21]! }),
      ),
    );
    const created = results.filter((r) => r.status === 201).length;
    const refusedShare = results.filter((r) => r.status === 409);
    assert.equal(created, 50, 'invoices.shared_pool_max_percent: half of the 100 amounts of the price');
    assert.equal(refusedShare.length, 100);
    for (const r of refusedShare) {
      assert.equal(r.body.error.code, 'amount_pool_exhausted');
      assert.match(r.body.error.message, /50%/);
    }
    // Another price has a pool of its own.
    assert.equal((await createInvoice(attacker.client, { amount: '19.99', wallet_id: attacker.walletId })).status, 201);

    // The owner of the address still gets amounts of that price, up to its own half.
    const own = await Promise.all(Array.from({ length: 51 }, () => createInvoice(victim.client, { amount: '49.99', wallet_id: victim.walletId })));
    assert.equal(own.filter((r) => r.status === 201).length, 50);
    assert.equal(own.filter((r) => r.status === 409).length, 1);

    const reserved = await t.deps.db
      .selectFrom('invoices')
      .select('id')
      .where('wallet_address', '=', VICTIM_ADDRESS)
      .where('base_amount', '=', 49_990_000)
      .execute();
    assert.equal(reserved.length, 100);

    // Once the squatter's reservations end (90 days), it may hold its half again, no more.
    t.clock.advance(91 * DAY);
    const later = await Promise.all(
      Array.from({ length: 60 }, () => createInvoice(api, { amount: '49.99', wallet_id: attacker.walletId }, { bearer: keys[0]! })),
    );
    assert.equal(later.filter((r) => r.status === 201).length, 50);
    assert.equal(later.filter((r) => r.status === 409).length, 10);
  } finally {
    await t.close();
  }
});

test("an address's only registrant keeps the whole pool; a second registrant limits both to their share from then on", async () => {
  const t = await startTestApp({ config: { invoices: { max_adjustment: '0.000010' } } });
  try {
    const first = await shop(t, VICTIM_ADDRESS, 'First');
    for (let i = 0; i < 8; i++) assert.equal((await createInvoice(first.client, { amount: '7', wallet_id: first.walletId })).status, 201);
    const second = await shop(t, VICTIM_ADDRESS, 'Second');
    const refused = await createInvoice(first.client, { amount: '7', wallet_id: first.walletId });
    assert.equal(refused.status, 409, 'the first registrant holds 8 of 10, past its half, now that the address is shared');
    assert.equal(refused.body.error.code, 'amount_pool_exhausted');
    assert.equal((await createInvoice(second.client, { amount: '7', wallet_id: second.walletId })).status, 201);
    assert.equal((await createInvoice(second.client, { amount: '7', wallet_id: second.walletId })).status, 201);
    // The pool is now used up for everyone (8 + 2).
    assert.equal((await createInvoice(second.client, { amount: '7', wallet_id: second.walletId })).body.error.code, 'amount_pool_exhausted');
  } finally {
    await t.close();
  }
});

test('with shared_pool_max_percent = 100 the rule is off', async () => {
  const t = await startTestApp({ config: { invoices: { max_adjustment: '0.000004', shared_pool_max_percent: 100 } } });
  try {
    await shop(t, VICTIM_ADDRESS, 'Owner');
    const squatter = await shop(t, VICTIM_ADDRESS, 'Squatter');
    for (let i = 0; i < 4; i++) assert.equal((await createInvoice(squatter.client, { amount: '3', wallet_id: squatter.walletId })).status, 201);
  } finally {
    await t.close();
  }
});

test('the per-merchant creation limit: configurable, refills with time, replays do not count, other merchants are not affected', async () => {
  const t = await startTestApp({ config: { rate_limits: { invoices_per_merchant: 3 } } });
  try {
    const a = await shop(t, VICTIM_ADDRESS);
    const b = await shop(t, VICTIM_ADDRESS);
    const first = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId, merchant_order_id: 'replayed' });
    assert.equal(first.status, 201);
    // Replays of an existing invoice reserve nothing and do not use the budget.
    for (let i = 0; i < 5; i++) {
      const replay = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId, merchant_order_id: 'replayed' });
      assert.equal(replay.status, 200);
      assert.equal(replay.body.idempotent_replay, true);
    }
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 201);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 201);
    const limited = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.equal(limited.headers.get('retry-after'), '20');
    assert.match(limited.body.error.message, /merchant/);
    // Fifty identical retries of one new creation, all at once: one creation is charged, never a replay.
    t.clock.advance(MINUTE);
    const retries = await Promise.all(
      Array.from({ length: 50 }, () =>
        createInvoice(a.client, { amount: '6', wallet_id: a.walletId, merchant_order_id: 'retried' }, { key: 'burst-of-retries' }),
      ),
    );
    assert.deepEqual([...new Set(retries.map((r) => r.status))].sort(), [200, 201]);
    assert.equal(retries.filter((r) => r.status === 201).length, 1);
    assert.equal(new Set(retries.map((r) => r.body.invoice.id)).size, 1);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 201);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 201);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 429, 'the burst of retries cost one creation of three');
    // Merchant b shares the address and has its own budget.
    assert.equal((await createInvoice(b.client, { amount: '5', wallet_id: b.walletId })).status, 201);
    t.clock.advance(20 * SECOND);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 201);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 429);
    const count = await t.deps.db.selectFrom('invoices').select('id').where('merchant_id', '=', a.merchant.id).execute();
    assert.equal(count.length, 7);
  } finally {
    await t.close();
  }
});

test('the active-key cap: configurable; revoked and expired keys do not count; a roll at the cap replaces one key with one', async () => {
  const t = await startTestApp({ config: { api_keys: { max_active: 3 } } });
  try {
    const s = await shop(t, VICTIM_ADDRESS);
    const k1 = await newKey(s.client, { name: 'one' });
    const k2 = await newKey(s.client, { name: 'two', expires_in_days: 1 });
    await newKey(s.client, { name: 'three' });
    const over = await s.client.post('/api-keys', { name: 'four' });
    assert.equal(over.status, 409);
    assert.equal(over.body.error.code, 'api_key_limit_reached');
    assert.match(over.body.error.message, /3 active API keys/);
    assert.equal((await t.deps.db.selectFrom('api_keys').select('id').where('merchant_id', '=', s.merchant.id).execute()).length, 3, 'nothing was written');

    // Rolling an active key at the cap works: the old one is revoked in the same step.
    const rolled = await s.client.post(`/api-keys/${k1.id}/roll`, {});
    assert.equal(rolled.status, 201, rolled.text);
    assert.equal((await s.client.post('/api-keys', { name: 'four' })).status, 409);

    // Once a key expires it no longer counts, and rolling it (a renewal) adds an active key: refused at the cap.
    t.clock.advance(DAY + 1);
    assert.equal((await s.client.post('/api-keys', { name: 'four' })).status, 201);
    const renew = await s.client.post(`/api-keys/${k2.id}/roll`, {});
    assert.equal(renew.status, 409);
    assert.equal(renew.body.error.code, 'api_key_limit_reached');

    // Revoking one frees a place.
    assert.equal((await s.client.delete(`/api-keys/${rolled.body.api_key.id}`)).status, 200);
    assert.equal((await s.client.post(`/api-keys/${k2.id}/roll`, {})).status, 201);
  } finally {
    await t.close();
  }
});

/** The owner and a squatter, each with a wallet on VICTIM_ADDRESS. */
async function bothOnVictimAddress(t: TestApp) {
  const { merchant: squatter } = await signedInMerchant(t);
  const { merchant: owner } = await signedInMerchant(t);
  const sq = await registerWallet(t.deps.db, t.config.network.id, squatter.id, 'S', VICTIM_ADDRESS, t.clock.now());
  const ow = await registerWallet(t.deps.db, t.config.network.id, owner.id, 'O', VICTIM_ADDRESS, t.clock.now());
  return { squatter, owner, sq, ow };
}

let created = 0;
/** Creations through one InvoiceCreator, answered as '201 <payable amount>' or 'err <code>' (keys and order ids unique in this file). */
function creations(creator: InvoiceCreator): (merchantId: string, walletId: string, amount: string) => Promise<string> {
  return (merchantId, walletId, amount) => {
    const n = (created += 1);
    return creator
      .create({ merchantId, idempotencyKey: `k-${n}`, body: { merchant_order_id: `o-${n}`, amount, wallet_id: walletId, expires_in_minutes: 20 } })
      .then(
        (r) => `201 ${r.invoice.payableAmount}`,
        (e: { code?: string }) => `err ${e.code}`,
      );
  };
}

/**
 * On PostgreSQL the creations of one batch run at once (GroupCommit.runPgWhole): a unit claims the
 * price's cursor before another unit of the batch has moved it past the amounts its choice crossed,
 * so its view of how much of the pool is used is too low. The squatter's creations in one batch must
 * still be refused at its share, as when they run one after another.
 */
test('pool share: creations of one batch cannot take an account past its share of a shared address', async () => {
  // 10 amounts a price, 30 %: a cap of 3.
  const t = await startTestApp({
    config: { invoices: { max_adjustment: '0.000010', shared_pool_max_percent: 30 }, rate_limits: { invoices_per_merchant: 0 } },
  });
  try {
    const { squatter, owner, sq, ow } = await bothOnVictimAddress(t);
    const create = creations(new InvoiceCreator(t.deps));
    // The owner takes 10.000001 (price 10's cursor at 2); the squatter takes 10.000002 and 10.000003
    // through price 10.000001: two of price 10's amounts.
    assert.equal(await create(owner.id, ow.wallet.id, '10'), '201 10000001');
    assert.equal(await create(squatter.id, sq.wallet.id, '10.000001'), '201 10000002');
    assert.equal(await create(squatter.id, sq.wallet.id, '10.000001'), '201 10000003');
    // Two at once at price 10: the first takes 10.000004 (3 held: the cap), the second is refused.
    const atOnce = await Promise.all([create(squatter.id, sq.wallet.id, '10'), create(squatter.id, sq.wallet.id, '10')]);
    assert.deepEqual(atOnce, ['201 10000004', 'err amount_pool_exhausted']);
  } finally {
    await t.close();
  }
});

test('pool share: one batch of 49 creations takes a squatter holding half of a price pool to 51 amounts at most', async () => {
  const t = await startTestApp({ config: { invoices: { max_adjustment: '0.000100' }, rate_limits: { invoices_per_merchant: 0 } } });
  try {
    const { squatter, owner, sq, ow } = await bothOnVictimAddress(t);
    const setup = creations(new InvoiceCreator(t.deps));
    // The squatter's share of price 10.000001 (10.000002 to 10.000051), all inside price 10's range.
    for (let i = 0; i < 50; i++) assert.match(await setup(squatter.id, sq.wallet.id, '10.000001'), /^201/);
    assert.equal(await setup(owner.id, ow.wallet.id, '10'), '201 10000001');
    const create = creations(new InvoiceCreator(t.deps));
    const atOnce = await Promise.all(Array.from({ length: 49 }, () => create(squatter.id, sq.wallet.id, '10')));
    const held = await t.deps.db
      .selectFrom('amount_reservations as r')
      .innerJoin('invoices as i', 'i.id', 'r.invoice_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('r.address', '=', VICTIM_ADDRESS)
      .where('r.amount', '>=', 10_000_001)
      .where('r.amount', '<=', 10_000_100)
      .where('i.merchant_id', '=', squatter.id)
      .executeTakeFirstOrThrow();
    // One after another: the first takes 10.000052 (the cursor jumps to 53; then 51 held, past the cap of 50), the rest 409.
    assert.equal(Number(held.n), 51, JSON.stringify(atOnce));
    assert.equal(atOnce.filter((r) => r === 'err amount_pool_exhausted').length, 48);
  } finally {
    await t.close();
  }
});
