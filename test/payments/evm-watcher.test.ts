/**
 * The EVM watcher end to end: anvil as an EVM devnet, hostile proxies in front of it as the
 * providers, the real server and a real migrated database. A payment is seen within a poll of its
 * block (invoice.payment_seen, `payment_seen` on the invoice) and confirms only once its block is
 * final; a block that leaves the chain before then is told as dropped; two providers must agree
 * before anything moves; a provider's range cap and its Retry-After are learned and honoured; a
 * wrong payment is recorded as unmatched with its reason.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { addressTopic } from '../../src/chains/evm/address.js';
import { TRANSFER_TOPIC } from '../../src/chains/evm/reader.js';
import { SECOND } from '../../src/lib/clock.js';
import { listOpenDisputes } from '../../src/payments/scan.repo.js';
import { anvilSkip } from '../chains/evm/anvil.js';
import { ALICE, BOB, CAROL } from '../chains/evm/devchain.js';
import { eventsOf, getInvoice, transfersOf } from '../helpers/chain-fixtures.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { runChainRescan, runChainStatus } from '../../src/cli/chain.js';
import { startSmtp } from '../helpers/smtp.js';
import { startEvmHarness, type EvmHarness } from './evm-harness.js';
import { evmWorker } from '../../src/payments/evm/evm-watcher.js';

const skip = anvilSkip();
const open: EvmHarness[] = [];
after(async () => {
  for (const h of open) await h.close();
});

async function harness(...args: Parameters<typeof startEvmHarness>): Promise<EvmHarness> {
  const h = await startEvmHarness(...args);
  open.push(h);
  return h;
}

/** Rewrites the logs of every eth_getLogs answer of a proxy. */
function logs(rewrite: (logs: any[], call: { params: any[] }) => any[]) {
  return { result: (call: { method: string; params: any[] }, result: any) => (call.method === 'eth_getLogs' ? rewrite(result, call) : result) };
}

function word(n: bigint): string {
  return `0x${n.toString(16).padStart(64, '0')}`;
}

/** A Transfer log to ALICE that no transaction made, placed in a real block (what a lying provider adds). */
function forgedLog(h: EvmHarness, block: { number: string; hash: string }, amount: bigint, txByte: string, logIndex: string) {
  return {
    address: h.contract('USDT').toLowerCase(),
    topics: [TRANSFER_TOPIC, addressTopic(BOB), addressTopic(ALICE)],
    data: word(amount),
    blockNumber: block.number,
    blockHash: block.hash,
    transactionHash: `0x${txByte.repeat(32)}`,
    transactionIndex: '0x0',
    logIndex,
    removed: false,
  };
}

/** Lets the payment's block become final (finalized is 4 behind here) and runs the final read it is due for. */
async function finalize(h: EvmHarness): Promise<void> {
  await h.chain.mine(5);
  await h.pass(121 * SECOND);
}

