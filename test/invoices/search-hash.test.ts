/**
 * The invoice search (`q`) by a transaction hash, through the real server on a migrated database:
 * an EVM hash is stored with 0x, a TRON id without; either is found given with or without 0x.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice } from '../helpers/shop.js';
import { EVM_ADDRESSES, multichainShop, recordFinal, startMultichainApp } from '../helpers/multichain.js';

let t: TestApp;
before(async () => {
  ({ t } = await startMultichainApp());
});
after(() => t.close());

test('the invoice search finds an invoice by the EVM transaction hash that paid it, with its 0x or without, in either case', async () => {
  const s = await multichainShop(t, ADDRESSES[2], EVM_ADDRESSES[2]);
  const created = await createInvoice(s.client, { amount: '12', wallet_id: s.evmWalletId, network: 'bsc-mainnet', token: 'USDT' });
  assert.equal(created.status, 201, created.text);
  const inv = created.body.invoice;
  const txHash = await recordFinal(t, 'bsc-mainnet', 'USDT', s.evmAddress, BigInt(inv.payable_amount.replace('.', '')));
  assert.equal((await s.client.get(`/invoices/${inv.id}`)).body.invoice.tx_hash, txHash);
  for (const q of [txHash, txHash.slice(2), txHash.toUpperCase().replace('0X', '0x')]) {
    const res = await s.client.get(`/invoices?q=${encodeURIComponent(q)}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.invoices.map((i: { id: string }) => i.id),
      [inv.id],
      q,
    );
  }
});

test('a TRON transaction id (stored without 0x) is still found, as given or with 0x', async () => {
  const s = await multichainShop(t, ADDRESSES[3], EVM_ADDRESSES[1]);
  const created = await createInvoice(s.client, { amount: '13', wallet_id: s.walletId });
  assert.equal(created.status, 201, created.text);
  const inv = created.body.invoice;
  const txId = 'd'.repeat(63) + '1';
  await recordFinal(t, 'tron-mainnet', 'USDT', s.address, BigInt(inv.payable_amount.replace('.', '')), { txHash: txId, from: ADDRESSES[0] });
  assert.equal((await s.client.get(`/invoices/${inv.id}`)).body.invoice.tx_hash, txId);
  for (const q of [txId, `0x${txId}`, txId.toUpperCase()]) {
    const res = await s.client.get(`/invoices?q=${encodeURIComponent(q)}`);
    assert.deepEqual(
      res.body.invoices.map((i: { id: string }) => i.id),
      [inv.id],
      q,
    );
  }
});

test("an EVM wallet's address finds its invoices, in any letter case", async () => {
  const s = await multichainShop(t, ADDRESSES[2], EVM_ADDRESSES[2]);
  const inv = (await createInvoice(s.client, { amount: '14', wallet_id: s.evmWalletId, network: 'base-mainnet', token: 'USDC' })).body.invoice;
  for (const q of [EVM_ADDRESSES[2]!, EVM_ADDRESSES[2]!.toLowerCase()]) {
    const res = await s.client.get(`/invoices?q=${encodeURIComponent(q)}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.invoices.map((i: { id: string }) => i.id),
      [inv.id],
      q,
    );
  }
});
