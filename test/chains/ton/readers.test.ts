/**
 * The two TON readers (toncenter v3 and tonapi v2) against a loopback server that answers in both
 * providers' shapes from one model chain (index-server.ts), honest and hostile: a payment both read
 * alike, an aborted transaction (listed by an index that does not filter them, or hidden behind a
 * record that says otherwise), an aborted or bounced receipt, a look-alike jetton (another master,
 * and one whose record claims USDT's master), a payment to another jetton wallet, a payment one
 * index omits (caught by comparing the two), a receipt not committed yet (then committed), a transfer
 * in flight, owner lists the provider finds too long, and tonapi's bulk limit.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { compareReads } from '../../../src/chains/agreement.js';
import { NETWORKS } from '../../../src/chains/networks.js';
import { payerFacingAddress } from '../../../src/chains/ton/address.js';
import { TonReadRefused } from '../../../src/chains/ton/reader.js';
import { TonHttpClient } from '../../../src/chains/ton/rpc.js';
import { TonapiReader } from '../../../src/chains/ton/tonapi.js';
import { ToncenterReader } from '../../../src/chains/ton/toncenter.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { startIndexServer, TonChainModel, type Hostility } from './index-server.js';

const network = NETWORKS['ton-mainnet'];
const USDT = network.tokens[0]!.contract;
const LOOKALIKE = `0:${'5a'.repeat(32)}`;
const addr = (label: string) => `0:${createHash('sha256').update(label).digest('hex')}`;
const MERCHANT = addr('merchant');
const PAYER = addr('payer');

const servers: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function rig(hostile: { toncenter?: Hostility; tonapi?: Hostility } = {}, model = new TonChainModel(USDT)) {
  const server = await startIndexServer(model, hostile);
  servers.push(server);
  const clock = new ManualClock();
  const sleep = async (ms: number) => clock.advance(ms);
  const client = (url: string, name: string) => new TonHttpClient({ url, name, clock, sleep, requestsPerSecond: 1000 });
  const toncenter = new ToncenterReader({ network, client: client(server.toncenterUrl, 'toncenter') });
  const tonapi = new TonapiReader({ network, client: client(server.tonapiUrl, 'tonapi') });
  async function read(from: bigint, recipients: string[] = [MERCHANT]) {
    const head = (await toncenter.finalHead()).number;
    assert.equal((await tonapi.finalHead()).number, head);
    const range = { from, to: head, recipients, finalAtOrBelow: head };
    return { head, tc: await toncenter.readTransfers(range), ta: await tonapi.readTransfers(range) };
  }
  return { model, server, toncenter, tonapi, read };
}

const reasons = (r: { dropped: Array<{ reason: string }> }) => r.dropped.map((d) => d.reason).filter((x) => x !== 'not_transfer');

test('a USDT payment is read alike by both indexes: the receiving transaction, its masterchain block, the sender, the exact amount and the comment', async () => {
  const { model, read } = await rig();
  const t = await model.pay(PAYER, MERCHANT, 12_345_678n, { comment: 'inv_42' });
  // The merchant's address given as wallets print it: the stored form is raw, compared canonically.
  const { tc, ta } = await read(900n, [payerFacingAddress(MERCHANT)]);
  assert.equal(tc.complete, true);
  assert.equal(ta.complete, true);
  assert.equal(tc.transfers.length, 1);
  const [x] = tc.transfers;
  assert.deepEqual(
    { ...x, amount: x!.amount.exact ? String(x!.amount.micros) : 'inexact' },
    {
      network: 'ton-mainnet',
      token: 'USDT',
      contract: USDT,
      from: PAYER,
      to: MERCHANT,
      raw: 12_345_678n,
      amount: '12345678',
      txHash: t.dest!.hash,
      logIndex: 0,
      blockNumber: BigInt(t.dest!.mc!),
      blockHash: `0:8000000000000000:${t.dest!.shardSeqno}`,
      blockTimeMs: (1_780_000_000 + t.dest!.mc!) * 1000,
      finality: 'final',
      reference: 'inv_42',
    },
  );
  const cmp = compareReads([
    { provider: 'toncenter', transfers: tc.transfers },
    { provider: 'tonapi', transfers: ta.transfers },
  ]);
  assert.equal(cmp.agreed.length, 1);
  assert.deepEqual(cmp.disagreements, []);
});

test('aborted transactions never pay: a listed aborted record, a record that hides an aborted transaction, an aborted or bounced receipt', async () => {
  const { model, read } = await rig({
    toncenter: {
      showAborted: true,
      // An index whose record says "not aborted" about a transaction its own trace shows aborted.
      record: (t, row) => (t.amount === 2_000_000n ? { ...row, transaction_aborted: false } : row),
    },
  });
  await model.pay(PAYER, MERCHANT, 1_000_000n, { source: { aborted: true } });
  await model.pay(PAYER, MERCHANT, 2_000_000n, { source: { aborted: true } });
  await model.pay(PAYER, MERCHANT, 3_000_000n, { dest: { aborted: true } });
  await model.pay(PAYER, MERCHANT, 4_000_000n, { dest: { bounced: true } });
  const { tc, ta } = await read(900n);
  assert.deepEqual(tc.transfers, []);
  assert.deepEqual(ta.transfers, []);
  assert.deepEqual(reasons(tc).sort(), ['aborted', 'aborted', 'aborted', 'bounced']);
  assert.deepEqual(reasons(ta).sort(), ['aborted', 'bounced']);
  assert.equal(tc.complete, true);
});

test('a look-alike jetton, a record that claims USDT for it, and USDT sent to another jetton wallet are not payments', async () => {
  const { model, read } = await rig({
    toncenter: {
      ignoreMasterFilter: true,
      record: (t, row) => (t.amount === 2_000_000n ? { ...row, jetton_master: USDT.toUpperCase() } : row),
    },
  });
  await model.pay(PAYER, MERCHANT, 1_000_000n, { master: LOOKALIKE });
  await model.pay(PAYER, MERCHANT, 2_000_000n, { master: LOOKALIKE });
  await model.pay(PAYER, MERCHANT, 3_000_000n, { destWallet: addr('some other jetton wallet') });
  const { tc, ta } = await read(900n);
  assert.deepEqual(tc.transfers, []);
  assert.deepEqual(ta.transfers, [], 'tonapi reads only the derived USDT wallet, where none of these arrived');
  assert.deepEqual(reasons(tc).sort(), ['other_contract', 'wrong_wallet', 'wrong_wallet']);
});

test('the master and owner compare in canonical form whatever the case or form a record uses', async () => {
  const { model, read } = await rig({
    toncenter: {
      record: (_t, row) => ({ ...row, jetton_master: 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs', destination: payerFacingAddress(MERCHANT) }),
    },
  });
  await model.pay(PAYER, MERCHANT, 5_000_000n);
  const { tc } = await read(900n);
  assert.equal(tc.transfers.length, 1);
});

test('a payment toncenter omits is shown by tonapi, and comparing the reads makes it a disagreement, not a payment on one word', async () => {
  const model = new TonChainModel(USDT);
  const t = await model.pay(PAYER, MERCHANT, 7_000_000n);
  const { read } = await rig({ toncenter: { omit: new Set([t.source.hash]) } }, model);
  const { tc, ta } = await read(900n);
  assert.equal(tc.transfers.length, 0);
  assert.equal(ta.transfers.length, 1);
  const cmp = compareReads([
    { provider: 'toncenter', transfers: tc.transfers },
    { provider: 'tonapi', transfers: ta.transfers },
  ]);
  assert.deepEqual(cmp.agreed, []);
  assert.equal(cmp.disagreements.length, 1);
  assert.deepEqual(
    cmp.disagreements[0]!.versions.map((v) => [v.provider, v.transfer?.txHash]),
    [
      ['toncenter', undefined],
      ['tonapi', t.dest!.hash],
    ],
  );
});

test('a receipt not committed in the masterchain is not read; the range stays open until it is, then both read it', async () => {
  const { model, read } = await rig();
  const t = await model.pay(PAYER, MERCHANT, 9_000_000n, { dest: { mc: null, finality: 'pending' } });
  let { tc, ta } = await read(990n);
  assert.deepEqual(tc.transfers, []);
  assert.equal(tc.complete, false, 'the sender committed within the range, the receipt not yet');
  assert.deepEqual(reasons(tc), ['not_committed']);
  assert.deepEqual(ta.transfers, []);
  assert.deepEqual(reasons(ta), ['not_committed']);
  // Committed two blocks later: the same range read again (to the new head) holds it.
  model.head += 2;
  t.dest = { ...t.dest!, mc: model.head, finality: 'finalized', shardSeqno: 50_001 + model.head - 1 };
  ({ tc, ta } = await read(990n));
  assert.equal(tc.complete, true);
  assert.deepEqual(
    tc.transfers.map((x) => x.blockNumber),
    [BigInt(model.head)],
  );
  assert.deepEqual(
    ta.transfers.map((x) => x.blockNumber),
    [BigInt(model.head)],
  );
});

test('a transfer in flight (sent, not yet received) keeps the range open; one received before the range is left to its own read', async () => {
  const { model, read } = await rig();
  await model.pay(PAYER, MERCHANT, 1_000_000n, { dest: null });
  await model.pay(PAYER, MERCHANT, 2_000_000n, { at: 950 });
  const { tc } = await read(990n);
  assert.equal(tc.complete, false);
  assert.deepEqual(reasons(tc).sort(), ['not_committed', 'outside_range']);
});

test('a provider that refuses a long owner list is asked with half as many, remembered; tonapi bulk limit is learned from its refusal', async () => {
  const owners = [1, 2, 3, 4, 5].map((i) => addr(`merchant ${i}`));
  const { model, read, toncenter } = await rig({ toncenter: { maxOwners: 2 }, tonapi: { bulkLimit: 2 } });
  for (const o of owners) await model.pay(PAYER, o, 1_000_000n);
  const { tc, ta } = await read(900n, owners);
  assert.equal(tc.transfers.length, 5);
  assert.equal(ta.transfers.length, 5);
  assert.equal(toncenter.ownersPerRequest(), 2);
});

test('reads cost one jetton/transfers and one traces request; an overlapping read asks for no trace again', async () => {
  const { model, read, server } = await rig();
  await model.pay(PAYER, MERCHANT, 1_000_000n);
  const before = server.counts.toncenter;
  await read(900n);
  // masterchainInfo (head), blocks (the window start, not yet known), jetton/transfers, traces.
  assert.equal(server.counts.toncenter - before, 4);
  model.head += 1;
  const again = server.counts.toncenter;
  const { tc } = await read(900n);
  assert.equal(tc.transfers.length, 1);
  assert.equal(server.counts.toncenter - again, 2, 'the head and jetton/transfers only');
});

test('a provider on another network, or whose head goes back, is refused', async () => {
  const model = new TonChainModel(USDT);
  model.globalId = -3;
  const { toncenter, tonapi } = await rig({}, model);
  await assert.rejects(toncenter.checkNetwork(), (e: unknown) => e instanceof TonReadRefused && e.reason === 'wrong_chain');
  await assert.rejects(tonapi.checkNetwork(), (e: unknown) => e instanceof TonReadRefused && e.reason === 'wrong_chain');
  await toncenter.finalHead();
  model.head -= 3;
  await assert.rejects(toncenter.finalHead(), (e: unknown) => e instanceof TonReadRefused && e.reason === 'implausible_head');
});