test('ethereum-devnet: a payment is seen at once (invoice.payment_seen, payment_seen) and confirms only once its block is final', { skip }, async () => {
  const h = await harness('ethereum-devnet');
  const { merchant, client } = await signedInMerchant(h.t);
  await h.wallet(ALICE, undefined, merchant.id);
  const invoice = await h.invoice(merchant.id, ALICE, 10_000_001n);
  await h.pass(); // the first final read: the final head, the cursor
  assert.notEqual(h.w.figures.finalHead, null);
  const paid = await h.chain.pay(h.contract('USDT'), [ALICE, 10_000_001n]);
  await h.pass();
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending', 'seen is not final');
  const events = await eventsOf(h.t, invoice.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['invoice.payment_seen'],
  );
  const seen = events[0]!.data as {
    transfer: Record<string, unknown>;
    final_in_seconds: number;
    invoice: { payment_seen: Record<string, unknown> | null; status: string };
  };
  assert.equal(seen.transfer.tx_hash, paid.txHash);
  assert.equal(seen.transfer.network, 'ethereum-devnet');
  assert.equal(seen.transfer.raw_amount, '10000001');
  assert.equal(seen.invoice.status, 'pending');
  assert.equal(seen.invoice.payment_seen?.tx_hash, paid.txHash);
  assert.ok(seen.final_in_seconds > 0);
  const shown = await client.get(`/api/v1/invoices/${invoice.id}`);
  assert.equal(shown.status, 200);
  assert.equal(shown.body.invoice.status, 'pending');
  assert.equal(shown.body.invoice.payment_seen.tx_hash, paid.txHash);
  assert.equal(shown.body.invoice.payment_seen.network, 'ethereum-devnet');
  assert.equal(shown.body.invoice.payment_seen.block_number, Number(paid.blockNumber));

  // Not final yet: more polls change nothing, however long.
  await h.pass(121 * SECOND);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending');
  assert.equal((await transfersOf(h.t)).length, 0, 'nothing is recorded before it is final');
  await finalize(h);
  const confirmed = await getInvoice(h.t, invoice.id);
  assert.equal(confirmed.status, 'confirmed');
  assert.equal(confirmed.txHash, paid.txHash);
  assert.deepEqual(
    (await eventsOf(h.t, invoice.id)).map((e) => e.type),
    ['invoice.payment_seen', 'invoice.confirmed'],
  );
  const [row] = await transfersOf(h.t);
  assert.equal(row!.network, 'ethereum-devnet');
  assert.equal(row!.block_hash, paid.blockHash);
  assert.equal((await client.get(`/api/v1/invoices/${invoice.id}`)).body.invoice.payment_seen, null, 'final: nothing waits any more');
});

test(
  'bsc-devnet (18 decimals): an exact payment confirms once final; a value with digits below the micro-unit is unmatched inexact_amount, never rounded',
  { skip },
  async () => {
    const h = await harness('bsc-devnet');
    const { merchant, client } = await signedInMerchant(h.t);
    await h.wallet(ALICE, undefined, merchant.id);
    const exact = await h.invoice(merchant.id, ALICE, 12_000_002n);
    const inexact = await h.invoice(merchant.id, ALICE, 10_000_001n);
    await h.pass();
    await h.chain.pay(h.contract('USDT'), [ALICE, 12_000_002n * 10n ** 12n]);
    await h.chain.pay(h.contract('USDT'), [ALICE, 10_000_001n * 10n ** 12n + 5n]);
    await h.pass();
    assert.deepEqual(
      (await eventsOf(h.t, exact.id)).map((e) => e.type),
      ['invoice.payment_seen'],
    );
    assert.deepEqual(await eventsOf(h.t, inexact.id), [], 'an inexact value is never seen as paying');
    await finalize(h);
    assert.equal((await getInvoice(h.t, exact.id)).status, 'confirmed');
    assert.equal((await getInvoice(h.t, inexact.id)).status, 'pending');
    const list = await client.get('/api/v1/transfers');
    assert.equal(list.status, 200);
    const [t] = list.body.transfers;
    assert.equal(t.kind, 'unmatched');
    assert.equal(t.reason, 'inexact_amount');
    assert.equal(t.network, 'bsc-devnet');
    assert.equal(t.amount, '10.000001', 'the micro-units below the value');
    assert.equal(t.raw_amount, (10_000_001n * 10n ** 12n + 5n).toString());
    const page = await client.get(`${h.t.baseUrl}/console/transfers`);
    assert.match(page.text, /data-reason="inexact_amount"/);
    assert.match(page.text, /10\.000001000000000005/);
  },
);

