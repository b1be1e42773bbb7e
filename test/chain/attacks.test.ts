/**
 * The attacks of docs/payments.md: each attack reaches the watcher through real-shaped stand-in answers
 * and never confirms an invoice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOnce } from '../../src/chain/chain.worker.js';
import { findCursor } from '../../src/chain/chain.repo.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { eventsOf, getInvoice, insertInvoice, startChainHarness, transfersOf, type ChainHarness } from '../helpers/chain-fixtures.js';
import { APPROVAL_TOPIC, blockNumberAt, FAKE_USDT_CONTRACTS, LOOKALIKE_PAYER, newTxId, randomAddress, SAMPLE_PAYER, successReceipt, trc20Record, transferLog } from '../helpers/tron-samples.js';

const AMOUNT = 41_677_389n;

async function pass(h: ChainHarness, ms = 5 * SECOND): Promise<void> {
  h.t.clock.advance(ms);
  await runOnce(h.t.deps);
}

/** An invoice on a fresh address, a harness, and the time the invoice was created. */
async function setup() {
  const h = await startChainHarness();
  const address = randomAddress();
  const start = h.t.clock.now();
  const inv = await insertInvoice(h.t, { address, amount: AMOUNT, expiresAt: start + 30 * MINUTE });
  return { h, address, start, inv };
}

async function assertNotConfirmed(h: ChainHarness, invoiceId: string): Promise<void> {
  const inv = await getInvoice(h.t, invoiceId);
  assert.equal(inv.status, 'pending');
  assert.equal(inv.txHash, null);
  assert.deepEqual(await eventsOf(h.t, invoiceId), []);
}

test('a fake token with the USDT symbol and name never confirms (record and receipt both name the fake contract)', async () => {
  const { h, address, start, inv } = await setup();
  try {
    for (const fake of FAKE_USDT_CONTRACTS) {
      const txId = newTxId();
      const at = start + MINUTE;
      h.tg.addRecord(address, trc20Record({ txId, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: at, contract: fake, symbol: 'USDT', name: 'Tether USD' }));
      h.tg.receipts.set(txId, successReceipt({ txId, blockTimestamp: at, contract: fake, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT, contract: fake })] }));
    }
    // The homoglyph symbol of the sanctuary contract, too.
    const homoglyph = newTxId();
    h.tg.addRecord(address, trc20Record({ txId: homoglyph, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + MINUTE, contract: FAKE_USDT_CONTRACTS[2]!, symbol: 'ꓴSD𝖳' }));
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.equal(h.tg.count('receipt'), 0, 'fake-token records are not even worth a receipt read');
    assert.deepEqual(await transfersOf(h.t), []);
  } finally {
    await h.close();
  }
});

test('a record that claims USDT but whose solidified receipt log comes from another contract never confirms', async () => {
  const { h, address, start, inv } = await setup();
  try {
    const txId = newTxId();
    h.tg.addRecord(address, trc20Record({ txId, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + MINUTE }));
    h.tg.receipts.set(txId, successReceipt({ txId, blockTimestamp: start + MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT, contract: FAKE_USDT_CONTRACTS[0]! })] }));
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.equal(h.tg.count('receipt'), 1);
    assert.match(h.t.logText(), /no USDT Transfer log to this address/);
  } finally {
    await h.close();
  }
});

test('zero-value poisoning from a look-alike address is ignored', async () => {
  const { h, address, start, inv } = await setup();
  try {
    h.tg.pay({ to: address, amount: 0n, from: LOOKALIKE_PAYER, blockTimestamp: start + MINUTE });
    // Also a receipt that hides a zero-value log behind a record claiming the full amount.
    const txId = newTxId();
    h.tg.addRecord(address, trc20Record({ txId, from: LOOKALIKE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + MINUTE }));
    h.tg.receipts.set(txId, successReceipt({ txId, blockTimestamp: start + MINUTE, logs: [transferLog({ from: LOOKALIKE_PAYER, to: address, amount: 0n })] }));
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.equal(h.tg.count('receipt'), 1, 'the zero-value record itself is dropped before any receipt read');
    assert.deepEqual(await transfersOf(h.t), []);
  } finally {
    await h.close();
  }
});

test('a failed (OUT_OF_ENERGY) transaction never confirms, even listed with the exact amount', async () => {
  const { h, address, start, inv } = await setup();
  try {
    h.tg.pay({ to: address, amount: AMOUNT, blockTimestamp: start + MINUTE, receipt: 'failed' });
    // A REVERT whose receipt still (wrongly) carries a log: result FAILED wins.
    const reverted = newTxId();
    h.tg.addRecord(address, trc20Record({ txId: reverted, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + MINUTE }));
    h.tg.receipts.set(reverted, {
      ...successReceipt({ txId: reverted, blockTimestamp: start + MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT })] }),
      receipt: { result: 'REVERT' },
      result: 'FAILED',
      resMessage: '524556455254206f70636f6465206578656375746564',
    });
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.match(h.t.logText(), /execution OUT_OF_ENERGY/);
    assert.match(h.t.logText(), /execution REVERT/);
  } finally {
    await h.close();
  }
});

