/**
 * The control routes of `gatewayd dev` on the EVM devnets, in process (the real app, the simulated
 * TRON node and the simulated EVM devnets sharing a ManualClock): `/_dev/transfer` with a network
 * and a token puts a Transfer log of that token on that chain, in its own decimals, which the real
 * EvmReader verifies; `/_dev/pay` pays an invoice on its own network with payable x 10^(decimals-6);
 * addresses are EIP-55-checked, unknown or unsimulated networks and missing tokens refused with
 * the envelope, and nothing lands on a chain for a refused request.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EvmReader, RangeCaps } from '../../src/chains/evm/reader.js';
import { EvmRpcClient } from '../../src/chains/evm/rpc.js';
import { NETWORKS, type EvmNetworkId } from '../../src/chains/networks.js';
import { DEV_TOKEN_HEADER } from '../../src/cli/dev-token.js';
import type { AppDeps } from '../../src/deps.js';
import { devEvmConfig, DEV_EVM_NETWORKS } from '../../src/devnet/dev.js';
import { devRoutes } from '../../src/devnet/dev.routes.js';
import { startSimulatedEvm } from '../../src/devnet/evm-node.js';
import { startSimulatedTron } from '../../src/devnet/tron-node.js';
import { MINUTE } from '../../src/lib/clock.js';
import { NETWORKS as TRON_NETWORKS } from '../../src/lib/tron.js';
import { startTestApp } from '../helpers/app.js';
import { insertInvoice } from '../helpers/chain-fixtures.js';

const TOKEN = 'the-control-token-printed-at-start';
/** A payee, given in lower case (accepted) and answered in EIP-55. */
const PAYEE = '0x52908400098527886e0f7030069857d2e4169ee7';
const PAYEE_EIP55 = '0x52908400098527886E0F7030069857D2E4169EE7';
/** The same digits with one letter's case flipped: a wrong checksum. */
const MISTYPED = '0x52908400098527886E0F7030069857D2E4169Ee7';
const STRANGER = '0xde709f2102306220921060314715629080e2fb77';

async function rig(t: { after(fn: () => unknown): void }) {
  let clockNow = () => Date.UTC(2026, 0, 15, 12, 0, 0);
  const node = await startSimulatedTron({ usdtContract: TRON_NETWORKS.devnet.usdtContract, blockIntervalMs: 1000, solidityLag: 3, now: () => clockNow() });
  t.after(() => node.close());
  const evm = await startSimulatedEvm({ networks: DEV_EVM_NETWORKS.map((id) => NETWORKS[id]), finalityLag: 8, now: () => clockNow(), seed: 5 });
  t.after(() => evm.close());
  let deps: AppDeps | undefined;
  const app = await startTestApp({
    config: { tron: { network: 'devnet', api_url: node.url, poll_interval_seconds: 1 }, evm: devEvmConfig((id) => evm.urlOf(id)) },
    beforeCreate: (d) => {
      deps = d;
    },
    beforeServe: (a) => devRoutes(a, deps!, { node, evm, solidityLag: 3, blockIntervalMs: 1000 }, TOKEN),
  });
  t.after(() => app.close());
  clockNow = () => app.clock.now();
  const client = app.client({ origin: null });
  const post = (path: string, body: unknown) => client.post(app.baseUrl + path, body, { headers: { [DEV_TOKEN_HEADER]: TOKEN } });
  const reader = (id: EvmNetworkId) =>
    new EvmReader({ network: NETWORKS[id], rpc: new EvmRpcClient({ url: evm.urlOf(id), clock: app.clock }), caps: new RangeCaps() });
  /** Every transfer of the network's tokens to `to` from block `from` on, once 12 more blocks have come. */
  const read = async (id: EvmNetworkId, from: number, to: string) => {
    app.clock.advance(12_000);
    const r = reader(id);
    const final = await r.finalHead();
    return (await r.readTransfers({ from: BigInt(from), to: final.number, recipients: [to], finalAtOrBelow: final.number })).transfers;
  };
  return { app, evm, post, read };
}