test('a batch transaction paying two watched addresses records both transfers (by log index) and confirms both invoices', { skip }, async () => {
  const h = await harness('ethereum-devnet');
  const a = await h.wallet(ALICE);
  const b = await h.wallet(BOB);
  const ia = await h.invoice(a, ALICE, 3_000_001n);
  const ib = await h.invoice(b, BOB, 4_000_002n);
  await h.pass();
  const paid = await h.chain.pay(h.contract('USDT'), [ALICE, 3_000_001n], [BOB, 4_000_002n]);
  await h.pass();
  await finalize(h);
  assert.equal((await getInvoice(h.t, ia.id)).status, 'confirmed');
  assert.equal((await getInvoice(h.t, ib.id)).status, 'confirmed');
  const rows = await transfersOf(h.t);
  assert.deepEqual(
    rows.map((r) => [r.tx_hash, r.to_address, r.kind]),
    [
      [paid.txHash, ALICE, 'confirmed'],
      [paid.txHash, BOB, 'confirmed'],
    ],
  );
  assert.notEqual(rows[0]!.log_index, rows[1]!.log_index);
});

test(
  'a payment on the right address but another network, or in the other token, is unmatched with that reason; each network expires only its own invoices',
  { skip },
  async () => {
    const h = await harness('ethereum-devnet', { also: ['bsc-devnet'] });
    const { merchant, client } = await signedInMerchant(h.t);
    await h.wallet(ALICE, ['ethereum-devnet', 'bsc-devnet'], merchant.id);
    const onBsc = await h.invoice(merchant.id, ALICE, 7_000_001n, { network: 'bsc-devnet', expiresInMs: 30 * SECOND });
    const inUsdc = await h.invoice(merchant.id, ALICE, 8_000_001n, { symbol: 'USDC' });
    const soon = await h.invoice(merchant.id, ALICE, 5_000_001n, { expiresInMs: 30 * SECOND });
    await h.pass();
    await h.chain.pay(h.contract('USDT'), [ALICE, 7_000_001n]);
    await h.chain.pay(h.contract('USDT'), [ALICE, 8_000_001n]);
    await h.chain.pay(h.contract('USDT'), [ALICE, 9_000_001n]);
    // Blocks 20 s apart: the scan then covers both 30 s windows.
    await h.chain.anvil.rpc('anvil_mine', ['0x6', '0x14']);
    await h.pass(200 * SECOND);
    const list = await client.get('/api/v1/transfers');
    assert.deepEqual(list.body.transfers.map((t: any) => [t.amount, t.kind, t.reason, t.network, t.token]).sort(), [
      ['7.000001', 'unmatched', 'wrong_network', 'ethereum-devnet', 'USDT'],
      ['8.000001', 'unmatched', 'other_token', 'ethereum-devnet', 'USDT'],
      ['9.000001', 'unmatched', 'no_invoice', 'ethereum-devnet', 'USDT'],
    ]);
    assert.equal((await getInvoice(h.t, inUsdc.id)).status, 'pending');
    assert.equal((await getInvoice(h.t, soon.id)).status, 'expired', "the network's scan passed its window");
    assert.equal((await getInvoice(h.t, onBsc.id)).status, 'pending', "another network's scan never expires it");
    const page = await client.get(`${h.t.baseUrl}/console/transfers`);
    assert.match(page.text, /data-reason="wrong_network"/);
    assert.match(page.text, /data-reason="other_token"/);
    assert.match(page.text, /Ethereum \(ERC20\) devnet/);
  },
);

