/**
 * An invoice with options on several networks expires by the scan of any of them, once every network
 * it may be paid on has read its whole window (docs/payments.md, "Invoices with several options"):
 * through the payments layer's own commit (recordTransfers), on a migrated database.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice } from '../helpers/shop.js';
import { EVM_ADDRESSES, multichainShop, startMultichainApp } from '../helpers/multichain.js';
import { networkOf, recordTransfers } from '../../src/payments/record.js';
import type { NetworkId } from '../../src/chains/networks.js';

let t: TestApp;
before(async () => {
  ({ t } = await startMultichainApp());
});
after(() => t.close());

let block = 0;
/** A watcher's pass on `network` that read up to `until` and found nothing; with `expire`, it expires what its scan covers. */
async function pass(network: NetworkId, until: number, expire: boolean) {
  block += 1;
  return recordTransfers(t.deps, networkOf(network), {
    transfers: [],
    state: { cursorBlock: block, cursorTime: until, activeUntil: 0 },
    ...(expire ? { unscanned: { scannedUntil: until, gaps: [] } } : {}),
  });
}

test("an options invoice expires by an option network's scan once every one of its networks read the window, not only by its first's", async () => {
  const s = await multichainShop(t, ADDRESSES[0], EVM_ADDRESSES[0]);
  const res = await createInvoice(s.client, {
    amount: '9',
    wallet_id: s.walletId,
    expires_in_minutes: 10,
    options: [
      { network: 'tron-mainnet', token: 'USDT' },
      { network: 'bsc-mainnet', token: 'USDT' },
      { network: 'ethereum-mainnet', token: 'USDC' },
    ],
  });
  assert.equal(res.status, 201, res.text);
  const inv = res.body.invoice;
  const end = Date.parse(inv.expires_at);
  t.clock.advance(11 * 60_000);
  const status = async () => (await s.client.get(`/invoices/${inv.id}`)).body.invoice.status;

  // TRON and BSC read past the window; Ethereum not yet: a payment there may still come in it.
  await pass('tron-mainnet', end + 1000, false);
  await pass('ethereum-mainnet', end - 60_000, false);
  const early = await pass('bsc-mainnet', end + 1000, true);
  assert.deepEqual(early.expired, []);
  assert.equal(await status(), 'pending');

  // Ethereum reads past it; BSC's next pass (an option's network, not the invoice's first) expires it.
  await pass('ethereum-mainnet', end + 1000, false);
  const later = await pass('bsc-mainnet', end + 2000, true);
  assert.deepEqual(
    later.expired.map((i) => i.id),
    [inv.id],
  );
  assert.equal(await status(), 'expired');
  const got = (await s.client.get(`/invoices/${inv.id}`)).body.invoice;
  assert.deepEqual(
    got.options.map((o: { status: string }) => o.status),
    ['released', 'released', 'released'],
  );
});

test('a TRON-only invoice still expires by the TRON scan alone', async () => {
  const s = await multichainShop(t, ADDRESSES[1], EVM_ADDRESSES[1]);
  const inv = (await createInvoice(s.client, { amount: '10', wallet_id: s.walletId, expires_in_minutes: 10 })).body.invoice;
  t.clock.advance(11 * 60_000);
  const done = await pass('tron-mainnet', Date.parse(inv.expires_at) + 1000, true);
  assert.ok(done.expired.some((i) => i.id === inv.id));
});
