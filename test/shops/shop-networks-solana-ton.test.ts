/**
 * Shops choosing Solana or TON by their own field: the Epusdt facade's `trade_type` and the Epay
 * `type` take usdt.solana, usdc.solana and usdt.ton. The invoice is then on that network and token,
 * received by the merchant's wallet there (a TON address handed to the shop in the UQ form wallets
 * expect); on a gateway that does not watch the network the order is refused in the protocol's
 * shape and creates nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { registerWallet } from '../../src/wallets/wallets.repo.js';
import { NETWORKS } from '../../src/chains/networks.js';
import { toFriendlyAddress } from '../../src/chains/ton/address.js';
import { connect, local, mapi, shopSign, signed, startShopWorld } from './support.js';

const OWNER = '3xTPAZxmpwd8GrNEKApaTw6VH4jqJ31WFXUvQzgwhR7c';
const TON_RAW = '0:237e5119ffa2a028cc4f95c9ca37566852f1dd4d3ea15704d6f791065507de4a';
const TON_UQ = toFriendlyAddress(TON_RAW, { bounceable: false });
const solana = { networks: [{ id: 'solana-mainnet', providers: [{ url: 'https://solana.rpc.example' }] }] };
const ton = { networks: [{ id: 'ton-mainnet', providers: [{ url: 'https://toncenter.example/api/v3', kind: 'toncenter' }] }] };

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

test('epusdt: usdt.solana and usdc.solana make Solana invoices at the owner address, usdt.ton a TON one at the UQ form', async () => {
  const w = await startShopWorld({ solana, ton });
  try {
    const { t } = w.h;
    await registerWallet(t.deps.db, ['solana-mainnet'], w.merchant.merchant.id, 'Solana', OWNER, t.clock.now());
    await registerWallet(t.deps.db, ['ton-mainnet'], w.merchant.merchant.id, 'TON', TON_RAW, t.clock.now());
    const conn = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
    const base = local(w, conn.apiUrl);
    const order = { amount: 20, notify_url: w.standIn.url('/notify') };
    for (const [tradeType, network, token, address] of [
      ['usdt.solana', 'solana-mainnet', 'USDT', OWNER],
      ['USDC.SOLANA', 'solana-mainnet', 'USDC', OWNER],
      ['usdt.ton', 'ton-mainnet', 'USDT', TON_UQ],
    ] as const) {
      const made = await createEpusdt(conn.key, { ...order, order_id: `O-${tradeType}`, trade_type: tradeType }, base);
      assert.equal(made.status_code, 200, JSON.stringify(made));
      const data = made.data as Json;
      assert.equal(data.token, address, `${tradeType}: the address to pay`);
      const inv = (await w.merchant.client.get(`/invoices/${data.trade_id as string}`)).body.invoice;
      assert.deepEqual([inv.network, inv.token], [network, token], tradeType);
      assert.equal(inv.token_contract, NETWORKS[network].tokens.find((x) => x.symbol === token)!.contract);
      assert.equal(data.actual_amount, Number(inv.payable_amount));
    }
  } finally {
    await w.close();
  }
});

test('epusdt and epay: a Solana or TON trade type on a gateway that does not watch it is refused in the protocol shape, nothing created', async () => {
  const w = await startShopWorld({ solana });
  try {
    const epusdt = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
    const base = local(w, epusdt.apiUrl);
    const before = (await w.merchant.client.get('/invoices')).body.invoices.length;
    const refused = await createEpusdt(epusdt.key, { order_id: 'R-1', amount: 20, notify_url: w.standIn.url('/n'), trade_type: 'usdt.ton' }, base);
    assert.equal(refused.status_code, 400, JSON.stringify(refused));
    assert.match(
      String(refused.message),
      /^trade_type usdt\.ton needs TON, which this gateway does not watch; this gateway takes usdt\.trc20, usdt\.solana, usdc\.solana$/,
    );

    const epay = await connect(w, { protocol: 'epay', allow_http_notify: true });
    const fields = { pid: String(epay.pid), out_trade_no: 'E-1', notify_url: w.standIn.url('/n'), name: 'x', money: '5' };
    const no = await mapi(w, epay.apiUrl, signed({ ...fields, type: 'usdt.ton' }, epay.key));
    assert.equal(no.code, -1);
    assert.match(String(no.msg), /needs TON, which this gateway does not watch/);
    assert.equal((await w.merchant.client.get('/invoices')).body.invoices.length, before, 'a refused trade type creates nothing');

    // Solana is watched, but the merchant has no Solana wallet yet: refused too, saying so.
    const noWallet = await mapi(w, epay.apiUrl, signed({ ...fields, out_trade_no: 'E-2', type: 'usdc.solana' }, epay.key));
    assert.equal(noWallet.code, -1, JSON.stringify(noWallet));
    await registerWallet(w.h.t.deps.db, ['solana-mainnet'], w.merchant.merchant.id, 'Solana', OWNER, w.h.t.clock.now());
    const made = await mapi(w, epay.apiUrl, signed({ ...fields, out_trade_no: 'E-3', type: 'usdc.solana' }, epay.key));
    assert.equal(made.code, 1, JSON.stringify(made));
    assert.equal(made.qrcode, OWNER);
    const inv = (await w.merchant.client.get(`/invoices/${made.trade_no as string}`)).body.invoice;
    assert.deepEqual([inv.network, inv.token], ['solana-mainnet', 'USDC']);
  } finally {
    await w.close();
  }
});