test(
  'two providers, one omits the payment: nothing confirms, the transfer is disputed (durable, visible); once both agree it confirms and the dispute is resolved',
  { skip },
  async () => {
    const smtp = await startSmtp();
    const h = await harness('ethereum-devnet', { providers: 2, config: { email: smtp.email, support: { staff_emails: ['ops@example.test'] } } });
    after(() => smtp.close());
    const merchant = await h.wallet(ALICE);
    const invoice = await h.invoice(merchant, ALICE, 6_000_001n);
    const other = await h.invoice(await h.wallet(CAROL), CAROL, 2_000_002n);
    await h.pass();
    const paid = await h.chain.pay(h.contract('USDT'), [ALICE, 6_000_001n]);
    await h.chain.pay(h.contract('USDT'), [CAROL, 2_000_002n]);
    h.providers[0]!.set(logs((ls) => ls.filter((l) => l.transactionHash !== paid.txHash)));
    await h.pass();
    await finalize(h);
    assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending', "no transfer moves an invoice on one provider's word");
    assert.equal((await getInvoice(h.t, other.id)).status, 'confirmed', 'the rest of the range goes on confirming');
    const disputes = await listOpenDisputes(h.t.deps.db, h.w.network);
    assert.equal(disputes.length, 1);
    assert.equal(disputes[0]!.block, Number(paid.blockNumber));
    assert.equal(disputes[0]!.txHash, paid.txHash);
    assert.equal(h.w.providers[0]!.health.disagreements, 1);
    const health = (await h.t.client().get('/api/v1/health')).body;
    assert.equal(health.networks.find((n: any) => n.network === 'ethereum-devnet').disputes, 1, 'the dispute is visible in /health');
    const metrics = (await h.t.deps.metrics.render()).body;
    assert.match(metrics, /gatewayd_network_disputes\{network="ethereum-devnet"\} 1/, 'and in the metrics');
    assert.match(metrics, /gatewayd_network_state\{network="ethereum-devnet",state="running"\} 1/);
    const mail = await smtp.waitFor((m) => m.to.includes('ops@example.test'));
    assert.match(mail.subject, new RegExp(`Payments held: Ethereum.* block ${Number(paid.blockNumber)} is disputed`), 'the support staff are told');
    assert.match(mail.text, /\[\[evm\.networks\]\]/);
    await h.pass();
    assert.equal(smtp.messages.length, 1, 'once a dispute, not once a pass');
    h.providers[0]!.set({});
    await h.pass(121 * SECOND);
    assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed');
    assert.deepEqual(await listOpenDisputes(h.t.deps.db, h.w.network), []);
  },
);

test('a provider inventing a payment in a real block confirms nothing (the other provider does not show it)', { skip }, async () => {
  const h = await harness('ethereum-devnet', { providers: 2 });
  const merchant = await h.wallet(ALICE);
  const invoice = await h.invoice(merchant, ALICE, 9_100_001n);
  await h.pass();
  await h.chain.mine(1);
  const block = await h.chain.anvil.rpc('eth_getBlockByNumber', ['latest', false]);
  const forged = forgedLog(h, block, 9_100_001n, 'f0', '0x0');
  h.providers[1]!.set(logs((ls, call) => (BigInt(call.params[0].fromBlock) <= BigInt(block.number) ? [...ls, forged] : ls)));
  await h.pass();
  await finalize(h);
  await h.pass(121 * SECOND);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending');
  assert.deepEqual(
    (await transfersOf(h.t)).map((r) => r.tx_hash),
    [],
  );
  assert.equal((await listOpenDisputes(h.t.deps.db, h.w.network)).length, 1, 'the forgery is a dispute, never a payment');
});

test('a log marked removed is not a payment', { skip }, async () => {
  const h = await harness('ethereum-devnet');
  const merchant = await h.wallet(ALICE);
  const invoice = await h.invoice(merchant, ALICE, 9_200_001n);
  await h.pass();
  const paid = await h.chain.pay(h.contract('USDT'), [ALICE, 9_200_001n]);
  h.providers[0]!.set(logs((ls) => ls.map((l) => (l.transactionHash === paid.txHash ? { ...l, removed: true } : l))));
  await h.pass();
  await finalize(h);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending');
  assert.deepEqual(await eventsOf(h.t, invoice.id), []);
  assert.ok(h.w.providers[0]!.health.droppedLogs >= 1);
});

