/**
 * A replay of recorded mainnet java-tron answers (provided beside the clone by CI, read at run time,
 * not part of the repository) through a loopback stand-in, shifting only block
 * numbers and times: every real USDT transfer confirms an invoice of its exact amount with the
 * right hash; failed ones never do; the `visible=true` answer (base58 log address), numbers sent
 * as strings, and a log marked `removed` are handled as they come on real networks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createChainRuntime, runOnce } from '../../src/chain/chain.worker.js';
import { buildConfig } from '../../src/config.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { hexToTronAddress, tronAddressToHex } from '../../src/lib/tron.js';
import { startTestApp } from '../helpers/app.js';
import { getInvoice, insertInvoice, transfersOf } from '../helpers/chain-fixtures.js';
import { readSample, samplesPresent, SAMPLES_DIR, startReplayNode } from '../helpers/replay-node.js';
import { createHash } from 'node:crypto';

type Info = Record<string, any>;
const USDT_LOG = 'a614f803b6fd780986a42c78ec9c7f77e6ded13c';

function usdtLog(i: Info): { to: string; amount: bigint } | undefined {
  const log = (i.log ?? [])[0];
  if (!log) return undefined;
  const address = String(log.address);
  const hex = address.startsWith('T') ? tronAddressToHex(address)!.slice(2) : address.replace(/^41/, '');
  if (hex !== USDT_LOG) return undefined;
  return { to: hexToTronAddress(`41${String(log.topics[2]).slice(24)}`)!, amount: BigInt(`0x${String(log.data)}`) };
}

test('replay of recorded mainnet answers: each real USDT transfer confirms an invoice of its exact amount with its hash; failed and removed ones do not', async () => {
  // Not skipped when they are missing: CI has them, and a replay that silently did not run proves nothing.
  assert.ok(samplesPresent(), `the recorded mainnet answers are missing: expected ${SAMPLES_DIR}/README.md (the shared folder beside the clone)`);
  const recorded: Info[] = [
    ...(readSample('ledger/usdt_and_odd_infos.json') as Info[]),
    ...(readSample('sdkdocs/get_transaction_info_examples.json') as Info[]),
    ...(readSample('getblock/block_30864600_infos.json') as Info[]),
    readSample('bjrobin/get_transaction_info_661f1df8.json') as Info,
  ];
  const successes = recorded.filter((i) => i.receipt?.result === 'SUCCESS' && i.result !== 'FAILED' && usdtLog(i));
  const failures = recorded.filter((i) => i.result === 'FAILED');
  assert.ok(successes.length >= 10, `${successes.length} real USDT transfers`);
  assert.ok(failures.length >= 2);
  assert.ok(
    successes.some((i) => String(i.log[0].address).startsWith('T')),
    'a visible=true answer is among them',
  );
  // Variants of real answers, each in a block of its own: a failed call that still carries a
  // Transfer log, and a log marked removed (both to a watched address, for an invoice of that amount).
  const variant = (i: Info, tag: string, change: (c: Info) => void, amount: bigint): Info => {
    const c = structuredClone(i);
    c.id = createHash('sha256').update(`${tag}:${i.id}`).digest('hex');
    c.blockNumber = -Number(createHash('sha256').update(tag).digest().readUInt32BE(0));
    c.log[0].data = amount.toString(16).padStart(64, '0');
    change(c);
    return c;
  };
  const base = successes[0]!;
  const baseTo = usdtLog(base)!.to;
  const failedWithLog = variant(
    base,
    'failed',
    (c) => {
      c.receipt.result = 'REVERT';
      c.result = 'FAILED';
    },
    1_000_001n,
  );
  const removed = variant(
    base,
    'removed',
    (c) => {
      c.log[0].removed = true;
    },
    1_000_002n,
  );

  const start = Date.UTC(2026, 0, 15, 12, 0, 0);
  const t = await startTestApp({ now: start, config: { tron: { api_url: 'http://127.0.0.1:9', poll_interval_seconds: 5 } } });
  const node = await startReplayNode({
    infos: [...recorded, failedWithLog, removed],
    now: () => t.clock.now(),
    anchorBlock: 80_000_000,
    anchorTime: start - 2 * MINUTE,
    firstBlock: 80_000_000 + 60,
    stringsEvery: 4,
  });
  try {
    t.deps.chain = createChainRuntime(buildConfig({ tron: { providers: [{ url: node.url, requests_per_second: 0 }], poll_interval_seconds: 5 } }), {
      maxRequestsPerSecond: 0,
    });
    const placed = [...node.blocks.values()].flatMap((b) => b.infos);
    const expect = new Map<string, { invoiceId: string; amount: bigint }>();
    const seen = new Set<string>();
    for (const i of placed) {
      if (!successes.some((s) => s.id === i.id)) continue;
      const { to, amount } = usdtLog(i)!;
      if (seen.has(`${to}:${amount}`)) continue;
      seen.add(`${to}:${amount}`);
      const inv = await insertInvoice(t, { address: to, amount, createdAt: start - MINUTE, expiresAt: Number(i.blockTimeStamp) + 30 * MINUTE });
      expect.set(String(i.id), { invoiceId: inv.id, amount });
    }
    assert.ok(expect.size >= 10, `${expect.size} invoices`);
    const failedInv = await insertInvoice(t, { address: baseTo, amount: 1_000_001n, createdAt: start - MINUTE, expiresAt: start + HOUR_MS });
    const removedInv = await insertInvoice(t, { address: baseTo, amount: 1_000_002n, createdAt: start - MINUTE, expiresAt: start + HOUR_MS });
    const last = Math.max(...[...node.blocks.values()].map((b) => b.timestamp));
    while (t.clock.now() < last + 57 * SECOND + 30 * SECOND) {
      t.clock.advance(5 * SECOND);
      while (await runOnce(t.deps));
    }
    assert.equal(t.deps.watcherStatus.state, 'running', JSON.stringify(t.deps.chain.figures));
    for (const [txId, e] of expect) {
      const inv = await getInvoice(t, e.invoiceId);
      assert.equal(inv.status, 'confirmed', `the invoice paid by ${txId}`);
      assert.equal(inv.txHash, txId);
      assert.equal(inv.payableAmount, e.amount);
    }
    assert.equal((await getInvoice(t, failedInv.id)).status, 'pending', 'a failed call never pays');
    assert.equal((await getInvoice(t, removedInv.id)).status, 'pending', 'a removed log never pays');
    const hashes = new Set((await transfersOf(t)).map((r) => r.tx_hash));
    for (const f of [...failures, failedWithLog, removed]) assert.ok(!hashes.has(String(f.id)), `${String(f.id)} not recorded`);
  } finally {
    await t.close();
    await node.close();
  }
});

const HOUR_MS = 60 * MINUTE;
