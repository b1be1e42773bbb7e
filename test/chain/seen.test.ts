/**
 * Seen, then final, on TRON, against the simulated node: a payment in the latest block is seen
 * within one poll (invoice.payment_seen, `payment_seen`), stays pending, confirms once its block
 * solidifies; one whose block is replaced before solidifying is told as dropped. The latest blocks
 * cost one request a poll, only while an invoice is open.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SECOND } from '../../src/lib/clock.js';
import { runOnce } from '../../src/chain/chain.worker.js';
import { eventsOf, pass, startChainHarness, type ChainHarness } from '../helpers/chain-fixtures.js';
import { ADDRESSES, createInvoice, micro, shop } from '../helpers/shop.js';

/** Moves the clock in one-second steps, running the watcher whenever it would run. */
async function run(h: ChainHarness, ms: number): Promise<void> {
  for (let i = 0; i < ms / SECOND; i++) {
    h.t.clock.advance(SECOND);
    while (await runOnce(h.t.deps));
  }
}

const types = async (h: ChainHarness, id: string) => (await eventsOf(h.t, id)).map((e) => e.type).filter((t) => t.startsWith('invoice.'));

test('TRON: a payment is seen within one poll, stays pending, confirms when solidified; a dropped one is told', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0]);
    const inv = (await createInvoice(a.client, { amount: '12', wallet_id: a.walletId })).body.invoice;
    await pass(h, 5 * SECOND);
    await run(h, 10 * SECOND);
    tg.resetCounts();

    const paid = tg.pay({ to: ADDRESSES[0], amount: micro(inv.payable_amount), blockTimestamp: t.clock.now() + 1 });
    await run(h, 6 * SECOND);
    assert.ok(t.clock.now() - paid.blockTimestamp <= 5 * SECOND);
    let got = (await a.client.get(`/invoices/${inv.id}`)).body.invoice;
    assert.equal(got.status, 'pending', 'seen is not final');
    assert.equal(got.payment_seen?.tx_hash, paid.txId);
    assert.equal(got.payment_seen?.network, t.config.network.id);
    assert.ok(Date.parse(got.payment_seen.expected_final_at) > t.clock.now());
    assert.deepEqual(await types(h, inv.id), ['invoice.created', 'invoice.payment_seen']);
    assert.ok(tg.count('wallet_blockrange') >= 1 && tg.count('wallet_blockrange') <= 2, `${tg.count('wallet_blockrange')} latest reads in 6 s`);

    await run(h, 30 * SECOND);
    assert.equal((await a.client.get(`/invoices/${inv.id}`)).body.invoice.status, 'pending', 'still above the solidified head');
    await run(h, 40 * SECOND);
    got = (await a.client.get(`/invoices/${inv.id}`)).body.invoice;
    assert.equal(got.status, 'confirmed', 'the solidified read confirms it');
    assert.equal(got.tx_hash, paid.txId);
    assert.deepEqual(await types(h, inv.id), ['invoice.created', 'invoice.payment_seen', 'invoice.confirmed']);

    // Another payment whose block leaves the chain before solidifying.
    const inv2 = (await createInvoice(a.client, { amount: '13', wallet_id: a.walletId })).body.invoice;
    const lost = tg.pay({ to: ADDRESSES[0], amount: micro(inv2.payable_amount), blockTimestamp: t.clock.now() + 1 });
    await run(h, 6 * SECOND);
    assert.equal((await a.client.get(`/invoices/${inv2.id}`)).body.invoice.payment_seen?.tx_hash, lost.txId);
    assert.ok(tg.drop(lost.txId));
    await run(h, 30 * SECOND);
    assert.equal((await eventsOf(t, inv2.id)).filter((e) => e.type === 'invoice.payment_dropped').length, 0, 'not before its height solidifies');
    // Its height solidifies without it: the solidified read does not hold it.
    await run(h, 40 * SECOND);
    got = (await a.client.get(`/invoices/${inv2.id}`)).body.invoice;
    assert.equal(got.payment_seen, null);
    assert.equal(got.status, 'pending');
    const events = await eventsOf(t, inv2.id);
    const dropped = events.find((e) => e.type === 'invoice.payment_dropped');
    assert.ok(dropped, JSON.stringify(events.map((e) => e.type)));
    await run(h, 30 * SECOND);
    assert.equal((await a.client.get(`/invoices/${inv2.id}`)).body.invoice.status, 'pending', 'a dropped payment never confirms');
    assert.equal((await eventsOf(t, inv2.id)).filter((e) => e.type === 'invoice.payment_dropped').length, 1, 'told once');

    // No invoice open: no latest read.
    await a.client.post(`/invoices/${inv2.id}/cancel`, {});
    await run(h, 10 * SECOND);
    tg.resetCounts();
    await run(h, 20 * SECOND);
    assert.equal(tg.count('wallet_blockrange'), 0);
  } finally {
    await h.close();
  }
});

