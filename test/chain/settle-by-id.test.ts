/**
 * One disagreeing provider no longer pauses live payments (issue 40, finding 3), through the real
 * app with lying proxies (test/helpers/hostile-provider.ts) in front of the simulated node, which
 * stays the truth:
 * - a payment one of two providers leaves out of its block answer, but returns by id, confirms
 *   (both return it by id alike); the liar is set aside and shown; live payments stay on;
 * - what two providers return differently even by id stays disputed and holds only the invoices
 *   whose window meets that block: a later payment in the same backfilled range confirms, an
 *   invoice after the block expires, live payments stay on;
 * - with three providers the majority decides and the outvoted one is set aside.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { getInvoice, insertInvoice, transfersOf } from '../helpers/chain-fixtures.js';
import { forgedTransfer, untilSolid, world, type World } from '../helpers/hostile-provider.js';
import { randomAddress } from '../helpers/tron-samples.js';

/** The metric line of one provider. */
function providerMetric(body: string, name: string, provider: string): number {
  const m = new RegExp(`^${name}\\{provider="${provider.replace(/[.]/g, '\\.')}"\\} (\\S+)$`, 'm').exec(body);
  assert.ok(m, `${name} for ${provider}`);
  return Number(m[1]);
}

async function assertSetAside(w: World, index: number, url: string): Promise<void> {
  const h = await w.health();
  const p = h.watcher.providers[index];
  assert.equal(p.name, url);
  assert.equal(p.state, 'set_aside');
  assert.ok(p.set_aside_until, 'until when');
  assert.ok(p.outvoted_blocks >= 1);
  assert.match(p.last_error, /outvoted about block/);
  assert.equal(h.live_payments_enabled, true, 'live payments stay on');
  assert.equal(h.watcher.state, 'running');
  const metrics = (await w.t.deps.metrics.render()).body;
  assert.equal(providerMetric(metrics, 'gatewayd_chain_provider_set_aside', url), 1);
  assert.ok(providerMetric(metrics, 'gatewayd_chain_provider_outvoted_blocks', url) >= 1);
}

test('two providers: a payment the liar leaves out of its block answer but returns by id confirms; the liar is set aside and shown; live payments stay on; the next omission is settled too', async () => {
  const w = await world(['liar', 'other']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const a = await insertInvoice(w.t, { address, amount: 9_110_001n, expiresAt: start + 3 * MINUTE });
    const b = await insertInvoice(w.t, { address, amount: 9_110_002n, expiresAt: start + 30 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_110_001n, at: start + 30 * SECOND });
    const q = w.node.transfer({ to: address, amount: 9_110_002n, at: start + 3 * MINUTE });
    w.liar.set({ omit: new Set([p.txId, q.txId]) });
    await untilSolid(w, p.blockTimestamp);
    const inv = await getInvoice(w.t, a.id);
    assert.equal(inv.status, 'confirmed', 'two providers attest it by id');
    assert.equal(inv.txHash, p.txId);
    assert.ok(w.liar.paths.includes('/walletsolidity/gettransactioninfobyid'), 'the liar was asked by id');
    assert.ok(w.other.paths.includes('/walletsolidity/gettransactioninfobyid'), 'and the other provider');
    assert.deepEqual((await w.health()).watcher.disputes, [], 'nothing disputed');
    await assertSetAside(w, 0, w.liar.url);
    const logged = w.t.logs.find((l) => String(l.msg).startsWith('chain: PROVIDER SET ASIDE'));
    assert.ok(logged, 'logged');
    assert.equal(logged.level, 'error');
    assert.equal(logged.provider, w.liar.url);
    assert.equal(logged.block, p.blockNumber);
    assert.deepEqual(logged.tx_hashes, [p.txId]);

    // Set aside, it is still the second opinion of two: the next omission is settled the same way.
    await untilSolid(w, q.blockTimestamp);
    assert.equal((await getInvoice(w.t, b.id)).status, 'confirmed');
    assert.equal((await transfersOf(w.t)).length, 2, 'each recorded once');
    await assertSetAside(w, 0, w.liar.url);
    assert.equal((await w.health()).watcher.providers[1].state, 'ok');
  } finally {
    await w.close();
  }
});

