/**
 * A wallet's second (and later) EVM networks count as fully as its first, through the real server
 * on a migrated database: a wrong payment on the wallet's second network is resolved by hand (not
 * a 404), another merchant registering the address on that network makes it shared, its pools are
 * warned about, and the wallet list counts its open invoices on every network it receives on.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice } from '../helpers/shop.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { contractOf, EVM_ADDRESSES, multichainShop, recordFinal, startMultichainApp } from '../helpers/multichain.js';
import { addressHasOtherOwner, findMerchantWalletByAddress, registerWallet } from '../../src/wallets/wallets.repo.js';
import { findFillingPools } from '../../src/dashboard/pools.repo.js';
import { listWalletViews } from '../../src/dashboard/dashboard.repo.js';
import { tokenContracts } from '../../src/pages/console.pages.js';
import { micros } from '../../src/lib/amounts.js';
import { writeTransaction } from '../../src/db/database.js';

const otherOwner = (network: string, address: string, merchantId: string) =>
  writeTransaction(t.deps.db, (_trx, tx) => addressHasOtherOwner(tx, network, address, merchantId));

let t: TestApp;
before(async () => {
  ({ t } = await startMultichainApp());
});
after(() => t.close());

test("a wrong payment on the wallet's second network is resolved by hand onto an invoice of that network", async () => {
  // The EVM wallet's own (first) network is bsc-mainnet; ethereum-mainnet is its second.
  const s = await multichainShop(t, ADDRESSES[0], EVM_ADDRESSES[0]);
  const created = await createInvoice(s.client, { amount: '20', wallet_id: s.evmWalletId, network: 'ethereum-mainnet', token: 'USDT' });
  assert.equal(created.status, 201, created.text);
  const inv = created.body.invoice;
  assert.equal(inv.network, 'ethereum-mainnet');
  const txHash = await recordFinal(t, 'ethereum-mainnet', 'USDT', s.evmAddress, 19_500_000n);
  const wallet = await findMerchantWalletByAddress(t.deps.db, 'ethereum-mainnet', s.merchant.id, s.evmAddress);
  assert.equal(wallet?.id, s.evmWalletId);
  const res = await s.client.post(`/invoices/${inv.id}/resolve`, { tx_hash: txHash, log_index: 0 });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.invoice.status, 'confirmed');
  assert.equal(res.body.invoice.tx_hash, txHash);
});

test("another merchant's wallet on the address's second network shares it; its pools and open invoices are listed on every network", async () => {
  const s = await multichainShop(t, ADDRESSES[1], EVM_ADDRESSES[1]);
  const other = await signedInMerchant(t);
  // Their wallet's own network is base-mainnet; ethereum-mainnet is its second.
  await registerWallet(t.deps.db, ['base-mainnet', 'ethereum-mainnet'], other.merchant.id, 'Theirs', EVM_ADDRESSES[1]!, t.clock.now());
  assert.equal(await otherOwner('ethereum-mainnet', EVM_ADDRESSES[1]!, s.merchant.id), true);
  assert.equal(await otherOwner('bsc-mainnet', EVM_ADDRESSES[1]!, s.merchant.id), false);

  // A pool of the second network, more than half used.
  const contract = contractOf('ethereum-mainnet', 'USDC');
  await t.deps.db
    .insertInto('amount_cursors')
    .values({
      network: 'ethereum-mainnet',
      token_contract: contract,
      address: EVM_ADDRESSES[1]!,
      base_amount: 7_000_000,
      next_adjustment: 90_000,
      reusable_from: 0,
    })
    .execute();
  const pools = await findFillingPools(t.deps.db, s.merchant.id, micros(99_999n));
  assert.deepEqual(
    pools.map((p) => [p.walletId, p.network, p.tokenContract, p.used, p.sharedWith]),
    [[s.evmWalletId, 'ethereum-mainnet', contract, 89_999n, 1]],
  );

  // Open invoices on the wallet's second and third networks, one of them with options on both.
  for (const body of [
    { network: 'ethereum-mainnet', token: 'USDC' },
    { network: 'base-mainnet', token: 'USDC' },
    {
      options: [
        { network: 'tron-mainnet', token: 'USDT' },
        { network: 'base-mainnet', token: 'USDC' },
      ],
      wallet_id: s.walletId,
    },
  ]) {
    const res = await createInvoice(s.client, { amount: '5', wallet_id: s.evmWalletId, ...body });
    assert.equal(res.status, 201, res.text);
  }
  const views = await listWalletViews(t.deps.db, s.merchant.id, tokenContracts(t.deps));
  const byId = new Map(views.map((v) => [v.id, v.openInvoices]));
  assert.equal(byId.get(s.evmWalletId), 3, 'the two EVM invoices and the option on base-mainnet');
  assert.equal(byId.get(s.walletId), 1, 'the TRON option');
});
