/** Shops priced in a fiat currency: the shop's money is converted by [pricing], and its callback carries its own amount back. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchRates, pricingConfig, startRateSources } from '../helpers/rates.js';
import { connect, local, shopSign as sign, payThroughCheckout, sendCallbacks, startShopWorld } from './support.js';

test('fiat shops: an Epay connection in CNY converts money at the rate and echoes it; the WooCommerce fiat field is honoured when pricing has it', async () => {
  const rates = await startRateSources({ CNY: '7.115', EUR: '0.9215' });
  const w = await startShopWorld({ pricing: pricingConfig(rates) });
  try {
    await fetchRates(w.h.t);
    const epay = await connect(w, { protocol: 'epay', currency: 'CNY', allow_http_notify: true });
    const fields = { pid: String(epay.pid), out_trade_no: 'CNY-1', notify_url: w.standIn.url('/n'), name: 'Plan', money: '71.15', type: 'usdt' };
    const res = await fetch(`${local(w, epay.apiUrl)}mapi.php`, {
      method: 'POST',
      body: new URLSearchParams({ ...fields, sign: sign(fields, epay.key), sign_type: 'MD5' }),
    });
    const made = (await res.json()) as Record<string, unknown>;
    assert.equal(made.code, 1, JSON.stringify(made));
    const inv = (await w.merchant.client.get(`/invoices/${made.trade_no as string}`)).body.invoice;
    assert.equal(inv.base_amount, '10.000000', '71.15 CNY at 7.115 CNY per USDT');
    assert.equal(inv.price.currency, 'CNY');
    assert.equal(inv.price.amount, '71.15');
    w.standIn.reply = () => ({ status: 200, body: 'success' });
    await payThroughCheckout(w, made.payurl as string);
    await sendCallbacks(w);
    assert.equal(w.standIn.hits[0]!.query.get('money'), '71.15', "the shop's own amount comes back, as dujiaoka compares it");
    // JPY-style decimals are the currency's own: three decimals of CNY are refused in Epay's shape.
    const bad = { ...fields, out_trade_no: 'CNY-2', money: '71.155' };
    const refused = (await (
      await fetch(`${local(w, epay.apiUrl)}mapi.php`, { method: 'POST', body: new URLSearchParams({ ...bad, sign: sign(bad, epay.key) }) })
    ).json()) as Record<string, unknown>;
    assert.equal(refused.code, -1);
    assert.match(String(refused.msg), /^money: /);

    const epusdt = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
    const woo = {
      order_id: '7-usdt-trc20-1',
      amount: 92.15,
      fiat: 'EUR',
      trade_type: 'usdt.trc20',
      notify_url: w.standIn.url('/wc'),
      redirect_url: 'https://woo.example/thanks',
    };
    const created = (await (
      await fetch(`${local(w, epusdt.apiUrl)}/api/v1/order/create-transaction`, {
        method: 'POST',
        body: JSON.stringify({ ...woo, signature: sign(woo, epusdt.key) }),
      })
    ).json()) as { status_code: number; data: Record<string, unknown> };
    assert.equal(created.status_code, 200, JSON.stringify(created));
    assert.equal(created.data.amount, 92.15);
    assert.equal(created.data.fiat, 'EUR', "the order's own currency, not the connection's USDT");
    const wooInv = (await w.merchant.client.get(`/invoices/${created.data.trade_id as string}`)).body.invoice;
    assert.equal(wooInv.price.currency, 'EUR');
    assert.equal(wooInv.base_amount, '100.000000');
    assert.equal(created.data.actual_amount, Number(wooInv.payable_amount));
  } finally {
    await w.close();
    await rates.close();
  }
});