test('a seen block that leaves the chain before it is final: invoice.payment_dropped, and the invoice waits on', { skip }, async () => {
  const h = await harness('ethereum-devnet');
  const { merchant, client } = await signedInMerchant(h.t);
  await h.wallet(ALICE, undefined, merchant.id);
  const invoice = await h.invoice(merchant.id, ALICE, 9_300_001n);
  await h.pass();
  await h.chain.pay(h.contract('USDT'), [ALICE, 9_300_001n]);
  await h.chain.mine(1);
  await h.pass();
  assert.deepEqual(
    (await eventsOf(h.t, invoice.id)).map((e) => e.type),
    ['invoice.payment_seen'],
  );
  // The payment's block and the one after are replaced by empty blocks.
  await h.chain.anvil.rpc('anvil_reorg', [2, []]);
  await h.pass();
  const events = await eventsOf(h.t, invoice.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['invoice.payment_seen', 'invoice.payment_dropped'],
  );
  assert.equal((events[1]!.data as { invoice: { status: string; payment_seen: unknown } }).invoice.payment_seen, null);
  assert.equal((await client.get(`/api/v1/invoices/${invoice.id}`)).body.invoice.payment_seen, null);
  await finalize(h);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending');
});

test('a provider that refuses large ranges: the span is halved, the cap remembered and shown, and every block is still read', { skip }, async () => {
  const h = await harness('ethereum-devnet');
  const merchant = await h.wallet(ALICE);
  const invoice = await h.invoice(merchant, ALICE, 9_400_001n);
  h.providers[0]!.set({
    refuse: (call) => {
      if (call.method !== 'eth_getLogs' || call.params[0].toBlock === 'latest') return undefined;
      const span = BigInt(call.params[0].toBlock) - BigInt(call.params[0].fromBlock) + 1n;
      return span > 4n ? { code: -32005, message: 'query returned more than 10000 results; block range too large' } : undefined;
    },
  });
  await h.pass();
  await h.chain.mine(12);
  await h.chain.pay(h.contract('USDT'), [ALICE, 9_400_001n]);
  await h.chain.mine(12);
  await h.pass(121 * SECOND);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed');
  const cap = h.w.caps.get(h.w.providers[0]!.health.name);
  assert.ok(cap !== undefined && cap <= 4n, `learned cap ${cap}`);
  const health = (await h.t.client().get('/api/v1/health')).body;
  const eth = health.networks.find((n: any) => n.network === 'ethereum-devnet');
  assert.equal(eth.family, 'evm');
  assert.equal(eth.state, 'running');
  assert.equal(eth.providers[0].range_cap, Number(cap));
  assert.deepEqual(eth.providers[0].refuses, [`eth_getLogs over more than ${cap} blocks`]);
  assert.match(eth.providers[0].name, /^http:\/\/127.0.0.1:\d+$/, 'scheme and host only');
  assert.ok(eth.behind_blocks !== null && eth.behind_blocks <= 50);
  assert.equal(health.networks[0].network, 'tron-devnet', 'TRON first');
  assert.equal(health.network, 'tron-devnet', 'the TRON fields as they were');
});

test("a 429 with Retry-After: the provider's pause is waited out, then the read goes on", { skip }, async () => {
  const h = await harness('ethereum-devnet');
  const merchant = await h.wallet(ALICE);
  const invoice = await h.invoice(merchant, ALICE, 9_500_001n);
  await h.pass();
  await h.chain.pay(h.contract('USDT'), [ALICE, 9_500_001n]);
  await h.chain.mine(5);
  const before = h.providers[0]!.requestTimes.length;
  h.providers[0]!.set({ rateLimit: { times: 1, retryAfter: '1' } });
  await h.pass(121 * SECOND);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed');
  const times = h.providers[0]!.requestTimes.slice(before);
  assert.ok(times.length >= 2);
  assert.ok(times[1]! - times[0]! >= 950, `waited ${Math.round(times[1]! - times[0]!)} ms after the 429`);
  assert.equal(h.w.providers[0]!.health.state, 'ok');
});