test('a transfer whose log pays another recipient never confirms', async () => {
  const { h, address, start, inv } = await setup();
  try {
    const elsewhere = randomAddress();
    const txId = newTxId();
    h.tg.addRecord(address, trc20Record({ txId, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + MINUTE }));
    h.tg.receipts.set(txId, successReceipt({ txId, blockTimestamp: start + MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: elsewhere, amount: AMOUNT })] }));
    // And a record listed under our address but naming another recipient.
    h.tg.addRecord(address, trc20Record({ txId: newTxId(), from: SAMPLE_PAYER, to: elsewhere, amount: AMOUNT, blockTimestamp: start + MINUTE }));
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
    const low = h.tg.pay({ to: address, amount: AMOUNT - 1n, blockTimestamp: start + MINUTE });
    const high = h.tg.pay({ to: address, amount: AMOUNT + 1n, blockTimestamp: start + MINUTE + 3 * SECOND });
    // A record that claims the exact amount while its log carries one micro-unit less.
    const lying = newTxId();
    h.tg.addRecord(address, trc20Record({ txId: lying, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + 2 * MINUTE }));
    h.tg.receipts.set(lying, successReceipt({ txId: lying, blockTimestamp: start + 2 * MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT - 1n })] }));
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    const rows = await transfersOf(h.t);
    assert.deepEqual(rows.map((r) => [r.tx_hash, r.amount, r.kind, r.invoice_id]), [
      [low.txId, Number(AMOUNT - 1n), 'unmatched', null],
      [high.txId, Number(AMOUNT + 1n), 'unmatched', null],
      [lying, Number(AMOUNT - 1n), 'unmatched', null],
    ]);
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
    // The cursor already covers the time before this invoice (another invoice watched the address).
    const earlier = await insertInvoice(t, { address, amount: 1_000_000n, createdAt: start - 10 * MINUTE, expiresAt: start + 60 * MINUTE });
    const inv = await insertInvoice(t, { address, amount: AMOUNT, createdAt: start + 2 * MINUTE, expiresAt: start + 10 * MINUTE });
    const before = tg.pay({ to: address, amount: AMOUNT, blockTimestamp: start + MINUTE });
    // The receipt is the authority on block time: the record claims in-window, the receipt says after expiry.
    const txId = newTxId();
    tg.addRecord(address, trc20Record({ txId, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + 5 * MINUTE }));
    tg.receipts.set(txId, successReceipt({ txId, blockTimestamp: start + 11 * MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT })] }));
    await pass(h, 20 * MINUTE);
    const after = await getInvoice(t, inv.id);
    assert.notEqual(after.status, 'confirmed');
    assert.equal(after.txHash, null);
    const rows = await transfersOf(t);
    assert.deepEqual(
      rows.map((r) => [r.tx_hash, r.kind, r.invoice_id]),
      [
        [before.txId, 'unmatched', null],
        [txId, 'late', inv.id],
      ],
    );
    assert.equal((await getInvoice(t, earlier.id)).status, 'pending');
  } finally {
    await h.close();
  }
});

test('Approval records and Approval logs never confirm', async () => {
  const { h, address, start, inv } = await setup();
  try {
    const txId = newTxId();
    h.tg.addRecord(address, trc20Record({ txId, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + MINUTE, type: 'Approval' }));
    h.tg.receipts.set(txId, successReceipt({ txId, blockTimestamp: start + MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT, topic: APPROVAL_TOPIC })] }));
    // A Transfer record whose receipt holds only an Approval log.
    const other = newTxId();
    h.tg.addRecord(address, trc20Record({ txId: other, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + MINUTE }));
    h.tg.receipts.set(other, successReceipt({ txId: other, blockTimestamp: start + MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT, topic: APPROVAL_TOPIC })] }));
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.equal(h.tg.count('receipt'), 1);
  } finally {
    await h.close();
  }
});