test('TRON seen reads: only a successful transfer or transferFrom call to the network USDT contract, to a watched address, is seen', async () => {
  const { seenInBlock } = await import('../../src/chain/seen-read.js');
  const { findNetwork } = await import('../../src/chains/networks.js');
  const { tronAddressToHex } = await import('../../src/lib/tron.js');
  const network = findNetwork('tron-mainnet')!;
  const usdt = tronAddressToHex(network.tokens[0]!.contract)!.toLowerCase();
  const to = tronAddressToHex(ADDRESSES[0])!.toLowerCase();
  const word = (hex: string) => hex.padStart(64, '0');
  const tx = (id: string, contract: string, data: string, ret = 'SUCCESS', type = 'TriggerSmartContract') => ({
    txID: id.repeat(64),
    ret: [{ contractRet: ret }],
    raw_data: { contract: [{ type, parameter: { value: { contract_address: contract, owner_address: `41${'1'.repeat(40)}`, data } } }] },
  });
  const pay = `a9059cbb${word(to.slice(2))}${word('b71b00')}`;
  const block = {
    number: 70_000_000,
    id: 'ab'.repeat(32),
    parent: 'cd'.repeat(32),
    timestamp: 1_738_601_505_000,
    txs: [
      tx('1', usdt, pay),
      tx('2', usdt, pay, 'REVERT'),
      tx('3', `41${'9'.repeat(40)}`, pay),
      tx('4', usdt, `23b872dd${word('2'.repeat(40))}${word(to.slice(2))}${word('f4240')}`),
      tx('5', usdt, `a9059cbb${word(to.slice(2))}`),
      tx('6', usdt, pay, 'SUCCESS', 'TransferContract'),
      tx('7', usdt, `a9059cbb${word(`41${'3'.repeat(40)}`)}${word('1')}`),
    ],
  };
  const seen = seenInBlock(network, block, new Map([[to.slice(2), ADDRESSES[0]]]));
  assert.deepEqual(
    seen.map((s) => [s.txHash[0], s.to, s.raw, s.logIndex, s.finality, s.blockHash]),
    [
      ['1', ADDRESSES[0], 12_000_000n, 0, 'seen', block.id],
      ['4', ADDRESSES[0], 1_000_000n, 0, 'seen', block.id],
    ],
  );
});

test('TRON: a seen payment whose block is replaced is told as dropped at the next poll, before its height solidifies', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0]);
    const inv = (await createInvoice(a.client, { amount: '14', wallet_id: a.walletId })).body.invoice;
    await pass(h, 5 * SECOND);
    await run(h, 10 * SECOND);
    const { SEEN_POLL_MS } = await import('../../src/chain/seen-read.js');
    const at = async (ms: number) => {
      t.clock.advance(ms - t.clock.now());
      while (await runOnce(t.deps));
    };
    // The newest block at the next poll: that poll reads it, not yet its child.
    const next = t.deps.chain.seen.readAt + SEEN_POLL_MS;
    const first = tg.blockAt(next);
    const n = first.timestamp > next ? first.number - 1 : first.number;
    const paid = tg.transfer({ to: ADDRESSES[0], amount: micro(inv.payable_amount), block: n });
    await at(next);
    assert.equal((await a.client.get(`/invoices/${inv.id}`)).body.invoice.payment_seen?.tx_hash, paid.txId);
    assert.equal(t.deps.chain.seen.next, n + 1);
    assert.ok(tg.drop(paid.txId));
    await at(next + SEEN_POLL_MS);
    assert.ok(tg.solidHead().number < n, 'its height is not solidified yet');
    assert.deepEqual(await types(h, inv.id), ['invoice.created', 'invoice.payment_seen', 'invoice.payment_dropped']);
    assert.equal((await a.client.get(`/invoices/${inv.id}`)).body.invoice.payment_seen, null);
  } finally {
    await h.close();
  }
});