test('two providers: a payment the liar adds to its block answer but not by id never confirms; settled against the liar, nothing disputed', async () => {
  const w = await world(['other', 'liar']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 9_120_001n, expiresAt: start + 30 * MINUTE });
    const at = w.node.blockAt(start + 30 * SECOND);
    w.liar.set({ infos: (num, infos) => (num === at.number ? [...infos, forgedTransfer(w.node, num, 'd'.repeat(64), address, 9_120_001n)] : infos) });
    await untilSolid(w, at.timestamp);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'pending');
    assert.deepEqual(await transfersOf(w.t), []);
    assert.deepEqual((await w.health()).watcher.disputes, []);
    await assertSetAside(w, 1, w.liar.url);
  } finally {
    await w.close();
  }
});

test('two providers that differ even by id (a forged log): disputed; only the invoice whose window meets that block is held; a later payment in the same backfilled range confirms, an invoice after the block expires; live payments stay on', async () => {
  const w = await world(['liar', 'node']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const held = await insertInvoice(w.t, { address, amount: 9_130_001n, expiresAt: start + 5 * MINUTE });
    const later = await insertInvoice(w.t, { address, amount: 9_130_002n, expiresAt: start + 30 * MINUTE });
    const after = await insertInvoice(w.t, { address, amount: 9_130_003n, createdAt: start + 2 * MINUTE, expiresAt: start + 4 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_130_001n, at: start + 30 * SECOND });
    const q = w.node.transfer({ to: address, amount: 9_130_002n, at: start + 3 * MINUTE });
    // A consistent liar: its block answer and its answer by id both carry another amount.
    const forge = (i: Record<string, unknown>) => ({ ...i, log: (i.log as any[]).map((l) => ({ ...l, data: 9_130_009n.toString(16).padStart(64, '0') })) });
    w.liar.set({
      infos: (num, infos) => (num === p.blockNumber ? infos.map((i) => (i.id === p.txId ? forge(i) : i)) : infos),
      byId: (id, info) => (id === p.txId && info ? forge(info) : info),
    });
    await w.pass();
    // Ten minutes at once: the follower jumps to the head, both payments' blocks are in the backfilled range.
    await w.pass(10 * MINUTE);
    for (let i = 0; i < 4; i++) await w.pass();
    const jump = w.t.logs.find((l) => l.msg === 'chain: following the head; backfilling the blocks behind it');
    assert.ok(jump && Number(jump.from_block) < p.blockNumber && q.blockNumber < Number(jump.to_block), 'both blocks are in the backfilled range');
    assert.equal((await getInvoice(w.t, later.id)).status, 'confirmed', 'the backfill goes on past the disputed block');
    assert.equal((await getInvoice(w.t, after.id)).status, 'expired', 'an invoice whose window does not meet the block is not held');
    assert.equal((await getInvoice(w.t, held.id)).status, 'pending', 'neither confirmed on one word nor expired while disputed');
    const rows = await transfersOf(w.t);
    assert.deepEqual(
      rows.map((r) => r.tx_hash),
      [q.txId],
    );
    let h = await w.health();
    assert.deepEqual(
      h.watcher.disputes.map((d: { block: number; tx_hash: string }) => [d.block, d.tx_hash]),
      [[p.blockNumber, p.txId]],
    );
    assert.match(h.watcher.disputes[0].reason, /also when asked for it by id/);
    assert.equal(h.live_payments_enabled, true);
    assert.equal(h.watcher.state, 'running');
    assert.ok(h.watcher.scan.gap_blocks <= 1, `only the disputed block is left unread: ${h.watcher.scan.gap_blocks}`);
    assert.equal(h.watcher.providers[0].state, 'ok', 'nobody is set aside on a dispute');
    assert.match((await w.t.deps.metrics.render()).body, /gatewayd_chain_disputed_blocks 1/);

    // The liar answers honestly again: the held block is read again and confirms; the dispute is resolved.
    w.liar.set({});
    for (let i = 0; i < 3; i++) await w.pass(20 * SECOND);
    assert.equal((await getInvoice(w.t, held.id)).status, 'confirmed');
    h = await w.health();
    assert.deepEqual(h.watcher.disputes, []);
    assert.equal(h.watcher.scan.gap_blocks, 0);
  } finally {
    await w.close();
  }
});