test(
  'a confirmation count as the rule: a confirmed payment whose block is reorganized away later keeps its invoice confirmed and is told (invoice.payment_dropped)',
  { skip },
  async () => {
    const h = await harness('ethereum-devnet', { finality: 2 });
    const merchant = await h.wallet(ALICE);
    const invoice = await h.invoice(merchant, ALICE, 9_600_001n);
    await h.pass();
    await h.chain.pay(h.contract('USDT'), [ALICE, 9_600_001n]);
    await h.chain.mine(2);
    await h.pass(121 * SECOND);
    assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed', 'two confirmations were the rule');
    // Deeper than the count: the payment's block and the two after it are replaced.
    await h.chain.anvil.rpc('anvil_reorg', [3, []]);
    await h.pass(121 * SECOND);
    await h.pass(121 * SECOND);
    assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed', 'confirmed is final');
    assert.deepEqual(
      (await eventsOf(h.t, invoice.id)).map((e) => e.type),
      ['invoice.confirmed', 'invoice.payment_dropped'],
    );
  },
);

test(
  'idle: no wallet, no request; with wallets and no open invoice a final read every 10 minutes, nothing between; an invoice opened is watched at the next poll',
  { skip },
  async () => {
    const h = await harness('ethereum-devnet');
    const calls = () => h.providers[0]!.calls.length;
    await h.pass();
    await h.pass(10 * 60 * SECOND);
    assert.equal(calls(), 0, 'nothing to watch: no request');
    // And no spin either: the next pass waits a poll interval (it was 0 ms, a busy loop on the database).
    assert.equal(evmWorker(h.t.deps, 'ethereum-devnet').nextDelayMs!(), 5 * SECOND);
    const merchant = await h.wallet(ALICE);
    await h.pass();
    const first = calls();
    assert.ok(first > 0, 'a final read');
    for (let i = 0; i < 10; i++) await h.pass(5 * SECOND);
    assert.equal(calls(), first, 'idle: nothing between final reads');
    await h.pass(10 * 60 * SECOND);
    assert.ok(calls() > first, 'the next final read, 10 minutes on');
    const invoice = await h.invoice(merchant, ALICE, 9_700_001n);
    // The app's clock ran ahead of the node's by the simulated minutes: the block comes at the app's time.
    await h.chain.anvil.rpc('evm_setNextBlockTimestamp', [Math.ceil(h.t.clock.now() / 1000) + 1]);
    await h.chain.pay(h.contract('USDT'), [ALICE, 9_700_001n]);
    await h.pass();
    assert.deepEqual(
      (await eventsOf(h.t, invoice.id)).map((e) => e.type),
      ['invoice.payment_seen'],
      'seen at the first poll after the invoice opened',
    );
  },
);

test(
  'chain rescan --network: a payment the only provider left out is found on a rescan of that network; chain status shows each network',
  { skip },
  async () => {
    const h = await harness('ethereum-devnet');
    const merchant = await h.wallet(ALICE);
    const invoice = await h.invoice(merchant, ALICE, 4_400_001n);
    await h.pass();
    const paid = await h.chain.pay(h.contract('USDT'), [ALICE, 4_400_001n]);
    h.providers[0]!.set(logs((ls) => ls.filter((l) => l.transactionHash !== paid.txHash)));
    await h.pass();
    await finalize(h);
    assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending', 'the one provider left it out');
    h.providers[0]!.set({});
    const lines: string[] = [];
    const out = (l: string) => lines.push(l);
    await assert.rejects(runChainRescan(h.t.config, { block: '1' }, out, 'bsc-devnet'), /does not watch "bsc-devnet"; it watches tron-devnet, ethereum-devnet/);
    assert.equal(await runChainRescan(h.t.config, { block: String(Number(paid.blockNumber) - 2) }, out, 'ethereum-devnet'), 0);
    assert.match(lines.join('\n'), /rescan recorded on ethereum-devnet: blocks/);
    await h.pass(121 * SECOND);
    assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed', 'the rescan found it');
    lines.length = 0;
    assert.equal(await runChainStatus({ ...h.t.config, server: { ...h.t.config.server, listen: new URL(h.t.baseUrl).host } }, out), 0);
    const text = lines.join('\n');
    assert.match(text, /network: tron-devnet/);
    assert.match(text, /network: ethereum-devnet\ncursor: block \d+, every block read up to \S+\ngaps: none\ndisputes: none/);
    assert.match(text, /watcher ethereum-devnet: (running|idle), cursor \d+/);
    assert.match(text, /  provider http:\/\/127\.0\.0\.1:\d+: ok/);
  },
);

