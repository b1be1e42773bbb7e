/**
 * The known attacks on TRC20 payment watchers, as block contents served by the simulated node in
 * java-tron's shapes: none of them confirms an invoice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { tronAddressToHex } from '../../src/lib/tron.js';
import { USDT_CONTRACT } from '../helpers/tron-samples.js';
import { eventsOf, getInvoice, insertInvoice, pass, startChainHarness, transfersOf, type ChainHarness } from '../helpers/chain-fixtures.js';
import {
  APPROVAL_TOPIC,
  FAKE_USDT_CONTRACTS,
  LOOKALIKE_PAYER,
  randomAddress,
  SAMPLE_PAYER,
  successReceipt,
  transferLog,
  type ReceiptLog,
} from '../helpers/tron-samples.js';

const AMOUNT = 41_677_389n;

/** An invoice on a fresh address, a harness, and the time the invoice was created. */
async function setup() {
  const h = await startChainHarness();
  const address = randomAddress();
  const start = h.t.clock.now();
  const inv = await insertInvoice(h.t, { address, amount: AMOUNT, expiresAt: start + 30 * MINUTE });
  return { h, address, start, inv };
}

/** A transaction with these logs (a successful receipt unless `extra` says otherwise) in the first block at or after `at`. */
function inject(h: ChainHarness, at: number, logs: ReceiptLog[], extra: Record<string, unknown> = {}) {
  const { id: _id, blockNumber: _n, blockTimeStamp: _t, ...info } = successReceipt({ txId: 'x', blockTimestamp: at, logs });
  return h.tg.injectInfo({ at, info: { ...info, ...extra } });
}

async function assertNotConfirmed(h: ChainHarness, invoiceId: string): Promise<void> {
  const inv = await getInvoice(h.t, invoiceId);
  assert.equal(inv.status, 'pending');
  assert.equal(inv.txHash, null);
  assert.deepEqual(await eventsOf(h.t, invoiceId), []);
}

test('a fake token with the USDT symbol and name never confirms (its log names the fake contract), nor does a fake log in a tx calling USDT', async () => {
  const { h, address, start, inv } = await setup();
  try {
    for (const fake of FAKE_USDT_CONTRACTS) h.tg.transfer({ to: address, amount: AMOUNT, contract: fake, at: start + MINUTE });
    // The transaction calls the USDT contract (contract_address) but the log comes from another one.
    inject(h, start + MINUTE, [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT, contract: FAKE_USDT_CONTRACTS[0]! })], {
      contract_address: tronAddressToHex(USDT_CONTRACT),
    });
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.deepEqual(await transfersOf(h.t), []);
  } finally {
    await h.close();
  }
});

test('zero-value poisoning from a look-alike address never confirms; it is recorded as unmatched dust', async () => {
  const { h, address, start, inv } = await setup();
  try {
    const p = h.tg.transfer({ to: address, amount: 0n, from: LOOKALIKE_PAYER, at: start + MINUTE });
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    const rows = await transfersOf(h.t);
    assert.deepEqual(
      rows.map((r) => [r.tx_hash, r.amount, r.kind, r.invoice_id, r.from_address]),
      [[p.txId, 0, 'unmatched', null, LOOKALIKE_PAYER]],
    );
  } finally {
    await h.close();
  }
});

test('a failed transaction never confirms, even with the exact amount, even when its info still carries a log', async () => {
  const { h, address, start, inv } = await setup();
  try {
    h.tg.transfer({ to: address, amount: AMOUNT, result: 'FAILED', at: start + MINUTE });
    h.tg.transfer({ to: address, amount: AMOUNT, result: 'REVERT', at: start + MINUTE });
    // A REVERT whose info (wrongly) carries the Transfer log: result FAILED wins.
    inject(h, start + MINUTE, [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT })], { receipt: { result: 'REVERT' }, result: 'FAILED' });
    // SUCCESS in receipt but FAILED overall, and a receipt with no result at all.
    inject(h, start + MINUTE, [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT })], { result: 'FAILED' });
    inject(h, start + MINUTE, [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT })], { receipt: { net_usage: 345 } });
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.deepEqual(await transfersOf(h.t), []);
    assert.match(h.t.logText(), /execution REVERT/);
    assert.match(h.t.logText(), /execution without result/);
  } finally {
    await h.close();
  }
});

