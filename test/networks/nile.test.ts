/**
 * A Nile instance (tron.network = "nile") against the simulated node presenting Nile's chain: its
 * USDT is Nile's contract, so a Nile payment confirms and a transfer of mainnet's USDT contract, to
 * the same address and for the same amount, never does. Its wallets, invoices, events and served
 * OpenAPI document say tron-nile.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadScanState } from '../../src/chain/chain.repo.js';
import { runOnce } from '../../src/chain/chain.worker.js';
import { SECOND } from '../../src/lib/clock.js';
import { NETWORKS } from '../../src/lib/tron.js';
import { NETWORK_IDS } from '../../src/chains/networks.js';
import { eventsOf, getInvoice, startChainHarness, transfersOf, type ChainHarness } from '../helpers/chain-fixtures.js';
import { addWallet, createInvoice, micro, shop } from '../helpers/shop.js';

const NILE = NETWORKS.nile;
const MAINNET = NETWORKS.mainnet;

/** The last block the scanner has read. */
const scanned = async (h: ChainHarness) => (await loadScanState(h.t.deps.db, h.t.config.network))?.cursorBlock ?? 0;

/** Moves the clock on and runs the scanner until it has nothing more to do. */
async function pass(h: ChainHarness, ms = 5 * SECOND): Promise<void> {
  h.t.clock.advance(ms);
  while (await runOnce(h.t.deps));
}

test('a Nile instance confirms a payment in Nile USDT and refuses the same transfer in mainnet USDT', async () => {
  const h = await startChainHarness({ config: { tron: { network: 'nile' } }, node: { usdtContract: NILE.usdtContract } });
  try {
    const { t, tg } = h;
    assert.equal(t.config.network.id, 'tron-nile');
    const s = await shop(t, 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx');
    const wallet = await s.client.get(`/wallets`);
    assert.equal(wallet.body.wallets[0].network, 'tron-nile');

    const paid = await createInvoice(s.client, { amount: '25', wallet_id: s.walletId });
    const spoofed = await createInvoice(s.client, { amount: '30', wallet_id: s.walletId });
    assert.equal(paid.status, 201, paid.text);
    for (const res of [paid, spoofed]) {
      assert.equal(res.body.invoice.network, 'tron-nile');
      assert.equal(res.body.invoice.token_contract, NILE.usdtContract);
    }

    // The same address receives the exact amounts: one in Nile's USDT, one in mainnet's contract
    // (which does not exist on Nile: whoever deployed a token there is not Tether).
    const now = t.clock.now();
    const good = tg.pay({ to: s.address, amount: micro(paid.body.invoice.payable_amount), blockTimestamp: now + 3 * SECOND });
    const bad = tg.pay({ to: s.address, amount: micro(spoofed.body.invoice.payable_amount), blockTimestamp: now + 3 * SECOND, contract: MAINNET.usdtContract });
    for (let i = 0; i < 30 && (await getInvoice(t, paid.body.invoice.id)).status === 'pending'; i++) await pass(h);
    // A few more passes: the block of the spoofed transfer is read as well by now.
    await pass(h);
    assert.ok((await scanned(h)) >= bad.blockNumber, "the spoofed transfer's block was scanned");

    const confirmed = await getInvoice(t, paid.body.invoice.id);
    assert.equal(confirmed.status, 'confirmed');
    assert.equal(confirmed.txHash, good.txId);
    assert.equal((await getInvoice(t, spoofed.body.invoice.id)).status, 'pending', 'mainnet USDT never pays a Nile invoice');

    const [event] = await eventsOf(t, paid.body.invoice.id).then((e) => e.filter((x) => x.type === 'invoice.confirmed'));
    const data = event!.data as { invoice: { network: string; token_contract: string }; transaction: { token_contract: string; tx_hash: string } };
    assert.equal(data.invoice.network, 'tron-nile');
    assert.equal(data.invoice.token_contract, NILE.usdtContract);
    assert.deepEqual([data.transaction.token_contract, data.transaction.tx_hash], [NILE.usdtContract, good.txId]);
    const recorded = await transfersOf(t);
    assert.ok(recorded.every((r) => r.network === 'tron-nile' && r.token_contract === NILE.usdtContract));
    assert.ok(!recorded.some((r) => r.tx_hash === bad.txId), 'the mainnet-contract transfer is not even recorded');
  } finally {
    await h.close();
  }
});

test('a mainnet instance refuses a transfer in Nile USDT', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const s = await shop(t, 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx');
    const inv = await createInvoice(s.client, { amount: '12', wallet_id: s.walletId });
    assert.equal(inv.body.invoice.network, 'tron-mainnet');
    const bad = tg.pay({
      to: s.address,
      amount: micro(inv.body.invoice.payable_amount),
      blockTimestamp: t.clock.now() + 3 * SECOND,
      contract: NILE.usdtContract,
    });
    for (let i = 0; i < 20 && (await scanned(h)) < bad.blockNumber; i++) await pass(h);
    assert.ok((await scanned(h)) >= bad.blockNumber);
    assert.equal((await getInvoice(t, inv.body.invoice.id)).status, 'pending');
  } finally {
    await h.close();
  }
});

test('the served OpenAPI document of a Nile instance lists every network, and its server entry says this one is tron-nile with USDT of no value', async () => {
  const h = await startChainHarness({ config: { tron: { network: 'nile' } }, node: { usdtContract: NILE.usdtContract } });
  try {
    const res = await fetch(`${h.t.baseUrl}/api/v1/openapi.json`);
    const text = await res.text();
    const doc = JSON.parse(text) as {
      servers: Array<{ description: string }>;
      components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> };
    };
    // One document per API version: the schemas list every network, the server entry names this one.
    assert.deepEqual(doc.components.schemas.Invoice!.properties.network!.enum, [...NETWORK_IDS]);
    assert.match(doc.servers[0]!.description, /tron-nile, a TRON test network; its USDT \(contract TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf\) has no value/);
    // A wallet registered on a Nile instance is a Nile wallet (the address format is the same).
    const s = await shop(h.t, 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre');
    assert.ok(await addWallet(s.client, 'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi', 'Second'));
  } finally {
    await h.close();
  }
});
