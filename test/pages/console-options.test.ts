/**
 * The console shows each invoice's network and token by its plain name, and an invoice's options
 * (its list row names the others while it is open; its page lists them all with their status), in
 * every language.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCALES } from '../../src/lib/i18n.js';
import { projectRoot } from '../../src/lib/assets.js';
import type { TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice } from '../helpers/shop.js';
import { applyPayment, EVM_ADDRESSES, multichainShop, startMultichainApp, type MultichainShop } from '../helpers/multichain.js';

let t: TestApp;
let s: MultichainShop;
before(async () => {
  ({ t } = await startMultichainApp());
  s = await multichainShop(t, ADDRESSES[0], EVM_ADDRESSES[0]);
});
after(() => t.close());

const messages = (locale: string) => JSON.parse(readFileSync(join(projectRoot(), 'locales', `${locale}.json`), 'utf8')) as Record<string, string>;
const page = (path: string, locale: string) => s.client.get(`${t.baseUrl}${path}${path.includes('?') ? '&' : '?'}lang=${locale}`);
/** An invoice of `amount` offering these network and token pairs, created through the API. */
async function offering(orderId: string, amount: string, pairs: string[]) {
  const options = pairs.map((pair) => ({ network: pair.split(' ')[0], token: pair.split(' ')[1] }));
  const res = await createInvoice(s.client, { merchant_order_id: orderId, amount, wallet_id: s.walletId, options });
  assert.equal(res.status, 201, res.text);
  return res.body.invoice;
}
const escaped = (text: string) => text.replaceAll('&', '&amp;').replaceAll("'", '&#39;').replaceAll('"', '&quot;');

test('an open invoice with options: its page lists every option by plain name with its amount, address and status; the list row names the others', async () => {
  const inv = await offering('console-options', '20', ['bsc-mainnet USDT', 'tron-mainnet USDT', 'base-mainnet USDC']);
  for (const locale of LOCALES) {
    const m = messages(locale);
    const detail = await page(`/console/invoices/${inv.id}`, locale);
    assert.equal(detail.status, 200, `${locale}: ${detail.text.slice(0, 200)}`);
    assert.match(detail.text, new RegExp(`<html lang="${locale}" dir="${locale === 'fa' || locale === 'ar' ? 'rtl' : 'ltr'}">`));
    assert.match(detail.text, /<dd id="invoice-network"><bdi>USDT · BNB Smart Chain \(BEP20\)<\/bdi><\/dd>/, locale);
    assert.ok(detail.text.includes(escaped(m['console.invoice.network']!)), `${locale}: network label`);
    assert.ok(detail.text.includes(escaped(m['console.invoice.options_title']!)), `${locale}: options title`);
    assert.ok(detail.text.includes(escaped(m['console.invoice.options_intro']!)), `${locale}: options intro`);
    const table = detail.text.slice(detail.text.indexOf('<table class="stack" id="invoice-options">'));
    const rows = table.slice(0, table.indexOf('</table>')).split('<tr class="option-').slice(1);
    assert.equal(rows.length, 3, locale);
    for (const [i, label] of ['USDT · BNB Smart Chain (BEP20)', 'USDT · TRON', 'USDC · Base'].entries()) {
      assert.ok(rows[i]!.startsWith('open"'), `${locale} ${i}`);
      assert.ok(rows[i]!.includes(`<bdi>${label}</bdi>`), `${locale} ${i}: ${rows[i]}`);
      assert.ok(rows[i]!.includes(`>${inv.options[i].payable_amount}</bdi>`), `${locale} ${i}: amount`);
      assert.ok(rows[i]!.includes(escaped(m['console.invoice.option_open']!)), `${locale} ${i}: status`);
    }
    const list = await page('/console/invoices', locale);
    assert.equal(list.status, 200);
    const row = list.text.slice(list.text.indexOf('console-options'));
    assert.ok(row.includes('<span class="small network"><bdi>USDT · BNB Smart Chain (BEP20)</bdi></span>'), locale);
    const others = escaped(m['console.invoices.or_options']!.replace('{options}', 'USDT · TRON, USDC · Base'));
    assert.ok(row.slice(0, 2000).includes(others), `${locale}: ${others}`);
  }
});

test('paid through an option: the page says which, the others released, and the list names the paying network alone', async () => {
  const inv = await offering('console-options-paid', '21', ['tron-mainnet USDT', 'ethereum-mainnet USDC']);
  assert.equal(
    (await applyPayment(t, { network: 'ethereum-mainnet', token: 'USDC', to: EVM_ADDRESSES[0]!, amount: inv.options[1].payable_amount })).kind,
    'confirmed',
  );
  for (const locale of ['en', 'fa'] as const) {
    const m = messages(locale);
    const detail = await page(`/console/invoices/${inv.id}`, locale);
    assert.match(detail.text, /<dd id="invoice-network"><bdi>USDC · Ethereum \(ERC20\)<\/bdi><\/dd>/);
    assert.ok(detail.text.includes(escaped(m['console.invoice.options_paid']!)), locale);
    const table = detail.text.slice(detail.text.indexOf('id="invoice-options"'));
    assert.match(table, /<tr class="option-released">[\s\S]*TRON<[\s\S]*<tr class="option-paid">[\s\S]*Ethereum \(ERC20\)/);
    assert.ok(table.includes(escaped(m['console.invoice.option_paid']!)) && table.includes(escaped(m['console.invoice.option_released']!)), locale);
    const list = await page('/console/invoices?status=confirmed', locale);
    const row = list.text.slice(list.text.indexOf('console-options-paid'));
    const cell = row.slice(0, row.indexOf('</tr>'));
    assert.ok(cell.includes('<bdi>USDC · Ethereum (ERC20)</bdi>'), locale);
    assert.ok(!cell.includes('class="muted small options"'), `${locale}: a paid invoice offers nothing more`);
  }
});