test('three providers: the majority decides against a consistent liar (omitted from its block and denied by id); the outvoted one is set aside and not asked; live payments stay on', async () => {
  const w = await world(['liar', 'node', 'other']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const a = await insertInvoice(w.t, { address, amount: 9_140_001n, expiresAt: start + 5 * MINUTE });
    const b = await insertInvoice(w.t, { address, amount: 9_140_002n, expiresAt: start + 10 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_140_001n, at: start + 30 * SECOND });
    w.liar.set({ omit: new Set([p.txId]), deny: new Set([p.txId]) });
    await untilSolid(w, p.blockTimestamp);
    assert.equal((await getInvoice(w.t, a.id)).status, 'confirmed');
    await assertSetAside(w, 0, w.liar.url);
    assert.deepEqual((await w.health()).watcher.disputes, []);
    const asked = w.liar.paths.length;
    const q = w.node.transfer({ to: address, amount: 9_140_002n, at: w.t.clock.now() + 10 * SECOND });
    await untilSolid(w, q.blockTimestamp);
    assert.equal((await getInvoice(w.t, b.id)).status, 'confirmed');
    assert.equal(w.liar.paths.length, asked, 'not asked while two others answer');
    await assertSetAside(w, 0, w.liar.url);
  } finally {
    await w.close();
  }
});

test('a backfilled block one of two providers never serves is held as disputed after 2 minutes, and the rest of the range goes on', async () => {
  const w = await world(['liar', 'node']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const held = await insertInvoice(w.t, { address, amount: 9_150_001n, expiresAt: start + 5 * MINUTE });
    const later = await insertInvoice(w.t, { address, amount: 9_150_002n, expiresAt: start + 30 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_150_001n, at: start + 30 * SECOND });
    const q = w.node.transfer({ to: address, amount: 9_150_002n, at: start + 3 * MINUTE });
    w.liar.set({ infos: (num, infos) => (num === p.blockNumber ? [] : infos) });
    await w.pass();
    await w.pass(10 * MINUTE);
    assert.equal((await getInvoice(w.t, later.id)).status, 'pending', 'the range waits at the block at first');
    for (let i = 0; i < 30; i++) await w.pass();
    assert.equal((await getInvoice(w.t, later.id)).status, 'confirmed', 'then goes on past it');
    assert.equal((await getInvoice(w.t, held.id)).status, 'pending', 'not expired while held');
    assert.deepEqual(
      (await transfersOf(w.t)).map((r) => r.tx_hash),
      [q.txId],
    );
    const h = await w.health();
    assert.deepEqual(
      h.watcher.disputes.map((d: { block: number }) => d.block),
      [p.blockNumber],
    );
    assert.match(h.watcher.disputes[0].reason, /does not serve block .* \(waited \d+ s\)/);
    assert.equal(h.live_payments_enabled, true);
    w.liar.set({});
    for (let i = 0; i < 3; i++) await w.pass(20 * SECOND);
    assert.equal((await getInvoice(w.t, held.id)).status, 'confirmed');
    assert.deepEqual((await w.health()).watcher.disputes, []);
  } finally {
    await w.close();
  }
});