test('three providers: one that leaves a payment out, or invents one, is outvoted by the two others; no dispute holds the block', { skip }, async () => {
  const h = await harness('ethereum-devnet', { providers: 3 });
  const merchant = await h.wallet(ALICE);
  const invoice = await h.invoice(merchant, ALICE, 7_300_001n);
  const other = await h.invoice(merchant, ALICE, 7_300_002n);
  await h.pass();
  const paid = await h.chain.pay(h.contract('USDT'), [ALICE, 7_300_001n]);
  h.providers[0]!.set(logs((ls) => ls.filter((l) => l.transactionHash !== paid.txHash)));
  await h.chain.mine(1);
  const block = await h.chain.anvil.rpc('eth_getBlockByNumber', ['latest', false]);
  const forged = forgedLog(h, block, 7_300_002n, 'f1', '0x5');
  h.providers[1]!.set(
    logs((ls, call) =>
      BigInt(call.params[0].fromBlock) <= BigInt(block.number) && BigInt(call.params[0].toBlock) >= BigInt(block.number) ? [...ls, forged] : ls,
    ),
  );
  await h.pass();
  await finalize(h);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed', 'the two others show the payment: it stands');
  assert.equal((await getInvoice(h.t, other.id)).status, 'pending', 'the two others do not show the invented one: no payment');
  assert.deepEqual(await listOpenDisputes(h.t.deps.db, h.w.network), [], 'settled by majority, nothing held');
  assert.deepEqual(
    h.w.providers.map((p) => p.health.outvoted),
    [1, 1, 0],
  );
});

test(
  'a provider that refuses even a one-block eth_getLogs with -32005 "limit exceeded" (public BSC nodes) is told in /health as serving no logs, and not asked again at every pass',
  { skip },
  async () => {
    const h = await harness('bsc-devnet');
    const merchant = await h.wallet(ALICE);
    await h.invoice(merchant, ALICE, 9_600_001n);
    h.providers[0]!.set({ refuse: (call) => (call.method === 'eth_getLogs' ? { code: -32005, message: 'limit exceeded' } : undefined) });
    const getLogs = () => h.providers[0]!.calls.filter((c) => c.method === 'eth_getLogs').length;
    await h.pass();
    await h.chain.mine(12);
    await h.pass(121 * SECOND);
    const asked = getLogs();
    const provider = h.w.providers[0]!;
    assert.deepEqual(provider.health.refuses, ['eth_getLogs at all (it does not serve eth_getLogs: even a one-block query is refused)']);
    assert.equal(provider.health.state, 'failing');
    const health = (await h.t.client().get('/api/v1/health')).body;
    const bsc = health.networks.find((n: any) => n.network === 'bsc-devnet');
    assert.deepEqual(bsc.providers[0].refuses, provider.health.refuses, 'no range cap of one block is claimed');
    assert.equal(bsc.providers[0].range_cap, null);
    // Later passes within the half hour leave it out: no more eth_getLogs to it.
    await h.pass(121 * SECOND);
    await h.pass(121 * SECOND);
    assert.equal(getLogs(), asked);
  },
);
