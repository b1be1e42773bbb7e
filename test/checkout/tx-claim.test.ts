import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { FAKE_USDT_CONTRACTS } from '../../src/devnet/tron-node.js';
import { eventsOf, pass, startChainHarness, transfersOf } from '../helpers/chain-fixtures.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { startTestApp } from '../helpers/app.js';
import { createChainRuntime } from '../../src/chain/chain.worker.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';

test('"I already paid": a real payment named before the scanner reaches it confirms at once, and the scan records nothing twice', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    await shop(t, ADDRESSES[1], 'Shop B');
    const inv = (await createInvoice(a.client, { amount: '25', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    const payable = BigInt(Math.round(Number(inv.payable_amount) * 1e6));
    const payer = t.client({ origin: null });
    const claim = (tx: string) => payer.post(`/checkout/${inv.checkout_token}/transaction`, { tx_hash: tx });
    // The scanner runs (and lingers after the invoice closes), but has not reached the payment's block.
    await pass(h, 0);

    const real = tg.pay({ to: ADDRESSES[0], amount: payable, blockTimestamp: t.clock.now() + 10 * SECOND });
    const fake = tg.pay({ to: ADDRESSES[0], amount: payable, blockTimestamp: t.clock.now() + 12 * SECOND, contract: FAKE_USDT_CONTRACTS[0] });
    const failed = tg.pay({ to: ADDRESSES[0], amount: payable, blockTimestamp: t.clock.now() + 14 * SECOND, receipt: 'failed' });
    const other = tg.pay({ to: ADDRESSES[1], amount: payable, blockTimestamp: t.clock.now() + 16 * SECOND });

    // Not solidified yet: not found, nothing recorded.
    const early = await claim(real.txId);
    assert.equal(early.status, 404, early.text);
    assert.equal(early.body.error.code, 'transaction_not_found');
    t.clock.advance(2 * MINUTE);

    for (const [tx, reason] of [
      [fake.txId, 'no_usdt_transfer'],
      [failed.txId, 'failed'],
      [other.txId, 'no_usdt_transfer'],
    ] as const) {
      const res = await claim(tx);
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.error.code, 'transaction_not_accepted');
      assert.equal(res.body.error.details[0].reason, reason);
    }
    const unknown = await claim(randomBytes(32).toString('hex'));
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'transaction_not_found');
    const malformed = await claim('xyz');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, 'validation_error');
    assert.equal((await transfersOf(t)).length, 0, 'nothing recorded from refused claims');
    assert.equal((await payer.get(`/checkout/${inv.checkout_token}`)).body.invoice.status, 'pending');

    const ok = await claim(`0x${real.txId.toUpperCase()}`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.claim.outcome, 'recorded');
    assert.equal(ok.body.invoice.status, 'confirmed');
    assert.equal(ok.body.invoice.tx_hash, real.txId);

    // The scanner reaches the block later: the same log is not recorded, nor the event sent, twice.
    await pass(h, 10 * SECOND);
    const rows = (await transfersOf(t)).filter((r) => r.tx_hash === real.txId);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.kind, 'confirmed');
    assert.equal((await transfersOf(t)).filter((r) => r.tx_hash === other.txId).length, 1, 'the scanner still records what it sees');
    const confirmedEvents = (await eventsOf(t, inv.id)).filter((e) => e.type === 'invoice.confirmed');
    assert.equal(confirmedEvents.length, 1);
    t.clock.advance(MINUTE);
    const again = await claim(real.txId);
    assert.equal(again.status, 200);
    assert.equal(again.body.claim.outcome, 'already_recorded');
  } finally {
    await h.close();
  }
});