test('a transfer whose log pays another recipient never confirms', async () => {
  const { h, address, start, inv } = await setup();
  try {
    const elsewhere = randomAddress();
    h.tg.transfer({ to: elsewhere, amount: AMOUNT, at: start + MINUTE });
    // From the watched address to someone else (the address in topic 1, not topic 2).
    h.tg.transfer({ to: elsewhere, from: address, amount: AMOUNT, at: start + MINUTE });
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.deepEqual(await transfersOf(h.t), []);
  } finally {
    await h.close();
  }
});

test('an amount off by one micro-unit never confirms and is recorded as unmatched', async () => {
  const { h, address, start, inv } = await setup();
  try {
    const low = h.tg.transfer({ to: address, amount: AMOUNT - 1n, at: start + MINUTE });
    const high = h.tg.transfer({ to: address, amount: AMOUNT + 1n, at: start + MINUTE + 3 * SECOND });
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    const rows = await transfersOf(h.t);
    assert.deepEqual(
      rows.map((r) => [r.tx_hash, r.amount, r.kind, r.invoice_id]),
      [
        [low.txId, Number(AMOUNT - 1n), 'unmatched', null],
        [high.txId, Number(AMOUNT + 1n), 'unmatched', null],
      ],
    );
  } finally {
    await h.close();
  }
});

test('a block time outside [created_at, expires_at] never confirms: before creation is unmatched, after expiry late', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const earlier = await insertInvoice(t, { address, amount: 1_000_000n, createdAt: start - 10 * MINUTE, expiresAt: start + 60 * MINUTE });
    const inv = await insertInvoice(t, { address, amount: AMOUNT, createdAt: start + 2 * MINUTE, expiresAt: start + 10 * MINUTE });
    const before = tg.transfer({ to: address, amount: AMOUNT, at: start + MINUTE });
    // The block's time is the authority; whatever the sender put in raw_data.timestamp.
    const after = tg.transfer({ to: address, amount: AMOUNT, at: start + 10 * MINUTE + 1 });
    await pass(h, 20 * MINUTE);
    const now = await getInvoice(t, inv.id);
    assert.notEqual(now.status, 'confirmed');
    assert.equal(now.txHash, null);
    const rows = await transfersOf(t);
    assert.deepEqual(
      rows.map((r) => [r.tx_hash, r.kind, r.invoice_id]),
      [
        [before.txId, 'unmatched', null],
        [after.txId, 'late', inv.id],
      ],
    );
    assert.equal((await getInvoice(t, earlier.id)).status, 'pending');
  } finally {
    await h.close();
  }
});

test('Approval logs, and Transfer logs with 2 or 4 topics, never confirm', async () => {
  const { h, address, start, inv } = await setup();
  try {
    inject(h, start + MINUTE, [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT, topic: APPROVAL_TOPIC })]);
    const log = transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT });
    inject(h, start + MINUTE, [{ ...log, topics: [...log.topics, log.topics[2]!] }]);
    inject(h, start + MINUTE, [{ ...log, topics: [log.topics[0]!, log.topics[2]!] }]);
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.deepEqual(await transfersOf(h.t), []);
  } finally {
    await h.close();
  }
});

test('the USDT log address is matched with or without the 41 prefix, in any case', async () => {
  const { h, address, start, inv } = await setup();
  try {
    const log = transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT });
    const p = inject(h, start + MINUTE, [{ ...log, address: `41${log.address}`.toUpperCase() }]);
    await pass(h, 5 * MINUTE);
    assert.equal((await getInvoice(h.t, inv.id)).txHash, p.txId);
  } finally {
    await h.close();
  }
});

