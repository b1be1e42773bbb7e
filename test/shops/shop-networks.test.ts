/**
 * Shops choose the network by their own field: BEpusdt's `trade_type` on the Epusdt protocol, and
 * an Epay `type` that is a trade type. The invoice is then on that network and token, received by
 * the merchant's wallet there; one the gateway does not watch is refused in the protocol's shape and
 * creates nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registerWallet } from '../../src/wallets/wallets.repo.js';
import { connect, local, mapi, shopSign, signed, startShopWorld } from './support.js';

const EVM_ADDRESS = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const evm = { networks: ['bsc-mainnet', 'base-mainnet'].map((id) => ({ id, providers: [{ url: `https://${id}.rpc.example` }] })) };

type Json = Record<string, unknown>;

async function createEpusdt(key: string, fields: Json, base: string): Promise<Json> {
  const res = await fetch(`${base}/api/v1/order/create-transaction`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...fields, signature: shopSign(fields as Record<string, string | number>, key) }),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as Json;
}

test('epusdt: trade_type usdt.bep20 makes a BNB Smart Chain USDT invoice at the EVM wallet; usdc.base a Base USDC one; usdt.polygon is refused, naming what the gateway takes', async () => {
  const w = await startShopWorld({ evm });
  try {
    const { t } = w.h;
    await registerWallet(t.deps.db, ['bsc-mainnet', 'base-mainnet'], w.merchant.merchant.id, 'EVM', EVM_ADDRESS, t.clock.now());
    const conn = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
    const base = local(w, conn.apiUrl);
    const order = { order_id: 'BSC-1', amount: 20, notify_url: w.standIn.url('/notify') };
    const bsc = await createEpusdt(conn.key, { ...order, trade_type: 'usdt.bep20' }, base);
    assert.equal(bsc.status_code, 200, JSON.stringify(bsc));
    const data = bsc.data as Json;
    assert.equal(data.token, EVM_ADDRESS, 'the address to pay is the EVM wallet, checksummed');
    const inv = (await w.merchant.client.get(`/invoices/${data.trade_id as string}`)).body.invoice;
    assert.equal(inv.network, 'bsc-mainnet');
    assert.equal(inv.token, 'USDT');
    assert.equal(inv.token_contract, '0x55d398326f99059fF775485246999027B3197955');
    assert.equal(data.actual_amount, Number(inv.payable_amount), 'six decimals on the 18-decimal token too');

    const baseUsdc = await createEpusdt(conn.key, { ...order, order_id: 'BASE-1', trade_type: 'USDC.BASE' }, base);
    assert.equal(baseUsdc.status_code, 200, JSON.stringify(baseUsdc));
    const baseInv = (await w.merchant.client.get(`/invoices/${(baseUsdc.data as Json).trade_id as string}`)).body.invoice;
    assert.deepEqual([baseInv.network, baseInv.token], ['base-mainnet', 'USDC']);

    const before = (await w.merchant.client.get('/invoices')).body.invoices.length;
    for (const [tradeType, why] of [
      [
        'usdt.polygon',
        /trade_type usdt\.polygon needs Polygon PoS, which this gateway does not watch; this gateway takes usdt\.trc20, usdt\.bep20, usdc\.bep20, usdc\.base/,
      ],
      ['usdt.base', /trade_type usdt\.base is not one gatewayd knows/],
      ['tron.trx', /trade_type tron\.trx is not one gatewayd knows/],
    ] as const) {
      const refused = await createEpusdt(conn.key, { ...order, order_id: `R-${tradeType}`, trade_type: tradeType }, base);
      assert.equal(refused.status_code, 400, JSON.stringify(refused));
      assert.match(String(refused.message), why);
    }
    assert.equal((await w.merchant.client.get('/invoices')).body.invoices.length, before, 'a refused trade type creates nothing');

    // No trade type, or usdt.trc20: the connection's TRON wallet, as before.
    const tron = await createEpusdt(conn.key, { ...order, order_id: 'TRON-1', trade_type: 'usdt.trc20' }, base);
    const tronInv = (await w.merchant.client.get(`/invoices/${(tron.data as Json).trade_id as string}`)).body.invoice;
    assert.equal(tronInv.network, t.config.network.id);
  } finally {
    await w.close();
  }
});

test('epay: a type that is a trade type (usdc.bep20) picks the network; a payment method name (alipay) keeps the TRON wallet', async () => {
  const w = await startShopWorld({ evm });
  try {
    const { t } = w.h;
    await registerWallet(t.deps.db, ['bsc-mainnet'], w.merchant.merchant.id, 'EVM', EVM_ADDRESS, t.clock.now());
    const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const fields = { pid: String(conn.pid), out_trade_no: 'E-1', notify_url: w.standIn.url('/n'), name: 'x', money: '5' };
    const made = await mapi(w, conn.apiUrl, signed({ ...fields, type: 'usdc.bep20' }, conn.key));
    assert.equal(made.code, 1, JSON.stringify(made));
    assert.equal(made.qrcode, EVM_ADDRESS);
    const inv = (await w.merchant.client.get(`/invoices/${made.trade_no as string}`)).body.invoice;
    assert.deepEqual([inv.network, inv.token], ['bsc-mainnet', 'USDC']);
    const alipay = await mapi(w, conn.apiUrl, signed({ ...fields, out_trade_no: 'E-2', type: 'alipay' }, conn.key));
    const tronInv = (await w.merchant.client.get(`/invoices/${alipay.trade_no as string}`)).body.invoice;
    assert.equal(tronInv.network, t.config.network.id);
    const refused = await mapi(w, conn.apiUrl, signed({ ...fields, out_trade_no: 'E-3', type: 'usdt.erc20' }, conn.key));
    assert.equal(refused.code, -1);
    assert.match(String(refused.msg), /needs Ethereum \(ERC20\), which this gateway does not watch/);
  } finally {
    await w.close();
  }
});