test('"I already paid" is rate limited per invoice and per client address', async () => {
  const h = await startChainHarness();
  try {
    const { t } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const one = (await createInvoice(a.client, { amount: '5', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    const payer = t.client({ origin: null });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1)
      statuses.push((await payer.post(`/checkout/${one.checkout_token}/transaction`, { tx_hash: randomBytes(32).toString('hex') })).status);
    assert.deepEqual(statuses, [404, 404, 404, 404, 404, 429]);
    const limited = await payer.post(`/checkout/${one.checkout_token}/transaction`, { tx_hash: randomBytes(32).toString('hex') });
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // Per address: other invoices from the same client run out at 20 lookups a minute in all.
    let ipLimited = 0;
    for (let i = 0; i < 4; i += 1) {
      const inv = (await createInvoice(a.client, { amount: `${6 + i}`, wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
      for (let j = 0; j < 5; j += 1) {
        const res = await payer.post(`/checkout/${inv.checkout_token}/transaction`, { tx_hash: randomBytes(32).toString('hex') });
        if (res.status === 429) ipLimited += 1;
      }
    }
    // 7 + 20 lookups from one address (refused ones count too): the 20-a-minute budget refuses 7 of the last 20.
    assert.equal(ipLimited, 7);
    t.clock.advance(MINUTE);
    assert.equal((await payer.post(`/checkout/${one.checkout_token}/transaction`, { tx_hash: randomBytes(32).toString('hex') })).status, 404);
  } finally {
    await h.close();
  }
});

test('"I already paid" with two providers records only what the second one confirms, else defers to the scanner', async () => {
  let clockNow = () => Date.UTC(2026, 0, 15, 12, 0, 0);
  const tg = await startTronGrid({ now: () => clockNow() });
  const second = await startTronGrid({ now: () => clockNow() });
  const provider = (url: string) => ({ url, api_key: '', requests_per_second: 0, timeout_seconds: 2 });
  const t = await startTestApp({ config: { tron: { providers: [provider(tg.url), provider(second.url)], poll_interval_seconds: 5 } } });
  try {
    clockNow = () => t.clock.now();
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0, timeoutMs: 2000 });
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const inv = (await createInvoice(a.client, { amount: '7', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    const payable = BigInt(Math.round(Number(inv.payable_amount) * 1e6));
    // Only the first provider knows the transaction (a lying or lagging one): nothing is recorded.
    const paid = tg.pay({ to: ADDRESSES[0], amount: payable, blockTimestamp: t.clock.now() + 10 * SECOND });
    t.clock.advance(2 * MINUTE);
    const res = await t.client({ origin: null }).post(`/checkout/${inv.checkout_token}/transaction`, { tx_hash: paid.txId });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.claim.outcome, 'deferred');
    assert.match(res.body.claim.reason, /scanner will see it/);
    assert.equal(res.body.invoice.status, 'pending');
    assert.equal((await transfersOf(t)).length, 0);
  } finally {
    await t.close();
    await tg.close();
    await second.close();
  }
});

test('"I already paid" in an instance that does not run the scanner: a transaction placed in a block the scanner has read, with a later time, is not recorded', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const inv = (await createInvoice(a.client, { amount: '9', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    const payable = BigInt(Math.round(Number(inv.payable_amount) * 1e6));
    // The scanner (the leader) has read up to its cursor; its durable state is in the database.
    await pass(h, 0);
    await pass(h, 30 * SECOND);
    const cursor = await t.deps.db.selectFrom('chain_scan').select(['cursor_block', 'cursor_time']).executeTakeFirstOrThrow();
    // A real payment's TransactionInfo, copied by a lying provider into a block the scanner has
    // already read (it held no such transaction), keeping the payment's own later time.
    const real = tg.pay({ to: ADDRESSES[0], amount: payable, blockTimestamp: t.clock.now() + 20 * SECOND });
    t.clock.advance(2 * MINUTE);
    const { id: _id, blockNumber: _n, ...info } = tg.blockInfos(real.blockNumber).find((i) => i.id === real.txId)!;
    assert.ok(Number(info.blockTimeStamp) > cursor.cursor_time);
    const forged = tg.injectInfo({ info, block: cursor.cursor_block - 1 });
    assert.equal(forged.blockNumber, cursor.cursor_block - 1);

    // Another instance: the same database, a chain runtime that never scanned (no accepted head in memory).
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0, timeoutMs: 2000 });
    const res = await t.client({ origin: null }).post(`/checkout/${inv.checkout_token}/transaction`, { tx_hash: forged.txId });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.claim.outcome, 'deferred');
    assert.equal(res.body.invoice.status, 'pending');
    assert.equal((await transfersOf(t)).length, 0, 'nothing recorded from a block time the scanner contradicts');

    // The real transaction, named in the same instance, is recorded.
    const ok = await t.client({ origin: null }).post(`/checkout/${inv.checkout_token}/transaction`, { tx_hash: real.txId });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.claim.outcome, 'recorded');
  } finally {
    await h.close();
  }
});
