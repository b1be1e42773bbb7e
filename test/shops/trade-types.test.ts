/** Shops' trade types as this instance's networks and tokens (src/shops/trade-types.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NETWORKS } from '../../src/chains/networks.js';
import { acceptedTradeTypes, resolveTradeType } from '../../src/shops/trade-types.js';

const real = [NETWORKS['tron-mainnet'], NETWORKS['bsc-mainnet'], NETWORKS['base-mainnet']];
const test_ = [NETWORKS['tron-devnet'], NETWORKS['bsc-devnet'], NETWORKS['ethereum-sepolia']];

test('a trade type names its mainnet on a real instance, in any letter case', () => {
  assert.deepEqual(resolveTradeType('usdt.bep20', real), { ok: true, network: 'bsc-mainnet', token: 'USDT' });
  assert.deepEqual(resolveTradeType('USDC.BEP20', real), { ok: true, network: 'bsc-mainnet', token: 'USDC' });
  assert.deepEqual(resolveTradeType('usdt.trc20', real), { ok: true, network: 'tron-mainnet', token: 'USDT' });
  assert.deepEqual(resolveTradeType('usdt_trc20', real), { ok: true, network: 'tron-mainnet', token: 'USDT' });
  assert.deepEqual(resolveTradeType('usdc.base', real), { ok: true, network: 'base-mainnet', token: 'USDC' });
});

test("on a test instance a trade type means its mainnet's enabled twin", () => {
  assert.deepEqual(resolveTradeType('usdt.bep20', test_), { ok: true, network: 'bsc-devnet', token: 'USDT' });
  assert.deepEqual(resolveTradeType('usdt.trc20', test_), { ok: true, network: 'tron-devnet', token: 'USDT' });
  assert.deepEqual(resolveTradeType('usdc.erc20', test_), { ok: true, network: 'ethereum-sepolia', token: 'USDC' });
});

test('a trade type the instance cannot take is refused with the reason and the ones it takes', () => {
  const polygon = resolveTradeType('usdt.polygon', real);
  assert.equal(polygon.ok, false);
  assert.match(
    !polygon.ok ? polygon.error : '',
    /needs Polygon PoS, which this gateway does not watch; this gateway takes usdt\.trc20, usdt\.bep20, usdc\.bep20, usdc\.base$/,
  );
  const usdtOnSepolia = resolveTradeType('usdt.erc20', test_);
  assert.match(!usdtOnSepolia.ok ? usdtOnSepolia.error : '', /needs USDT on Ethereum Sepolia testnet, which this gateway does not take/);
  assert.match(
    resolveTradeType('tron.trx', real).ok ? '' : (resolveTradeType('tron.trx', real) as { error: string }).error,
    /trade_type tron\.trx is not one gatewayd knows/,
  );
  assert.deepEqual(acceptedTradeTypes([NETWORKS['tron-mainnet']]), ['usdt.trc20']);
});
