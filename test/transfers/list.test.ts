import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { pass, startChainHarness } from '../helpers/chain-fixtures.js';
import { ADDRESSES, addWallet, createInvoice, newKey, shop } from '../helpers/shop.js';

test('GET /transfers: unmatched, late and dust transfers, newest first, paged and filtered like GET /invoices, with an API key or a session', async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    const second = await addWallet(a.client, ADDRESSES[1], 'Second');
    const other = await shop(t, ADDRESSES[2], 'Shop Other');
    const inv = (await createInvoice(a.client, { amount: '5', wallet_id: a.walletId, expires_in_minutes: 10 })).body.invoice;
    assert.equal((await createInvoice(a.client, { amount: '1', wallet_id: second, expires_in_minutes: 60 })).status, 201);
    assert.equal((await createInvoice(other.client, { amount: '1', wallet_id: other.walletId, expires_in_minutes: 60 })).status, 201);
    const start = t.clock.now();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push(tg.pay({ to: ADDRESSES[0], amount: 7_000_000n + BigInt(i), blockTimestamp: start + (10 + i) * SECOND }).txId);
    const dust = tg.pay({ to: ADDRESSES[0], amount: 1_000n, blockTimestamp: start + 20 * SECOND }).txId;
    const toSecond = tg.pay({ to: ADDRESSES[1], amount: 3_000_000n, blockTimestamp: start + 21 * SECOND }).txId;
    const foreign = tg.pay({ to: ADDRESSES[2], amount: 3_000_000n, blockTimestamp: start + 22 * SECOND }).txId;
    await pass(h, 2 * MINUTE);
    // A late payment: the invoice's exact amount after its window.
    t.clock.advance(15 * MINUTE);
    const late = tg.pay({ to: ADDRESSES[0], amount: 5_000_001n, blockTimestamp: t.clock.now() }).txId;
    await pass(h, 2 * MINUTE);

    const key = await newKey(a.client, { name: 'reader', scopes: ['invoices:read'] });
    const all = await a.client.get('/transfers', { bearer: key.secret });
    assert.equal(all.status, 200, all.text);
    const hashes = all.body.transfers.map((x: { tx_hash: string }) => x.tx_hash);
    assert.equal(all.body.has_more, false);
    assert.ok(!hashes.includes(foreign), "another merchant's address is never listed");
    assert.deepEqual(new Set(hashes), new Set([...sent, dust, toSecond, late]));
    // Newest recorded first: the late one (recorded last) leads.
    assert.equal(hashes[0], late);
    const kinds = Object.fromEntries(all.body.transfers.map((x: { tx_hash: string; kind: string }) => [x.tx_hash, x.kind]));
    assert.equal(kinds[dust], 'dust');
    assert.equal(kinds[late], 'late');
    assert.equal(kinds[sent[0]!], 'unmatched');
    const lateRow = all.body.transfers[0];
    assert.equal(lateRow.invoice_id, inv.id);
    assert.equal(lateRow.amount, '5.000001');
    assert.equal(lateRow.applied, null);

    // Filters.
    const only = async (q: string) => (await a.client.get(`/transfers?${q}`)).body.transfers.map((x: { tx_hash: string }) => x.tx_hash);
    assert.deepEqual(await only('kind=late'), [late]);
    assert.deepEqual(await only('kind=dust'), [dust]);
    assert.deepEqual(new Set(await only('kind=late&kind=dust')), new Set([late, dust]));
    assert.deepEqual(await only(`wallet_id=${second}`), [toSecond]);
    assert.deepEqual(await only(`invoice_id=${inv.id}`), [late]);
    assert.deepEqual(await only(`wallet_id=${other.walletId}`), [], "another merchant's wallet gives nothing");
    assert.equal((await only(`created_gte=${encodeURIComponent(new Date(start + 10 * MINUTE).toISOString())}`)).length, 1);
    assert.equal((await only(`created_lt=${encodeURIComponent(new Date(start + 10 * MINUTE).toISOString())}`)).length, 7);

    // Paging: three pages of three, back and forth, every transfer once.
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const res = await a.client.get(`/transfers?limit=3${cursor}`);
      assert.equal(res.status, 200);
      seen.push(...res.body.transfers.map((x: { tx_hash: string }) => x.tx_hash));
      if (!res.body.has_more) break;
      cursor = `&starting_after=${res.body.transfers.at(-1).id}`;
    }
    assert.deepEqual(seen, hashes);
    const back = await a.client.get(`/transfers?limit=2&ending_before=${all.body.transfers[4].id}`);
    assert.deepEqual(
      back.body.transfers.map((x: { tx_hash: string }) => x.tx_hash),
      hashes.slice(2, 4),
    );
    assert.equal(back.body.has_more, true);

    // Bad input: 400 naming the parameter; another tenant's cursor is no cursor.
    const foreignId = (await other.client.get('/transfers')).body.transfers[0].id;
    for (const [q, path] of [
      ['kind=confirmed', 'kind'],
      ['limit=0', 'limit'],
      [`starting_after=${foreignId}`, 'query.starting_after'],
      ['created_gte=yesterday', 'created_gte'],
      ['colour=red', ''],
    ] as const) {
      const res = await a.client.get(`/transfers?${q}`);
      assert.equal(res.status, 400, q);
      assert.equal(res.body.error.code, 'validation_error');
      if (path)
        assert.ok(
          res.body.error.details.some((d: { path: string }) => d.path.includes(path)),
          `${q}: ${res.text}`,
        );
    }
    // A key without invoices:read is refused; no credentials, 401.
    const writer = await newKey(a.client, { name: 'writer', scopes: ['invoices:write'] });
    assert.equal((await a.client.get('/transfers', { bearer: writer.secret })).status, 403);
    assert.equal((await t.client({ origin: null }).get('/transfers')).status, 401);
  } finally {
    await h.close();
  }
});
