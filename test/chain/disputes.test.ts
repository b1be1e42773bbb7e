/**
 * Durable disputes (migration 0024): a block the providers do not agree on is held in
 * chain_disputes, shown by /health, the metrics and `gatewayd chain status` (from the database,
 * without the server), mailed to the support staff once, kept across a restart, and resolved when
 * the providers agree again. And the light cross-check's own paths (tron.cross_check = "count"):
 * a full read that alters a real payment keeps the count, and is caught because a paying block is
 * read in full by the second provider; a forged payment is caught from either side; an omission
 * padded with a made-up transaction is caught with "ids" (the documented limit of "count").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChainStatus } from '../../src/cli/chain.js';
import { createChainRuntime } from '../../src/chain/chain.worker.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { getInvoice, insertInvoice, transfersOf } from '../helpers/chain-fixtures.js';
import { forgedTransfer, untilSolid, world, type World } from '../helpers/hostile-provider.js';
import { randomAddress } from '../helpers/tron-samples.js';
import { startSmtp } from '../helpers/smtp.js';

/** A time at or after `from` whose block number has the parity asked (the heavy read takes turns by block number). */
function timeOfParity(w: World, from: number, even: boolean): number {
  let at = from;
  while ((w.node.blockAt(at).number % 2 === 0) !== even) at += 3 * SECOND;
  return at;
}

async function disputeRows(w: World) {
  return w.t.deps.db.selectFrom('chain_disputes').selectAll().execute();
}

test('a dispute is durable: shown in /health, the metrics and chain status (without the server), mailed once, kept across a restart, resolved when the providers agree', async () => {
  const smtp = await startSmtp();
  const w = await world(['liar', 'node'], { config: { email: smtp.email, support: { staff_emails: ['ops@example.test'] } } });
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 9_600_001n, expiresAt: start + 3 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_600_001n, at: start + 30 * SECOND });
    // Left out of its block and denied by id: the providers disagree even by id.
    w.liar.set({ omit: new Set([p.txId]), deny: new Set([p.txId]) });
    await untilSolid(w, p.blockTimestamp, 4 * MINUTE);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'pending', 'neither confirmed on one word nor expired');

    let h = await w.health();
    assert.equal(h.watcher.state, 'running', 'a dispute holds the invoices of its block, not the watcher');
    assert.equal(h.live_payments_enabled, true);
    assert.equal(h.watcher.scan.disputed_blocks, 1);
    assert.equal(h.watcher.disputes.length, 1);
    const d = h.watcher.disputes[0];
    assert.equal(d.block, p.blockNumber);
    assert.match(d.reason, new RegExp(`block ${p.blockNumber}`));
    assert.equal(d.tx_hash, p.txId, 'the omitted payment is named');
    const mail = await smtp.waitFor((m) => m.to.includes('ops@example.test'));
    assert.match(mail.subject, new RegExp(`block ${p.blockNumber} is disputed`));
    let rows = await disputeRows(w);
    assert.equal(rows.length, 1);
    assert.ok(rows[0]!.notified_at, 'the mail is recorded on the dispute');
    assert.ok(rows[0]!.last_seen_at > rows[0]!.first_seen_at, 'seen again in later passes (one row)');
    const metrics = (await w.t.deps.metrics.render()).body;
    assert.match(metrics, /gatewayd_chain_disputed_blocks 1/);

    // chain status reads the disputes from the database: shown although no server answers.
    const lines: string[] = [];
    assert.equal(await runChainStatus({ ...w.t.config, server: { ...w.t.config.server, listen: '127.0.0.1:9' } }, (l) => lines.push(l)), 0);
    const text = lines.join('\n');
    assert.match(text, /disputes: 1 open/);
    assert.match(text, new RegExp(`block ${p.blockNumber} \\(transaction ${p.txId}\\) since ${d.since}`));
    assert.match(text, /staff mailed/);

    // A restart: the scanner's memory is gone, the dispute is not. Still held, no second mail.
    w.t.deps.chain = createChainRuntime(w.t.config, { timeoutMs: 2000, maxRequestsPerSecond: 0 });
    h = await w.health();
    assert.equal(h.watcher.disputes.length, 1, 'shown at once after the restart, before any pass');
    for (let i = 0; i < 4; i++) await w.pass();
    h = await w.health();
    assert.equal(h.watcher.disputes.length, 1);
    assert.equal(h.watcher.disputes[0].since, d.since, 'the same dispute');
    assert.equal((await getInvoice(w.t, inv.id)).status, 'pending');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(smtp.messages.length, 1, 'one mail a dispute, not one a pass or a restart');

    // The liar stops omitting: the held block reads consistently, the dispute is resolved, the invoice confirms.
    w.liar.set({});
    for (let i = 0; i < 3; i++) await w.pass(20 * SECOND);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'confirmed');
    h = await w.health();
    assert.deepEqual(h.watcher.disputes, []);
    assert.equal(h.watcher.scan.disputed_blocks, 0);
    rows = await disputeRows(w);
    assert.equal(rows.length, 1);
    assert.ok(rows[0]!.resolved_at, 'kept, marked resolved');
    assert.match((await w.t.deps.metrics.render()).body, /gatewayd_chain_disputed_blocks 0/);
  } finally {
    await w.close();
    await smtp.close();
  }
});