test('two logs in one transaction: each log pays at most one invoice; the same amount twice confirms once', async () => {
  const h = await startChainHarness();
  try {
    const { t } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const a = await insertInvoice(t, { address, amount: 2_000_001n });
    const b = await insertInvoice(t, { address, amount: 2_000_002n });
    const batch = inject(h, start + MINUTE, [
      transferLog({ from: SAMPLE_PAYER, to: randomAddress(), amount: 2_000_001n }),
      transferLog({ from: SAMPLE_PAYER, to: address, amount: 2_000_001n }),
      transferLog({ from: SAMPLE_PAYER, to: address, amount: 2_000_002n }),
      transferLog({ from: SAMPLE_PAYER, to: address, amount: 2_000_001n }),
    ]);
    await pass(h, 5 * MINUTE);
    await pass(h);
    assert.equal((await getInvoice(t, a.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, b.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, a.id)).txHash, batch.txId);
    assert.equal((await getInvoice(t, b.id)).txHash, batch.txId);
    const rows = await transfersOf(t);
    assert.deepEqual(
      rows.map((r) => [r.log_index, r.kind, r.invoice_id]),
      [
        [1, 'confirmed', a.id],
        [2, 'confirmed', b.id],
        [3, 'late', a.id],
      ],
    );
    // Both in the scanner's one transaction (the same created_at).
    const ev = await eventsOf(t, a.id);
    assert.deepEqual(ev.map((e) => e.type).sort(), ['invoice.confirmed', 'invoice.late_payment']);
    assert.equal((ev.find((e) => e.type === 'invoice.confirmed')!.data.transaction as { log_index: number }).log_index, 1);
    assert.equal((ev.find((e) => e.type === 'invoice.late_payment')!.data.transaction as { log_index: number }).log_index, 3);
  } finally {
    await h.close();
  }
});

test('a block above the solidified head is never read; its payment confirms once the block solidifies', async () => {
  const { h, address, inv } = await setup();
  try {
    await pass(h);
    const p = h.tg.transfer({ to: address, amount: AMOUNT, at: h.t.clock.now() + 30 * SECOND });
    // The full node already has the block; the scanner only reads solidified ones.
    for (let i = 0; i < 10; i++) await pass(h, 3 * SECOND);
    assert.ok(h.t.clock.now() < h.tg.blockTime(p.blockNumber) + 57 * SECOND);
    await assertNotConfirmed(h, inv.id);
    assert.ok(h.tg.requests.every((r) => r.endpoint !== 'blockinfo' || (JSON.parse(r.body) as { num: number }).num <= h.tg.solidHead().number));
    await pass(h, MINUTE);
    assert.equal((await getInvoice(h.t, inv.id)).txHash, p.txId);
  } finally {
    await h.close();
  }
});

test('infos naming another block, a malformed id, or a wrong shape are refused: nothing recorded, the block is read again', async () => {
  const { h, address, start, inv } = await setup();
  try {
    await pass(h);
    const p = h.tg.transfer({ to: address, amount: AMOUNT, at: start + 30 * SECOND });
    h.tg.fail('blockinfo', { raw: JSON.stringify([{ ...h.tg.blockInfos(p.blockNumber)[0], blockNumber: p.blockNumber + 1 }]) });
    h.tg.fail('blockinfo', { raw: '[{"id": 7}]' });
    h.tg.fail('blockinfo', { raw: '{"Error": "class java.lang.NullPointerException : null"}' });
    await pass(h, 2 * MINUTE);
    assert.equal((await getInvoice(h.t, inv.id)).status, 'pending');
    for (let i = 0; i < 4; i++) await pass(h, MINUTE);
    assert.equal((await getInvoice(h.t, inv.id)).txHash, p.txId);
    assert.equal((await transfersOf(h.t)).length, 1);
    assert.match(h.t.logText(), /transaction infos of another block/);
  } finally {
    await h.close();
  }
});
