/**
 * The Solana watcher end to end: the real SPL Token program (litesvm) makes the payments, two
 * loopback JSON-RPC providers serve its finalized history in a node's shapes, and the real server on
 * a real database watches `solana-devnet`. A payment into the owner's token account confirms the
 * invoice with its event; a failed transaction pays nothing; a second provider that omits a payment
 * holds it as a durable dispute (not confirmed) until both read it alike; a Solana Pay reference
 * chooses among invoices of the same amount.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountRole, address, type Address, type KeyPairSigner } from '@solana/kit';
import * as token from '@solana-program/token';
import { NETWORKS } from '../../src/chains/networks.js';
import { optionReference } from '../../src/chains/payment-reference.js';
import { MINUTE } from '../../src/lib/clock.js';
import { listOpenDisputes } from '../../src/payments/scan.repo.js';
import { startSolanaRpc, type SolanaRpcServer } from '../chains/solana/solana-rpc.js';
import { SvmChain, USDT } from '../chains/solana/svm.js';
import { eventsOf, getInvoice, newMerchantId, transfersOf } from '../helpers/chain-fixtures.js';
import { associatedTokenAddress } from '../../src/chains/solana/address.js';
import { newId } from '../../src/lib/ids.js';
import { startAccountHarness, type AccountHarness } from './account-harness.js';

const network = NETWORKS['solana-devnet'];
let chain: SvmChain;
let a: SolanaRpcServer;
let b: SolanaRpcServer;
let h: AccountHarness;
let payer: KeyPairSigner;
let payerUsdt: Address;

before(async () => {
  chain = await SvmChain.start();
  payer = await chain.wallet();
  payerUsdt = await chain.fund(payer.address, USDT, 1_000_000_000n);
  chain.ledger.advance(chain.slot + 40n, 32n);
  a = await startSolanaRpc(chain.ledger);
  b = await startSolanaRpc(chain.ledger);
  h = await startAccountHarness('solana-devnet', [{ url: a.url }, { url: b.url }], chain.ledger.blockTime(chain.ledger.finalized) * 1000);
});
after(async () => {
  await h?.close();
  await a?.close();
  await b?.close();
});

/** A merchant's owner address (its USDT token account is created by the first payment, as a payer's wallet does). */
async function merchant(): Promise<Address> {
  return (await chain.wallet()).address;
}

/** Pays `amount` raw USDT to the owner's token account (a Solana Pay reference key after the authority, if given), in a slot not before the app's clock, and finalizes it. */
async function pay(owner: Address, amount: bigint, reference?: string): Promise<string> {
  const atClock = BigInt(Math.ceil((h.t.clock.now() / 1000 - chain.ledger.baseTime) / 0.4)) + 3n;
  if (chain.slot < atClock) chain.slot = atClock;
  const ata = await chain.ata(owner, USDT);
  const ix = token.getTransferCheckedInstruction({ source: payerUsdt, mint: address(USDT), destination: ata, authority: payer, amount, decimals: 6 });
  const withRef = reference ? { ...ix, accounts: [...ix.accounts, { address: address(reference), role: AccountRole.READONLY }] } : ix;
  const create = token.getCreateAssociatedTokenIdempotentInstruction({ payer, ata, owner, mint: address(USDT) });
  const entry = await chain.send([create, withRef as typeof ix], payer);
  chain.ledger.advance(chain.slot + 40n, 32n);
  return entry.signature;
}

test('solana-devnet: a USDT payment into the owner token account confirms its invoice (invoice.confirmed), read finalized through both providers', async () => {
  const owner = await merchant();
  const invoice = await h.invoice(owner, 10_000_001n);
  await h.pass(); // the first sweep: the cursor at the final head
  assert.equal(h.w.figures.busy, true);
  const sig = await pay(owner, 10_000_001n);
  await h.pass();
  const inv = await getInvoice(h.t, invoice.id);
  assert.equal(inv.status, 'confirmed');
  assert.equal(inv.txHash, sig);
  const events = await eventsOf(h.t, invoice.id);
  assert.deepEqual(
    events.map((e) => e.type),
    ['invoice.confirmed'],
  );
  const tx = (events[0]!.data as { transaction: Record<string, unknown> }).transaction;
  assert.equal(tx.tx_hash, sig);
  assert.equal(tx.network, 'solana-devnet');
  assert.equal(tx.to, owner);
  // Both providers were asked for the open account's signatures.
  for (const s of [a, b]) assert.ok(s.calls.some((c) => c.method === 'getSignaturesForAddress'));
  const health = await h.t.client().get('/api/v1/health');
  const entry = (health.body.networks as Array<Record<string, any>>).find((n) => n.network === 'solana-devnet')!;
  assert.equal(entry.family, 'solana');
  assert.equal(entry.state, 'running');
  assert.equal(entry.providers.length, 2);
  assert.equal(entry.disputes, 0);
});

test('solana-devnet: a failed transaction (meta.err) pays nothing; the invoice stays pending and nothing is recorded', async () => {
  const owner = await merchant();
  const invoice = await h.invoice(owner, 5_000_000_002n);
  await h.pass();
  // More than the payer holds: the Token program fails it, and the ledger keeps it with meta.err.
  const sig = await pay(owner, 5_000_000_002n);
  assert.notEqual(chain.ledger.transactions.get(sig)!.err, null);
  await h.pass();
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending');
  assert.equal((await transfersOf(h.t)).filter((r) => r.tx_hash === sig).length, 0);
});