test('cross_check "count": a full read that changes a real payment (same count) is caught: a paying block is read in full by the second provider; disputed with the transaction; the altered amount never confirms', async () => {
  const w = await world(['liar', 'node'], { config: { tron: { cross_check: 'count' } } });
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const real = await insertInvoice(w.t, { address, amount: 9_700_001n, expiresAt: start + 30 * MINUTE });
    const fake = await insertInvoice(w.t, { address, amount: 9_700_002n, expiresAt: start + 30 * MINUTE });
    // The liar is first in the list: it serves the infos of even blocks in full, the node counts them.
    const p = w.node.transfer({ to: address, amount: 9_700_001n, at: timeOfParity(w, start + 30 * SECOND, true) });
    const alter = (i: Record<string, unknown>) => ({ ...i, log: (i.log as any[]).map((l) => ({ ...l, data: 9_700_002n.toString(16).padStart(64, '0') })) });
    // A consistent liar: asked for the transaction by id, it serves the altered amount too.
    w.liar.set({
      infos: (num, infos) => (num !== p.blockNumber ? infos : infos.map((i) => (i.id === p.txId ? alter(i) : i))),
      byId: (id, info) => (id === p.txId && info ? alter(info) : info),
    });
    await untilSolid(w, p.blockTimestamp);
    assert.equal((await getInvoice(w.t, fake.id)).status, 'pending', 'the altered amount never confirms');
    assert.equal((await getInvoice(w.t, real.id)).status, 'pending', 'nor the real one on a disputed read');
    assert.deepEqual(await transfersOf(w.t), []);
    const h = await w.health();
    assert.equal(h.watcher.disputes.length, 1);
    assert.equal(h.watcher.disputes[0].block, p.blockNumber);
    assert.equal(h.watcher.disputes[0].tx_hash, p.txId);
    assert.match(h.watcher.disputes[0].reason, new RegExp(`disagree about transaction ${p.txId} of block ${p.blockNumber}`));
    w.liar.set({});
    for (let i = 0; i < 3; i++) await w.pass(20 * SECOND);
    assert.equal((await getInvoice(w.t, real.id)).status, 'confirmed');
    assert.equal((await getInvoice(w.t, fake.id)).status, 'pending');
  } finally {
    await w.close();
  }
});

test('cross_check "count": a forged payment is caught whether the liar serves the block in full (read in full by the other too) or counts it (its count disagrees; its own full read shows the forgery)', async () => {
  const w = await world(['liar', 'node'], { config: { tron: { cross_check: 'count' } } });
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 9_800_001n, expiresAt: start + 30 * MINUTE });
    const even = w.node.blockAt(timeOfParity(w, start + 30 * SECOND, true)).number;
    const forged = (num: number) => forgedTransfer(w.node, num, (num === even ? 'e' : 'f').repeat(64), address, 9_800_001n);
    // A consistent liar: asked for a forged transaction by id, it returns it too.
    w.liar.set({
      infos: (num, infos) => (num === even || num === even + 1 ? [...infos, forged(num)] : infos),
      byId: (id, info) => (id === 'e'.repeat(64) ? forged(even) : id === 'f'.repeat(64) ? forged(even + 1) : info),
    });
    await untilSolid(w, w.node.blockTime(even + 1), 30 * SECOND);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'pending');
    const h = await w.health();
    assert.deepEqual(
      h.watcher.disputes.map((d: { block: number; tx_hash: string }) => [d.block, d.tx_hash]),
      [
        [even, 'e'.repeat(64)],
        [even + 1, 'f'.repeat(64)],
      ],
      'the even block (the liar read it in full) and the odd one (the liar counted it)',
    );
    assert.deepEqual(await transfersOf(w.t), []);
  } finally {
    await w.close();
  }
});

test('cross_check "ids", the default: an omission padded with a made-up transaction (the count unchanged) is caught by the ids; with "count" it is the documented limit', async () => {
  const w = await world(['liar', 'node']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 9_900_001n, expiresAt: start + 2 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_900_001n, at: timeOfParity(w, start + 30 * SECOND, true) });
    w.liar.set({
      infos: (num, infos) =>
        num !== p.blockNumber ? infos : [...infos.filter((i) => i.id !== p.txId), { ...infos.find((i) => i.id !== p.txId)!, id: 'a'.repeat(64) }],
      deny: new Set([p.txId]),
    });
    await untilSolid(w, p.blockTimestamp, 2 * MINUTE);
    assert.notEqual((await getInvoice(w.t, inv.id)).status, 'expired', 'not lost to the padded omission');
    const h = await w.health();
    assert.equal(h.watcher.disputes[0]?.block, p.blockNumber);
  } finally {
    await w.close();
  }
});
