/**
 * "I already paid" on an invoice of an EVM network (or with EVM options), through the real server
 * on a migrated database: a 0x hash is taken in the EVM form (kept with its 0x), answered from what
 * the watcher recorded or deferred to it; a hash in another network's form is a 400 naming the form
 * the invoice's networks use; a TRON invoice keeps taking its 64-hex ids.
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

const tokenOf = (inv: { checkout_url: string }) => inv.checkout_url.split('/pay/')[1]!;

test('an EVM invoice takes a 0x hash: deferred until recorded, then already recorded for this invoice', async () => {
  const s = await multichainShop(t, ADDRESSES[0], EVM_ADDRESSES[0]);
  const created = await createInvoice(s.client, { amount: '30', wallet_id: s.evmWalletId, network: 'bsc-mainnet', token: 'USDT' });
  assert.equal(created.status, 201, created.text);
  const inv = created.body.invoice;
  const hash = `0x${'e'.repeat(63)}1`;
  const payer = t.client();
  const early = await payer.post(`/checkout/${tokenOf(inv)}/transaction`, { tx_hash: hash.toUpperCase().replace('0X', '0x') });
  assert.equal(early.status, 200, early.text);
  assert.deepEqual([early.body.claim.tx_hash, early.body.claim.outcome, early.body.claim.paid_to], [hash, 'deferred', null]);

  await recordFinal(t, 'bsc-mainnet', 'USDT', s.evmAddress, BigInt(inv.payable_amount.replace('.', '')), { txHash: hash });
  const later = await payer.post(`/checkout/${tokenOf(inv)}/transaction`, { tx_hash: hash });
  assert.equal(later.status, 200, later.text);
  assert.deepEqual([later.body.claim.outcome, later.body.claim.paid_to, later.body.claim.amount], ['already_recorded', 'this_invoice', inv.payable_amount]);
  assert.equal(later.body.invoice.status, 'confirmed');
});

test("a hash in another network's form is refused with 400 naming the invoice's form; a TRON invoice keeps its 64-hex ids", async () => {
  const s = await multichainShop(t, ADDRESSES[1], EVM_ADDRESSES[1]);
  const evm = (await createInvoice(s.client, { amount: '31', wallet_id: s.evmWalletId, network: 'ethereum-mainnet', token: 'USDC' })).body.invoice;
  const payer = t.client();
  const bare = await payer.post(`/checkout/${tokenOf(evm)}/transaction`, { tx_hash: 'f'.repeat(64) });
  assert.equal(bare.status, 400, bare.text);
  assert.equal(bare.body.error.code, 'validation_error');
  assert.match(bare.body.error.message, /Ethereum.*0x and 64 hexadecimal characters/);
  assert.equal(bare.body.error.details[0].path, 'tx_hash');

  // TRON and EVM options: either form is taken, each for its own family.
  const both = (
    await createInvoice(s.client, {
      amount: '32',
      wallet_id: s.walletId,
      options: [
        { network: 'tron-mainnet', token: 'USDT' },
        { network: 'base-mainnet', token: 'USDC' },
      ],
    })
  ).body.invoice;
  const evmForm = await payer.post(`/checkout/${tokenOf(both)}/transaction`, { tx_hash: `0x${'f'.repeat(64)}` });
  assert.equal(evmForm.status, 200, evmForm.text);
  assert.deepEqual([evmForm.body.claim.tx_hash, evmForm.body.claim.outcome], [`0x${'f'.repeat(64)}`, 'deferred']);
});
