/**
 * The return hop of shop invoices (docs/shops.md, Return; docs/security.md): it is named by the
 * invoice's checkout token. The attack of the audit, through the real server: a stranger who knows a
 * connection id (public) and an order number (often sequential) asks for
 * `/shops/return/{connection}/{order}` of a paid Epay order, and must get neither a redirect nor the
 * signed notice. The payer's own link (the checkout page's Return) still works, signed fields and all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInvoice } from '../helpers/shop.js';
import { connect, shopSign, local, payThroughCheckout, signed, startShopWorld, type ShopWorld } from './support.js';

const RETURN_URL = 'https://shop.example/return?order=SEQ-1001';

/** A paid Epay order with a return_url; its invoice as the merchant's API shows it. */
async function paidEpayOrder(w: ShopWorld) {
  const conn = await connect(w, { protocol: 'epay', allow_http_notify: true });
  const fields = {
    pid: String(conn.pid),
    out_trade_no: 'SEQ-1001',
    notify_url: w.standIn.url('/notify'),
    return_url: RETURN_URL,
    name: 'Secret plan',
    money: '10',
    param: 'customer=42',
  };
  const submit = await fetch(`${local(w, conn.apiUrl)}submit.php?${new URLSearchParams(signed(fields, conn.key))}`, { redirect: 'manual' });
  assert.equal(submit.status, 302, await submit.text());
  const { invoiceId } = await payThroughCheckout(w, submit.headers.get('location')!);
  const invoice = (await w.merchant.client.get(`/invoices/${invoiceId}`)).body.invoice;
  assert.equal(invoice.status, 'confirmed');
  return { conn, invoice };
}

/** A GET that must not lead anywhere nor tell anything of the order. */
async function refused(w: ShopWorld, path: string, secrets: string[]): Promise<void> {
  const res = await fetch(`${w.h.t.baseUrl}${path}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  const body = await res.text();
  assert.equal(res.status, 404, `${path}: ${res.status}`);
  assert.equal(res.headers.get('location'), null, `${path}: no redirect`);
  for (const secret of secrets) assert.ok(!body.includes(secret), `${path}: the page does not carry ${secret}`);
}

test('a stranger with the connection id and the order number gets no redirect and no signed field; the payer’s link does', async () => {
  const w = await startShopWorld();
  try {
    const { conn, invoice } = await paidEpayOrder(w);
    const secrets = [invoice.id, 'Secret plan', 'customer=42', 'shop.example/return'];

    // The audit's request, and its variants: the old form answers one page, whatever exists.
    await refused(w, `/shops/return/${conn.id}/SEQ-1001`, secrets);
    await refused(w, `/shops/return/${conn.id}/SEQ-1002`, secrets);
    await refused(w, `/shops/return/${encodeURIComponent(conn.id)}/${encodeURIComponent('SEQ-1001')}?x=1`, secrets);
    // Tokens that are not this invoice's: guessed, malformed, or another (non-shop) invoice's own.
    await refused(w, `/shops/return/${'A'.repeat(43)}`, secrets);
    await refused(w, `/shops/return/${conn.id}`, secrets);
    // (the page's language links repeat its own path, so the id asked for is not a secret there)
    await refused(w, `/shops/return/${invoice.id}`, secrets.slice(1));
    const plain = await createInvoice(w.merchant.client, { amount: '1.000000', wallet_id: w.merchant.walletId });
    assert.equal(plain.status, 201, plain.text);
    await refused(w, `/shops/return/${plain.body.invoice.checkout_token}`, secrets);
    const gone = await fetch(`${w.h.t.baseUrl}/shops/return/${conn.id}/SEQ-1001`, { headers: { accept: 'text/html', 'accept-language': 'en' } });
    assert.match(await gone.text(), /not valid/, 'the old link says it is no longer valid');

    // The payer's link: the checkout token names the hop, and it carries the signed fields.
    assert.equal(invoice.redirect_url, `${w.h.t.config.server.public_url}/shops/return/${invoice.checkout_token}`);
    const page = await (await fetch(local(w, invoice.checkout_url))).text();
    assert.ok(page.includes(`href="${invoice.redirect_url}"`), 'the checkout page offers the token link');
    const back = await fetch(local(w, invoice.redirect_url), { redirect: 'manual' });
    assert.equal(back.status, 302);
    const location = new URL(back.headers.get('location')!);
    assert.equal(`${location.origin}${location.pathname}`, 'https://shop.example/return');
    const query = Object.fromEntries(location.searchParams);
    assert.equal(query.trade_no, invoice.id);
    assert.equal(query.trade_status, 'TRADE_SUCCESS');
    assert.equal(query.param, 'customer=42');
    const { order: _order, ...notice } = query;
    assert.equal(query.sign, shopSign(notice, conn.key), 'signed as the shop checks it');
  } finally {
    await w.close();
  }
});

test('a checkout page of a shop invoice made before the change offers the token link, not its stored old one', async () => {
  const w = await startShopWorld();
  try {
    const { conn, invoice } = await paidEpayOrder(w);
    // What an earlier version stored as the invoice's return link.
    const old = `${w.h.t.config.server.public_url}/shops/return/${conn.id}/SEQ-1001`;
    await w.h.t.deps.db.updateTable('invoices').set({ redirect_url: old }).where('id', '=', invoice.id).execute();
    const page = await (await fetch(local(w, invoice.checkout_url))).text();
    assert.ok(!page.includes(old), 'the old link is not offered');
    assert.ok(page.includes(`href="${w.h.t.config.server.public_url}/shops/return/${invoice.checkout_token}"`));
  } finally {
    await w.close();
  }
});
