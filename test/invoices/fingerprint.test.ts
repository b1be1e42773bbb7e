import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, requestFingerprint } from '../../src/invoices/invoices.service.js';
import type { CreateInvoiceBody } from '../../src/invoices/invoices.schemas.js';

// Stored invoices keep the fingerprint of their creation's body: a replay after an upgrade is
// compared with it. These texts and digests were made by the first canonicalJson; they must not move.
const pinned: Array<[Record<string, unknown>, string, string]> = [
  [
    { merchant_order_id: 'o-1', amount: '25', wallet_id: 'wal_x', expires_in_minutes: 20 },
    '{"amount":"25","expires_in_minutes":20,"merchant_order_id":"o-1","wallet_id":"wal_x"}',
    '39d082b3081d9a5a4cdd922f343cf3431633a43e3f228bcf9e74cd406d6f1794',
  ],
  [
    {
      wallet_id: 'wal_x',
      amount: '25.5',
      merchant_order_id: 'ü-ß',
      expires_in_minutes: 30,
      description: 'Tee "XL"\n',
      metadata: { z: [1, { b: null, a: 'x' }, []], A: {}, é: true, a: undefined },
      redirect_url: 'https://shop.example/done?x=1&y=2',
      currency: 'CNY',
      markup_percent: '2.5',
    },
    '{"amount":"25.5","currency":"CNY","description":"Tee \\"XL\\"\\n","expires_in_minutes":30,"markup_percent":"2.5","merchant_order_id":"ü-ß","metadata":{"A":{},"z":[1,{"a":"x","b":null},[]],"é":true},"redirect_url":"https://shop.example/done?x=1&y=2","wallet_id":"wal_x"}',
    'dcc3b5513725aedda9bbb42332692c65c5b228e1a2d3b6aeaa6383d34fec9a7a',
  ],
];

test('the request fingerprint of a body is the one stored invoices were given (sorted keys, undefined left out)', () => {
  for (const [body, text, digest] of pinned) {
    assert.equal(canonicalJson(body), text);
    assert.equal(requestFingerprint(body as unknown as CreateInvoiceBody), digest);
  }
  assert.equal(canonicalJson([undefined, 1, 'x', null, { b: 1, a: [] }]), '[,1,"x",null,{"a":[],"b":1}]');
  // Key order and an undefined member do not change it.
  const [first] = pinned[0]!;
  const reordered = Object.fromEntries(
    Object.entries(first)
      .reverse()
      .concat([['description', undefined]]),
  );
  assert.equal(requestFingerprint(reordered as unknown as CreateInvoiceBody), pinned[0]![2]);
});
