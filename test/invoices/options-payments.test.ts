/**
 * Payments of an invoice with several options (docs/payments.md, "Invoices with several options"),
 * applied as a watcher applies them (applyChainPayment in one write transaction, in the shape the
 * watchers hand over): the first verified exact payment on any option confirms the invoice and
 * fixes it to that option, the others are released with their reservations; a payment on a released
 * option afterwards is late; expiry and cancel release every option; a short payment within the
 * merchant's tolerance is matched per option.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTransaction } from '../../src/db/database.js';
import { expireScanned } from '../../src/invoices/invoice-expiry.js';
import type { TestApp } from '../helpers/app.js';
import type { DocumentValidator } from '../helpers/openapi-validator.js';
import { ADDRESSES, createInvoice, micro } from '../helpers/shop.js';
import { formatAmount, micros } from '../../src/lib/amounts.js';
import { applyPayment, assertDocumented, contractOf, EVM_ADDRESSES, multichainShop, startMultichainApp, type MultichainShop } from '../helpers/multichain.js';
import { USDT_CONTRACT } from '../helpers/tron-samples.js';

let t: TestApp;
let validator: DocumentValidator;
before(async () => {
  ({ t, validator } = await startMultichainApp());
});
after(() => t.close());

const OPTIONS = [
  { network: 'tron-mainnet', token: 'USDT' },
  { network: 'bsc-mainnet', token: 'USDT' },
  { network: 'ethereum-mainnet', token: 'USDC' },
];
const BSC_USDT = contractOf('bsc-mainnet', 'USDT');
const ETH_USDC = contractOf('ethereum-mainnet', 'USDC');

async function offering(s: MultichainShop, amount: string, extra: Record<string, unknown> = {}) {
  const res = await createInvoice(s.client, { amount, wallet_id: s.walletId, options: OPTIONS, ...extra });
  assert.equal(res.status, 201, res.text);
  return res.body.invoice;
}

async function reservations(invoiceId: string): Promise<Record<string, number>> {
  const rows = await t.deps.db.selectFrom('amount_reservations').selectAll().where('invoice_id', '=', invoiceId).execute();
  return Object.fromEntries(rows.map((r) => [r.network, Number(r.reserved_until)]));
}

async function eventsOf(invoiceId: string) {
  const rows = await t.deps.db.selectFrom('events').select(['type', 'data']).where('invoice_id', '=', invoiceId).orderBy('created_at').orderBy('id').execute();
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) }));
}

test('option 1 paid: the invoice is confirmed and fixed to BSC USDT, the others released with their reservations; a later payment on a released one is late', async () => {
  const s = await multichainShop(t, ADDRESSES[0], EVM_ADDRESSES[0]);
  const inv = await offering(s, '50');
  const [tron, bsc, eth] = inv.options;
  t.clock.advance(60_000);
  // As a provider may spell them: the contract and the recipient in lower case.
  const paid = await applyPayment(t, {
    network: 'bsc-mainnet',
    token: 'USDT',
    to: EVM_ADDRESSES[0]!.toLowerCase(),
    tokenContract: BSC_USDT.toLowerCase(),
    amount: bsc.payable_amount,
  });
  assert.deepEqual([paid.kind, paid.invoiceId], ['confirmed', inv.id]);
  const now = t.clock.now();

  const got = await s.client.get(`/invoices/${inv.id}`);
  assertDocumented(validator, 'GET', '/api/v1/invoices/{id}', got);
  const after = got.body.invoice;
  assert.equal(after.status, 'confirmed');
  assert.equal(after.network, 'bsc-mainnet');
  assert.equal(after.token, 'USDT');
  assert.equal(after.token_contract, BSC_USDT);
  assert.equal(after.wallet_id, s.evmWalletId);
  assert.equal(after.wallet_address, EVM_ADDRESSES[0]);
  assert.equal(after.payable_amount, bsc.payable_amount);
  assert.equal(after.adjustment, `0.${bsc.payable_amount.split('.')[1]}`);
  assert.equal(after.tx_hash, paid.txHash);
  assert.equal(after.amount_received, bsc.payable_amount);
  // The options keep their order: option 0 still says what it asked, released.
  assert.deepEqual(
    after.options.map((o: any) => [o.network, o.address, o.payable_amount, o.status]),
    [
      ['tron-mainnet', tron.address, tron.payable_amount, 'released'],
      ['bsc-mainnet', bsc.address, bsc.payable_amount, 'paid'],
      ['ethereum-mainnet', eth.address, eth.payable_amount, 'released'],
    ],
  );
  // The released options' reservations end now; the paying one keeps its 90 days.
  assert.deepEqual(await reservations(inv.id), { 'tron-mainnet': now, 'bsc-mainnet': Date.parse(inv.reserved_until), 'ethereum-mainnet': now });
  const confirmed = (await eventsOf(inv.id)).find((e) => e.type === 'invoice.confirmed')!;
  assert.deepEqual(confirmed.data.invoice, after);
  assert.equal(confirmed.data.option.network, 'bsc-mainnet');
  assert.equal(confirmed.data.option.status, 'paid');
  assert.equal(confirmed.data.transaction.tx_hash, paid.txHash);

  // The payer also paid on Ethereum, then on TRON: each a late payment of the invoice, with its network.
  t.clock.advance(60_000);
  const late = await applyPayment(t, { network: 'ethereum-mainnet', token: 'USDC', to: EVM_ADDRESSES[0]!, amount: eth.payable_amount });
  assert.deepEqual([late.kind, late.invoiceId], ['late', inv.id]);
  t.clock.advance(1000);
  const lateTron = await applyPayment(t, { network: 'tron-mainnet', token: 'USDT', to: ADDRESSES[0], amount: tron.payable_amount });
  assert.deepEqual([lateTron.kind, lateTron.invoiceId], ['late', inv.id]);
  const lates = (await eventsOf(inv.id)).filter((e) => e.type === 'invoice.late_payment');
  assert.deepEqual(
    lates.map((e) => [e.data.option.network, e.data.option.status, e.data.transaction.tx_hash]),
    [
      ['ethereum-mainnet', 'released', late.txHash],
      ['tron-mainnet', 'released', lateTron.txHash],
    ],
  );
  const final = (await s.client.get(`/invoices/${inv.id}`)).body.invoice;
  assert.equal(final.status, 'confirmed');
  assert.equal(final.network, 'bsc-mainnet');
  assert.equal(final.amount_received, formatAmount(micros(micro(bsc.payable_amount) + micro(eth.payable_amount) + micro(tron.payable_amount))));
  // The same amount paid again on BSC is late too (the invoice row is the paying option now).
  assert.equal((await applyPayment(t, { network: 'bsc-mainnet', token: 'USDT', to: EVM_ADDRESSES[0]!, amount: bsc.payable_amount })).kind, 'late');
});

test('option 0 paid: the invoice keeps its network and the other options are released', async () => {
  const s = await multichainShop(t, ADDRESSES[1], EVM_ADDRESSES[1]);
  const inv = await offering(s, '12');
  const paid = await applyPayment(t, { network: 'tron-mainnet', token: 'USDT', to: ADDRESSES[1], amount: inv.payable_amount });
  assert.deepEqual([paid.kind, paid.invoiceId], ['confirmed', inv.id]);
  const after = (await s.client.get(`/invoices/${inv.id}`)).body.invoice;
  assert.equal(after.network, 'tron-mainnet');
  assert.equal(after.token_contract, USDT_CONTRACT);
  assert.deepEqual(
    after.options.map((o: any) => o.status),
    ['paid', 'released', 'released'],
  );
  const now = t.clock.now();
  assert.deepEqual(await reservations(inv.id), { 'tron-mainnet': Date.parse(inv.reserved_until), 'bsc-mainnet': now, 'ethereum-mainnet': now });
  // A wrong network's transfer of an option's amount pays nothing: ETH USDC's amount sent as BSC USDC.
  const wrong = await applyPayment(t, { network: 'bsc-mainnet', token: 'USDC', to: EVM_ADDRESSES[1]!, amount: inv.options[2].payable_amount });
  assert.deepEqual([wrong.kind, wrong.invoiceId], ['unmatched', null]);
});

test('expiry and cancel release every option; a payment made in time and seen later still confirms, through its option', async () => {
  const s = await multichainShop(t, ADDRESSES[2], EVM_ADDRESSES[2]);
  const inv = await offering(s, '8', { expires_in_minutes: 10 });
  const createdAt = Date.parse(inv.created_at);
  t.clock.advance(11 * 60_000);
  const expired = await writeTransaction(t.deps.db, (trx, tx) => expireScanned(t.deps, trx, tx, { scannedUntil: t.clock.now(), gaps: [] }, t.clock.now()));
  assert.ok(expired.some((e) => e.id === inv.id));
  const now = t.clock.now();
  const after = (await s.client.get(`/invoices/${inv.id}`)).body.invoice;
  assert.equal(after.status, 'expired');
  assert.deepEqual(
    after.options.map((o: any) => o.status),
    ['released', 'released', 'released'],
  );
  // The options' reservations end; the invoice's own amount keeps its 90 days, as every invoice's does.
  assert.deepEqual(await reservations(inv.id), { 'tron-mainnet': Date.parse(inv.reserved_until), 'bsc-mainnet': now, 'ethereum-mainnet': now });
  const expiredEvent = (await eventsOf(inv.id)).find((e) => e.type === 'invoice.expired')!;
  assert.deepEqual(expiredEvent.data.invoice.options, after.options);

  // Sent on Ethereum inside the window, seen after the expiry: the invoice is paid through that option.
  const paid = await applyPayment(t, {
    network: 'ethereum-mainnet',
    token: 'USDC',
    to: EVM_ADDRESSES[2]!,
    amount: inv.options[2].payable_amount,
    blockTimestamp: createdAt + 5 * 60_000,
  });
  assert.deepEqual([paid.kind, paid.invoiceId], ['confirmed', inv.id]);
  const confirmed = (await s.client.get(`/invoices/${inv.id}`)).body.invoice;
  assert.equal(confirmed.network, 'ethereum-mainnet');
  assert.equal(confirmed.token_contract, ETH_USDC);
  assert.deepEqual(
    confirmed.options.map((o: any) => o.status),
    ['released', 'released', 'paid'],
  );

  // Cancel: the same release.
  const other = await offering(s, '9');
  const cancelled = await s.client.post(`/invoices/${other.id}/cancel`, {});
  assert.equal(cancelled.status, 200, cancelled.text);
  assertDocumented(validator, 'POST', '/api/v1/invoices/{id}/cancel', cancelled);
  assert.deepEqual(
    cancelled.body.invoice.options.map((o: any) => o.status),
    ['released', 'released', 'released'],
  );
  const at = t.clock.now();
  assert.deepEqual(await reservations(other.id), { 'tron-mainnet': Date.parse(other.reserved_until), 'bsc-mainnet': at, 'ethereum-mainnet': at });
  // After the window, a payment on a cancelled invoice's option is late.
  t.clock.advance(60_000);
  assert.deepEqual(
    Object.values(await applyPayment(t, { network: 'bsc-mainnet', token: 'USDT', to: EVM_ADDRESSES[2]!, amount: other.options[1].payable_amount })).slice(0, 2),
    ['late', other.id],
  );
});

test('a short payment on an option within the merchant tolerance is matched to it, and auto-accepted through it', async () => {
  const s = await multichainShop(t, ADDRESSES[3], EVM_ADDRESSES[0]);
  assert.equal((await s.client.patch('/me', { underpayment_tolerance: '1.00', underpayment_auto_accept: true })).status, 200);
  const inv = await offering(s, '30', { options: [OPTIONS[2], OPTIONS[1]] });
  const bsc = inv.options[1];
  // A whole USDT short (an exchange's fee), the last six decimals kept.
  const short = formatAmount(micros(micro(bsc.payable_amount) - 1_000_000n));
  const paid = await applyPayment(t, { network: 'bsc-mainnet', token: 'USDT', to: EVM_ADDRESSES[0]!, amount: short });
  assert.deepEqual([paid.kind, paid.invoiceId], ['confirmed', inv.id]);
  const after = (await s.client.get(`/invoices/${inv.id}`)).body.invoice;
  assertDocumented(validator, 'GET', '/api/v1/invoices/{id}', { status: 200, body: { invoice: after } });
  assert.equal(after.status, 'confirmed');
  assert.equal(after.resolution, 'tolerance');
  assert.equal(after.network, 'bsc-mainnet');
  assert.equal(after.amount_received, short);
  assert.deepEqual(
    after.options.map((o: any) => [o.network, o.status]),
    [
      ['ethereum-mainnet', 'released'],
      ['bsc-mainnet', 'paid'],
    ],
  );
  const types = (await eventsOf(inv.id)).map((e) => [e.type, e.data.option?.network]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  assert.deepEqual(types, [
    ['invoice.confirmed', 'bsc-mainnet'],
    ['invoice.created', undefined],
    ['invoice.partially_paid', 'bsc-mainnet'],
  ]);
});
