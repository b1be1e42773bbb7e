/**
 * The audit's findings, each performed through the real server against hostile providers: a
 * loopback proxy (test/helpers/hostile-provider.ts) in front of the simulated node, which stays
 * the truth. Every case here failed before chain watcher v3.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { insertGap, loadScanState, saveScanState } from '../../src/chain/chain.repo.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { getInvoice, insertInvoice, transfersOf } from '../helpers/chain-fixtures.js';
import { forgedTransfer, untilSolid, world, type Role } from '../helpers/hostile-provider.js';
import { randomAddress } from '../helpers/tron-samples.js';
import { startSmtp } from '../helpers/smtp.js';

test('finding 1: a head 1,000,000 blocks ahead from one of two providers is refused (counted, logged once); the cursor never jumps; the real payment confirms', async () => {
  const w = await world(['liar', 'node']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 7_000_001n, expiresAt: start + 30 * MINUTE });
    await w.pass();
    w.liar.set({ head: (h) => ({ number: h.number + 1_000_000, timestamp: w.t.clock.now() }) });
    await w.pass(2 * MINUTE); // past the 100 s head refresh
    const p = w.node.transfer({ to: address, amount: 7_000_001n, at: w.t.clock.now() + 30 * SECOND });
    await untilSolid(w, p.blockTimestamp);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'confirmed');
    const state = (await loadScanState(w.t.deps.db, w.t.config.network))!;
    assert.ok(state.cursorBlock < w.node.solidHead().number + 25, 'the cursor never went past the confirmed head');
    const h = await w.health();
    assert.ok(h.watcher.scan.gap_blocks < 100, `gap ${h.watcher.scan.gap_blocks}`);
    assert.ok(h.watcher.providers[0].refused_heads >= 1);
    assert.equal(h.watcher.providers[1].refused_heads, 0);
    assert.match((await w.t.deps.metrics.render()).body, new RegExp(`gatewayd_chain_provider_refused_heads\\{provider="${w.liar.url}"\\} [1-9]`));
    assert.equal(w.t.logs.filter((l) => String(l.msg).startsWith('chain: HEAD REFUSED')).length, 1, 'logged once per condition');
  } finally {
    await w.close();
  }
});

test('finding 1: an absurd head (2^53-1, time -8.64e15) from the only provider is refused: degraded with the reason, nothing stored', async () => {
  const w = await world(['liar']);
  try {
    await insertInvoice(w.t, { address: randomAddress(), amount: 7_000_002n });
    w.liar.set({ head: () => ({ number: Number.MAX_SAFE_INTEGER, timestamp: -8.64e15 }) });
    await w.pass();
    await w.pass();
    const h = await w.health();
    assert.equal(h.watcher.state, 'degraded');
    assert.equal(h.live_payments_enabled, false);
    assert.ok(h.watcher.scan.reason);
    assert.ok(h.watcher.providers[0].refused_heads >= 1);
    assert.equal(await loadScanState(w.t.deps.db, w.t.config.network), undefined, 'no cursor from an absurd head');
  } finally {
    await w.close();
  }
});

test('finding 1: a stored cursor and gap beyond every credible head (left by a lying head) are corrected at start-up; the next payment confirms', async () => {
  const w = await world(['node']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 7_000_003n, expiresAt: start + 30 * MINUTE });
    const solid = w.node.solidHead();
    const network = w.t.config.network;
    // What the old watcher stored after following a head 1,000,000 blocks ahead.
    await saveScanState(w.t.deps.db, network, { cursorBlock: solid.number + 999_999, cursorTime: solid.timestamp + 1, activeUntil: start + MINUTE }, start);
    await insertGap(w.t.deps.db, network, {
      fromBlock: solid.number - 10,
      toBlock: solid.number + 999_998,
      afterTime: solid.timestamp - 30 * SECOND,
      beforeTime: solid.timestamp,
    });
    const p = w.node.transfer({ to: address, amount: 7_000_003n, at: start + 30 * SECOND });
    await untilSolid(w, p.blockTimestamp);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'confirmed');
    const state = (await loadScanState(w.t.deps.db, network))!;
    assert.ok(state.cursorBlock <= w.node.solidHead().number + 1);
    assert.ok((await w.health()).watcher.scan.gap_blocks < 100);
  } finally {
    await w.close();
  }
});

for (const roles of [['liar'], ['liar', 'node']] as Role[][]) {
  test(`finding 2: a solidified head that runs ahead of the blocks served (${roles.join(' + ')}): empty answers wait; the payment confirms; the unpaid invoice expires only once read`, async () => {
    const w = await world(roles);
    try {
      w.liar.set({ solidIsHead: true });
      // (the infos stay the solidified ones: only the head lies)
      const address = randomAddress();
      const start = w.t.clock.now();
      const paid = await insertInvoice(w.t, { address, amount: 8_000_001n, expiresAt: start + 3 * MINUTE });
      const unpaid = await insertInvoice(w.t, { address, amount: 8_000_002n, expiresAt: start + 3 * MINUTE });
      await w.pass();
      w.liar.set({ head: (h) => ({ number: h.number + 19, timestamp: h.timestamp + 57 * SECOND }) });
      const p = w.node.transfer({ to: address, amount: 8_000_001n, at: start + 2 * MINUTE });
      while (w.t.clock.now() < start + 5 * MINUTE) {
        await w.pass();
        if ((await getInvoice(w.t, unpaid.id)).status === 'expired')
          assert.equal((await getInvoice(w.t, paid.id)).status, 'confirmed', 'expired before the paying block was read');
      }
      assert.equal((await getInvoice(w.t, paid.id)).status, 'confirmed');
      assert.equal((await getInvoice(w.t, paid.id)).txHash, p.txId);
      assert.equal((await getInvoice(w.t, unpaid.id)).status, 'expired');
    } finally {
      await w.close();
    }
  });
}

test('finding 3: a forged payment (in its block answer and by id) plus a 429 (Retry-After: 30) on the honest provider never confirms; held as disputed once both answer; the support staff are mailed; live payments stay on', async () => {
  const smtp = await startSmtp();
  const w = await world(['other', 'liar'], { config: { email: smtp.email, support: { staff_emails: ['ops@example.test'] } } });
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 9_000_001n, expiresAt: start + 30 * MINUTE });
    await w.pass();
    const forgedAt = w.node.blockAt(start + 30 * SECOND);
    const forge = () => forgedTransfer(w.node, forgedAt.number, 'f'.repeat(64), address, 9_000_001n);
    // A consistent liar: asked for the forged transaction by id, it returns it too.
    w.liar.set({
      infos: (num, infos) => (num === forgedAt.number ? [...infos, forge()] : infos),
      byId: (id, info) => (id === 'f'.repeat(64) ? forge() : info),
    });
    while (w.t.clock.now() < forgedAt.timestamp + 50 * SECOND) await w.pass();
    w.other.set({ rateLimit: { times: 1, retryAfter: 30 } });
    for (let i = 0; i < 12; i++) await w.pass();
    assert.equal((await getInvoice(w.t, inv.id)).status, 'pending', "never confirmed on one provider's word");
    assert.deepEqual(await transfersOf(w.t), []);
    const h = await w.health();
    assert.equal(h.watcher.state, 'running', 'a dispute holds its own block, not the watcher');
    assert.equal(h.live_payments_enabled, true);
    assert.equal(h.watcher.scan.disputed_blocks, 1);
    assert.equal(h.watcher.disputes[0].block, forgedAt.number);
    const mail = await smtp.waitFor((m) => m.to.includes('ops@example.test'));
    assert.match(mail.subject, new RegExp(`block ${forgedAt.number} is disputed`));
    assert.equal(smtp.messages.length, 1, 'one mail per disputed block');
  } finally {
    await w.close();
    await smtp.close();
  }
});

test('findings 4 and 5: a provider that omits a real payment is outvoted by two others and set aside; scanning goes on; the payment confirms and later ones too', async () => {
  const w = await world(['liar', 'node', 'other']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const a = await insertInvoice(w.t, { address, amount: 9_100_001n, expiresAt: start + 5 * MINUTE });
    const b = await insertInvoice(w.t, { address, amount: 9_100_002n, expiresAt: start + 10 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_100_001n, at: start + 30 * SECOND });
    w.liar.set({ omit: new Set([p.txId]) });
    await untilSolid(w, p.blockTimestamp);
    assert.equal((await getInvoice(w.t, a.id)).status, 'confirmed');
    const h = await w.health();
    assert.equal(h.watcher.providers[0].state, 'set_aside');
    assert.ok(h.watcher.providers[0].set_aside_until);
    const asked = w.liar.paths.length;
    const q = w.node.transfer({ to: address, amount: 9_100_002n, at: w.t.clock.now() + 10 * SECOND });
    await untilSolid(w, q.blockTimestamp);
    assert.equal((await getInvoice(w.t, b.id)).status, 'confirmed');
    assert.equal(w.liar.paths.length, asked, 'not asked while set aside');
  } finally {
    await w.close();
  }
});

test('finding 4: with two providers, an omission the liar keeps up by id too is caught (disputed); the invoice does not expire on it; later blocks still scan', async () => {
  const w = await world(['liar', 'node']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const a = await insertInvoice(w.t, { address, amount: 9_200_001n, expiresAt: start + 2 * MINUTE });
    const b = await insertInvoice(w.t, { address, amount: 9_200_002n, expiresAt: start + 30 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_200_001n, at: start + 30 * SECOND });
    w.liar.set({ omit: new Set([p.txId]), deny: new Set([p.txId]) });
    await untilSolid(w, p.blockTimestamp, 3 * MINUTE);
    assert.equal((await getInvoice(w.t, a.id)).status, 'pending', 'neither confirmed on one word nor expired');
    const h = await w.health();
    assert.equal(h.watcher.scan.disputed_blocks, 1);
    const q = w.node.transfer({ to: address, amount: 9_200_002n, at: w.t.clock.now() + 10 * SECOND });
    await untilSolid(w, q.blockTimestamp);
    assert.equal((await getInvoice(w.t, b.id)).status, 'confirmed', 'not stalled by the disputed block');
    // The liar stops omitting: the held block is read again and confirms.
    w.liar.set({});
    for (let i = 0; i < 3; i++) await w.pass(20 * SECOND);
    assert.equal((await getInvoice(w.t, a.id)).status, 'confirmed');
    assert.equal((await w.health()).watcher.scan.disputed_blocks, 0);
  } finally {
    await w.close();
  }
});

test('finding 6: a block time of 8.7e15 is a malformed read, not a crash loop: degraded with the reason within 3 passes; another provider is used', async () => {
  const w = await world(['liar']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 9_300_001n, expiresAt: start + 30 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_300_001n, at: start + 30 * SECOND });
    w.liar.set({ infos: (num, infos) => (num === p.blockNumber ? infos.map((i) => ({ ...i, blockTimeStamp: 8.7e15 })) : infos) });
    await untilSolid(w, p.blockTimestamp);
    const h = await w.health();
    assert.equal(h.watcher.state, 'degraded');
    assert.match(h.watcher.scan.reason, /malformed block/);
    assert.ok(h.watcher.providers[0].malformed_reads >= 1);
    assert.ok(!w.t.logText().includes('Invalid time value'));
    assert.equal((await getInvoice(w.t, inv.id)).status, 'pending');
    w.liar.set({});
    await w.pass(20 * SECOND);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'confirmed');
  } finally {
    await w.close();
  }
});

test('finding 7: the same transaction served again in a later block with its log index shifted is not counted twice', async () => {
  const w = await world(['liar']);
  try {
    const address = randomAddress();
    const start = w.t.clock.now();
    const inv = await insertInvoice(w.t, { address, amount: 9_400_001n, expiresAt: start + 30 * MINUTE });
    const p = w.node.transfer({ to: address, amount: 9_400_001n, at: start + 30 * SECOND });
    const copy = structuredClone(w.node.blockInfos(p.blockNumber).find((i) => i.id === p.txId)!) as Record<string, any>;
    w.liar.set({
      infos: (num, infos) => {
        if (num !== p.blockNumber + 5) return infos;
        const ts = infos[0]?.blockTimeStamp ?? w.node.blockTime(num);
        const again = { ...copy, blockNumber: num, blockTimeStamp: ts, log: [{ ...copy.log[0], topics: ['00'.repeat(32)] }, copy.log[0]] };
        return [...infos, again];
      },
    });
    await untilSolid(w, p.blockTimestamp + 30 * SECOND);
    assert.equal((await getInvoice(w.t, inv.id)).status, 'confirmed');
    const rows = await transfersOf(w.t);
    assert.equal(rows.length, 1, 'recorded once');
    assert.equal(rows[0]!.kind, 'confirmed');
  } finally {
    await w.close();
  }
});
