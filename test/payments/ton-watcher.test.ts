/**
 * The TON watcher end to end: a loopback index answering in toncenter v3's and tonapi v2's shapes
 * from one model chain (test/chains/ton/index-server.ts) as the two configured providers, and the
 * real server on a real database watching `ton-devnet`. An aborted transfer pays nothing and the good
 * one confirms its invoice; an index that omits a payment holds it as a durable dispute until both
 * read it alike; the comment a wallet put in the transfer chooses among invoices of one amount.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { NETWORKS } from '../../src/chains/networks.js';
import { optionReference } from '../../src/chains/payment-reference.js';
import { MINUTE } from '../../src/lib/clock.js';
import { listOpenDisputes } from '../../src/payments/scan.repo.js';
import { startIndexServer, TonChainModel } from '../chains/ton/index-server.js';
import { eventsOf, getInvoice, transfersOf } from '../helpers/chain-fixtures.js';
import { startAccountHarness, type AccountHarness } from './account-harness.js';

const network = NETWORKS['ton-devnet'];
const addr = (label: string) => `0:${createHash('sha256').update(label).digest('hex')}`;
const PAYER = addr('ton payer');
const model = new TonChainModel(network.tokens[0]!.contract);
model.globalId = network.chainId!;
const omit = new Set<string>();
let server: Awaited<ReturnType<typeof startIndexServer>>;
let h: AccountHarness;

before(async () => {
  server = await startIndexServer(model, { toncenter: { omit } });
  h = await startAccountHarness(
    'ton-devnet',
    [
      { url: server.toncenterUrl, kind: 'toncenter' },
      { url: server.tonapiUrl, kind: 'tonapi' },
    ],
    (1_780_000_000 + model.head) * 1000,
  );
});
after(async () => {
  await h?.close();
  await server?.close();
});

/** Moves the model's masterchain past the app's clock, so a payment made now is after the invoice. */
function sync(): void {
  model.head = Math.max(model.head, Math.ceil(h.t.clock.now() / 1000) - 1_780_000_000 + 10);
}

test('ton-devnet: an aborted transfer pays nothing; the good one confirms the invoice (invoice.confirmed) with its comment', async () => {
  const owner = addr('merchant one');
  const invoice = await h.invoice(owner, 12_000_001n);
  await h.pass(); // the first sweep: the cursor at the masterchain head
  sync();
  const aborted = await model.pay(PAYER, owner, 12_000_001n, { dest: { aborted: true } });
  await h.pass();
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending', 'an aborted receipt moved no jetton');
  assert.equal((await transfersOf(h.t)).filter((r) => r.tx_hash === aborted.dest!.hash).length, 0);
  sync();
  const good = await model.pay(PAYER, owner, 12_000_001n, { comment: 'thanks' });
  await h.pass();
  const inv = await getInvoice(h.t, invoice.id);
  assert.equal(inv.status, 'confirmed');
  assert.equal(inv.txHash, good.dest!.hash);
  const events = await eventsOf(h.t, invoice.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['invoice.confirmed'],
  );
  const health = (await h.t.client().get('/api/v1/health')).body;
  const entry = health.networks.find((n: any) => n.network === 'ton-devnet');
  assert.equal(entry.family, 'ton');
  assert.equal(entry.providers.length, 2);
  assert.equal(entry.state, 'running');
  assert.equal(entry.reason, null);
});

test('ton-devnet: an index that omits a payment holds it as a durable dispute, not confirmed, until both read it alike', async () => {
  const owner = addr('merchant two');
  const invoice = await h.invoice(owner, 8_000_002n);
  await h.pass();
  sync();
  const t = await model.pay(PAYER, owner, 8_000_002n, { source: {} });
  omit.add(t.source.hash);
  await h.pass();
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending', 'nothing moves on one index word');
  const disputes = await listOpenDisputes(h.t.deps.db, network);
  assert.equal(disputes.length, 1);
  assert.equal((await h.t.client().get('/api/v1/health')).body.networks.find((n: any) => n.network === 'ton-devnet').disputes, 1);
  omit.clear();
  await h.pass(10 * MINUTE);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed');
  assert.equal((await listOpenDisputes(h.t.deps.db, network)).length, 0);
});

test("ton-devnet: the transfer's comment chooses among invoices of the same amount; without one the newest is paid", async () => {
  const owner = addr('merchant three');
  const first = await h.invoice(owner, 5_000_003n);
  h.t.clock.advance(1000);
  const second = await h.invoice(owner, 5_000_004n);
  await h.t.deps.db.updateTable('invoices').set({ payable_amount: 5_000_003 }).where('id', '=', second.id).execute();
  await h.pass();
  sync();
  await model.pay(PAYER, owner, 5_000_003n, { comment: optionReference(network, first.id, 0) });
  await h.pass();
  assert.equal((await getInvoice(h.t, first.id)).status, 'confirmed');
  assert.equal((await getInvoice(h.t, second.id)).status, 'pending');
  sync();
  await model.pay(PAYER, owner, 5_000_003n);
  await h.pass();
  assert.equal((await getInvoice(h.t, second.id)).status, 'confirmed');
});