test('solana-devnet: a second provider that omits a payment holds it as a durable dispute, not confirmed, until both read it alike', async () => {
  const owner = await merchant();
  const invoice = await h.invoice(owner, 7_000_003n);
  await h.pass();
  let hidden = '';
  b.set({
    result: (call, result) => (call.method === 'getSignaturesForAddress' && Array.isArray(result) ? result.filter((e: any) => e.signature !== hidden) : result),
  });
  hidden = await pay(owner, 7_000_003n);
  await h.pass();
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending', 'nothing moves on one provider word');
  const disputes = await listOpenDisputes(h.t.deps.db, network);
  assert.equal(disputes.length, 1);
  assert.equal(disputes[0]!.txHash, hidden);
  const health = await h.t.client().get('/api/v1/health');
  assert.equal((health.body.networks as Array<Record<string, any>>).find((n) => n.network === 'solana-devnet')!.disputes, 1);
  // The provider answers honestly again: the next sweep reads the held slot alike and confirms.
  b.set({});
  await h.pass(10 * MINUTE);
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'confirmed');
  assert.equal((await listOpenDisputes(h.t.deps.db, network)).length, 0);
});

test('solana-devnet: a Solana Pay reference chooses among invoices of the same amount; without one the newest in its window is paid', async () => {
  const owner = await merchant();
  const first = await h.invoice(owner, 3_000_004n);
  // The second is the newer: without a reference the amount alone would pay it first.
  h.t.clock.advance(1000);
  const second = await h.invoice(owner, 3_000_005n);
  // Two invoices asking the same amount (as after a reuse): only the reference tells them apart.
  await h.t.deps.db.updateTable('invoices').set({ payable_amount: 3_000_004 }).where('id', '=', second.id).execute();
  await h.pass();
  const sig = await pay(owner, 3_000_004n, optionReference(network, first.id, 0));
  await h.pass();
  assert.equal((await getInvoice(h.t, first.id)).status, 'confirmed');
  assert.equal((await getInvoice(h.t, first.id)).txHash, sig);
  assert.equal((await getInvoice(h.t, second.id)).status, 'pending');
  // No reference: the amount alone pays the other one.
  await pay(owner, 3_000_004n);
  await h.pass();
  assert.equal((await getInvoice(h.t, second.id)).status, 'confirmed');
});

test('solana-devnet: an account with no open invoice is not polled; the 10-minute sweep records its payment (unmatched), and a restart reads on from the cursor', async () => {
  const owner = await merchant();
  const merchantId = await newMerchantId(h.t);
  const id = newId('wal');
  await h.t.deps.db
    .insertInto('wallets')
    .values({ id, merchant_id: merchantId, label: 'Main', address: owner, network: 'solana-devnet', created_at: h.t.clock.now() })
    .execute();
  await h.t.deps.db.insertInto('wallet_networks').values({ wallet_id: id, network: 'solana-devnet', address: owner }).execute();
  // Another merchant's invoice keeps the network busy (polled every 10 s).
  await h.invoice(await merchant(), 4_000_007n);
  await h.pass(10 * MINUTE);
  const sig = await pay(owner, 2_500_000n);
  const ata = associatedTokenAddress(owner, USDT);
  const before = a.calls.length;
  await h.pass();
  assert.equal(a.calls.slice(before).filter((c) => c.method === 'getSignaturesForAddress' && c.params[0] === ata).length, 0, 'not polled');
  assert.equal((await transfersOf(h.t)).filter((r) => r.tx_hash === sig).length, 0);
  // A restart forgets how far the polls read: every account starts again at the durable cursor.
  h.w.readThrough.clear();
  await h.pass(10 * MINUTE);
  const row = (await transfersOf(h.t)).find((r) => r.tx_hash === sig);
  assert.equal(row?.kind, 'unmatched');
});

// Last in the file: the provider's client keeps the 2-minute pause in wall time.
test('solana-devnet: a provider answering 429 with a long Retry-After backs off (shown in /health), and nothing moves on the other one alone', async () => {
  const owner = await merchant();
  const invoice = await h.invoice(owner, 9_000_006n);
  await h.pass();
  await pay(owner, 9_000_006n);
  b.set({ rateLimit: { times: 1_000, retryAfter: '120' } });
  await h.pass();
  const health = (await h.t.client().get('/api/v1/health')).body;
  const entry = health.networks.find((n: any) => n.network === 'solana-devnet');
  const limited = entry.providers[1];
  assert.equal(limited.state, 'backing_off');
  assert.ok(limited.refuses.includes('bursts of requests (HTTP 429 or a rate-limit error)'));
  assert.ok(Date.parse(limited.retry_at) >= h.t.clock.now() + 100_000, 'out for its Retry-After');
  await h.pass();
  assert.equal((await getInvoice(h.t, invoice.id)).status, 'pending');
  assert.match(h.w.figures.reason ?? '', /nothing moves on one provider's word/);
  assert.equal(entry.state, 'degraded');
});