test('two logs in one transaction: each log pays at most one invoice; the same amount twice confirms once', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const a = await insertInvoice(t, { address, amount: 2_000_001n });
    const b = await insertInvoice(t, { address, amount: 2_000_002n });
    const batch = newTxId();
    const at = start + MINUTE;
    const logs = [
      transferLog({ from: SAMPLE_PAYER, to: randomAddress(), amount: 2_000_001n }),
      transferLog({ from: SAMPLE_PAYER, to: address, amount: 2_000_001n }),
      transferLog({ from: SAMPLE_PAYER, to: address, amount: 2_000_002n }),
      transferLog({ from: SAMPLE_PAYER, to: address, amount: 2_000_001n }),
    ];
    // TronGrid lists one record per log (and no log index).
    for (const amount of [2_000_001n, 2_000_002n, 2_000_001n]) tg.addRecord(address, trc20Record({ txId: batch, from: SAMPLE_PAYER, to: address, amount, blockTimestamp: at }));
    tg.receipts.set(batch, successReceipt({ txId: batch, blockTimestamp: at, logs }));
    await pass(h, 5 * MINUTE);
    await pass(h);
    assert.equal((await getInvoice(t, a.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, b.id)).status, 'confirmed');
    assert.equal((await getInvoice(t, a.id)).txHash, batch);
    assert.equal((await getInvoice(t, b.id)).txHash, batch);
    const rows = await transfersOf(t);
    assert.deepEqual(rows.map((r) => [r.log_index, r.kind, r.invoice_id]), [
      [1, 'confirmed', a.id],
      [2, 'confirmed', b.id],
      [3, 'late', a.id],
    ]);
    assert.equal(tg.count('receipt'), 1);
    const ev = await eventsOf(t, a.id);
    assert.equal(ev.length, 1);
    assert.equal((ev[0]!.data.transaction as { log_index: number }).log_index, 1);
  } finally {
    await h.close();
  }
});

test('an unsolidified receipt never confirms and holds coverage (and expiry) back until it solidifies', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const address = randomAddress();
    const start = t.clock.now();
    const inv = await insertInvoice(t, { address, amount: AMOUNT, expiresAt: start + 5 * MINUTE });
    const paid = tg.pay({ to: address, amount: AMOUNT, blockTimestamp: start + 4 * MINUTE, receipt: 'empty' });
    // The full node already has it; the solidity node answers {}.
    tg.fullNodeReceipts.set(paid.txId, successReceipt({ txId: paid.txId, blockTimestamp: start + 4 * MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT })] }));
    await pass(h, 20 * MINUTE);
    await pass(h);
    await assertNotConfirmed(h, inv.id);
    assert.ok((await findCursor(t.deps.db, address))! < start + 4 * MINUTE, 'coverage stops before the unsettled record');
    assert.equal(h.t.logs.filter((l) => l.msg === 'chain: transfer not settled yet; will retry').length, 1, 'logged once');

    tg.receipts.set(paid.txId, tg.fullNodeReceipts.get(paid.txId)!);
    await pass(h);
    assert.equal((await getInvoice(t, inv.id)).status, 'confirmed');
  } finally {
    await h.close();
  }
});

test('a receipt above the solidified head, or of another transaction, never confirms; the head race settles later', async () => {
  const { h, address, start, inv } = await setup();
  try {
    const swapped = newTxId();
    h.tg.addRecord(address, trc20Record({ txId: swapped, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: start + MINUTE }));
    h.tg.receipts.set(swapped, successReceipt({ txId: newTxId(), blockTimestamp: start + MINUTE, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT })] }));
    await pass(h, 5 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.match(h.t.logText(), /receipt of another transaction/);

    // The head was read just before a block solidified: its receipt is above the head we know.
    h.tg.receipts.delete(swapped);
    const ahead = newTxId();
    const at = start + 6 * MINUTE;
    h.tg.solidHead = { number: blockNumberAt(at) - 1, timestamp: at - 3 * SECOND };
    h.tg.addRecord(address, trc20Record({ txId: ahead, from: SAMPLE_PAYER, to: address, amount: AMOUNT, blockTimestamp: at }));
    h.tg.receipts.set(ahead, successReceipt({ txId: ahead, blockTimestamp: at, logs: [transferLog({ from: SAMPLE_PAYER, to: address, amount: AMOUNT })] }));
    await pass(h, 2 * MINUTE);
    await assertNotConfirmed(h, inv.id);
    assert.match(h.t.logText(), /block above the solidified head/);
    h.tg.solidHead = undefined;
    await pass(h);
    assert.equal((await getInvoice(h.t, inv.id)).status, 'confirmed');
    assert.equal((await getInvoice(h.t, inv.id)).txHash, ahead);
  } finally {
    await h.close();
  }
});

test('a rejected receipt is read once, though its record is listed again while coverage trails the head', async () => {
  const { h, address, inv } = await setup();
  try {
    h.t.clock.advance(10 * MINUTE);
    const at = h.tg.currentSolidHead().timestamp - 9 * SECOND;
    h.tg.pay({ to: address, amount: AMOUNT, blockTimestamp: at, receipt: 'failed' });
    for (let i = 0; i < 6; i++) await pass(h);
    await assertNotConfirmed(h, inv.id);
    assert.ok(h.tg.count('trc20') >= 6);
    assert.ok(h.tg.requests.filter((r) => r.endpoint === 'trc20').filter((r) => Number(r.query.get('min_timestamp')) <= at).length >= 6, 'listed again');
    assert.equal(h.tg.count('receipt'), 1);
    assert.equal(h.t.logs.filter((l) => l.msg === 'chain: transfer rejected').length, 1);
  } finally {
    await h.close();
  }
});