test('/_dev/transfer on an EVM devnet: the token of that network in its own decimals, read back by the EvmReader; bad requests are refused and land nothing', async (t) => {
  const { app, evm, post, read } = await rig(t);
  const start = evm.chain('bsc-devnet')!.latest();

  // One wei above a micro-unit on an 18-decimal token: sent as asked, read as inexact.
  const odd = await post('/_dev/transfer', { network: 'bsc-devnet', to: PAYEE, amount: '1.000000000000000001' });
  assert.equal(odd.status, 200, odd.text);
  assert.equal(odd.headers.get('x-gatewayd-dev'), 'tron-devnet');
  const bscUsdt = NETWORKS['bsc-devnet'].tokens[0]!;
  assert.deepEqual(
    [odd.body.network, odd.body.token, odd.body.to, odd.body.amount, odd.body.raw_amount, odd.body.token_contract, odd.body.result],
    ['bsc-devnet', 'USDT', PAYEE_EIP55, '1.000000000000000001', '1000000000000000001', bscUsdt.contract, 'SUCCESS'],
  );
  assert.equal(odd.body.finalized_at, new Date(Date.parse(odd.body.block_timestamp) + 8000).toISOString());
  const exact = await post('/_dev/transfer', { network: 'bsc-devnet', token: 'USDC', to: PAYEE_EIP55, amount: '2.5', from: STRANGER });
  assert.equal(exact.status, 200, exact.text);
  assert.equal(exact.body.raw_amount, (25n * 10n ** 17n).toString());
  const read1 = await read('bsc-devnet', start, PAYEE);
  assert.deepEqual(
    read1.map((x) => [x.txHash, x.token, x.contract, x.raw, x.amount, x.blockHash, x.logIndex]),
    [
      [odd.body.tx_id, 'USDT', bscUsdt.contract, 10n ** 18n + 1n, { exact: false, reason: 'below_micro_unit' }, odd.body.block_hash, odd.body.log_index],
      [
        exact.body.tx_id,
        'USDC',
        NETWORKS['bsc-devnet'].tokens[1]!.contract,
        25n * 10n ** 17n,
        { exact: true, micros: 2_500_000n },
        exact.body.block_hash,
        exact.body.log_index,
      ],
    ],
  );
  assert.equal(read1[1]!.from, STRANGER, 'its EIP-55 form is all lower case (an EIP-55 example)');

  // Refused, with the field named, and nothing lands on any chain.
  const base = evm.chain('base-devnet')!.latest();
  const eth = evm.chain('ethereum-devnet')!.latest();
  for (const [body, path, message] of [
    [{ network: 'ethereum-devnet', to: MISTYPED, amount: '1' }, 'to', /checksum \(EIP-55 letter case\) is wrong/],
    [{ network: 'ethereum-devnet', to: 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx', amount: '1' }, 'to', /this is a TRON address/],
    [{ to: STRANGER, amount: '1' }, 'to', /expected a TRON address/],
    [{ network: 'ethereum-devnet', to: STRANGER, amount: '1', from: 'nobody' }, 'from', /0x followed by 40 hex digits/],
    [
      { network: 'ethereum-mainnet', to: STRANGER, amount: '1' },
      'network',
      /ethereum-mainnet is not simulated by this dev instance; it simulates tron-devnet, ethereum-devnet, bsc-devnet/,
    ],
    [{ network: 'dogecoin-devnet', to: STRANGER, amount: '1' }, 'network', /unknown network "dogecoin-devnet"/],
    [{ network: 'solana-devnet', to: STRANGER, amount: '1' }, 'network', /solana-devnet is not simulated by this dev instance/],
    [{ network: 'base-devnet', token: 'USDT', to: STRANGER, amount: '1' }, 'token', /base-devnet has no USDT; its tokens: USDC/],
    [{ network: 'ethereum-devnet', to: STRANGER, amount: '1.0000001' }, 'amount', /at most 6 fractional digits/],
    [{ network: 'bsc-devnet', to: STRANGER, amount: '1.0000000000000000001' }, 'amount', /decimal string/],
  ] as const) {
    const res = await post('/_dev/transfer', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_error');
    assert.equal(res.body.error.details[0].path, path, JSON.stringify(body));
    assert.match(res.body.error.details[0].message, message);
  }
  assert.deepEqual(await read('ethereum-devnet', eth, STRANGER), []);
  assert.deepEqual(await read('base-devnet', base, STRANGER), []);
  assert.deepEqual(await read('bsc-devnet', start, STRANGER), []);
  // The default stays TRON's: a TRON transfer answers as it always did, now naming its network.
  const tron = await post('/_dev/transfer', { to: 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx', amount: '0.5' });
  assert.deepEqual([tron.status, tron.body.network, tron.body.token_contract], [200, 'tron-devnet', TRON_NETWORKS.devnet.usdtContract]);
  assert.ok(app.clock.now() > 0);
});

test('/_dev/pay on an invoice of bsc-devnet: payable x 10^12 on its USDT, verified exact; an option it does not offer is refused', async (t) => {
  const { app, evm, post, read } = await rig(t);
  const inv = await insertInvoice(app, { address: PAYEE_EIP55, amount: 12_345_678n, expiresAt: app.clock.now() + 10 * MINUTE });
  // An invoice on an EVM network, as the invoices API makes them once it takes `network`.
  const usdt = NETWORKS['bsc-devnet'].tokens[0]!;
  await app.deps.db.updateTable('invoices').set({ network: 'bsc-devnet', token: 'USDT', token_contract: usdt.contract }).where('id', '=', inv.id).execute();
  const start = evm.chain('bsc-devnet')!.latest();

  for (const [body, path] of [
    [{ invoice_id: inv.id, network: 'ethereum-devnet' }, 'network'],
    [{ invoice_id: inv.id, token: 'USDC' }, 'token'],
    [{ invoice_id: inv.id, option: 1 }, 'option'],
    [{ invoice_id: inv.id, from: 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx' }, 'from'],
  ] as const) {
    const res = await post('/_dev/pay', body);
    assert.deepEqual([res.status, res.body.error?.details?.[0]?.path], [400, path], res.text);
  }
  const refused = await post('/_dev/pay', { invoice_id: inv.id, network: 'ethereum-devnet' });
  assert.match(refused.body.error.details[0].message, /this invoice offers 0: bsc-devnet USDT/);

  const paid = await post('/_dev/pay', { invoice_id: inv.id, option: 0, from: STRANGER });
  assert.equal(paid.status, 200, paid.text);
  assert.deepEqual(
    [paid.body.network, paid.body.token, paid.body.payable_amount, paid.body.amount, paid.body.raw_amount, paid.body.to],
    ['bsc-devnet', 'USDT', '12.345678', '12.345678', (12_345_678n * 10n ** 12n).toString(), PAYEE_EIP55],
  );
  const late = await post('/_dev/pay', { invoice_id: inv.id, network: 'bsc-devnet', late: true });
  assert.equal(late.status, 200, late.text);
  assert.ok(Date.parse(late.body.block_timestamp) > inv.expiresAt);
  assert.match(late.body.note, /^late payment: its block, just after the invoice's expiry, comes at \S+ \(in about 11 minutes\) and is final at /);
  const read1 = await read('bsc-devnet', start, PAYEE);
  assert.deepEqual(
    read1.map((x) => [x.txHash, x.contract, x.raw, x.amount]),
    [[paid.body.tx_id, usdt.contract, 12_345_678n * 10n ** 12n, { exact: true, micros: 12_345_678n }]],
    'the late one is not sealed yet',
  );
});

test('/_dev/pay pays the option named (by position or network) from the invoice stored options, with its own amount and token', async (t) => {
  const { app, evm, post, read } = await rig(t);
  const inv = await insertInvoice(app, { address: PAYEE_EIP55, amount: 7_000_011n, expiresAt: app.clock.now() + 10 * MINUTE });
  const bscUsdt = NETWORKS['bsc-devnet'].tokens[0]!;
  const ethUsdc = NETWORKS['ethereum-devnet'].tokens.find((x) => x.symbol === 'USDC')!;
  await app.deps.db.updateTable('invoices').set({ network: 'bsc-devnet', token: 'USDT', token_contract: bscUsdt.contract }).where('id', '=', inv.id).execute();
  // Option 1, as the invoices feature stores it: Ethereum USDC at its own payable amount.
  await app.deps.db
    .insertInto('invoice_options')
    .values({
      invoice_id: inv.id,
      position: 1,
      wallet_id: inv.walletId,
      network: 'ethereum-devnet',
      token: 'USDC',
      token_contract: ethUsdc.contract,
      wallet_address: PAYEE_EIP55,
      adjustment: 23,
      payable_amount: 7_000_023,
      status: 'open',
    })
    .execute();
  const start = evm.chain('ethereum-devnet')!.latest();
  const byPosition = await post('/_dev/pay', { invoice_id: inv.id, option: 1 });
  assert.equal(byPosition.status, 200, byPosition.text);
  assert.deepEqual(
    [byPosition.body.network, byPosition.body.token, byPosition.body.payable_amount, byPosition.body.raw_amount, byPosition.body.to],
    ['ethereum-devnet', 'USDC', '7.000023', '7000023', PAYEE_EIP55],
  );
  const byNetwork = await post('/_dev/pay', { invoice_id: inv.id, network: 'ethereum-devnet' });
  assert.deepEqual([byNetwork.status, byNetwork.body.payable_amount], [200, '7.000023'], byNetwork.text);
  const refused = await post('/_dev/pay', { invoice_id: inv.id, option: 2 });
  assert.match(refused.body.error.details[0].message, /this invoice offers 0: bsc-devnet USDT, 1: ethereum-devnet USDC/);
  const seen = await read('ethereum-devnet', start, PAYEE);
  assert.deepEqual(
    seen.map((x) => [x.txHash, x.contract, x.amount]),
    [
      [byPosition.body.tx_id, ethUsdc.contract, { exact: true, micros: 7_000_023n }],
      [byNetwork.body.tx_id, ethUsdc.contract, { exact: true, micros: 7_000_023n }],
    ],
  );
});
