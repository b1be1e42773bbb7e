import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventPageQueries } from '../../src/events/events.repo.js';
import { startTestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, newKey, shop } from '../helpers/shop.js';
import { sqliteOnly } from '../helpers/database.js';

test("GET /events: newest first, cursor paging, type filter; GET /events/{id}; another tenant's event is 404", async () => {
  const t = await startTestApp();
  try {
    const s = await shop(t, ADDRESSES[0]);
    const other = await shop(t, ADDRESSES[1], 'Other');
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      if (i % 2 === 0) t.clock.advance(1000);
      created.push((await createInvoice(s.client, { amount: `${i + 1}`, wallet_id: s.walletId })).body.invoice.id);
    }
    t.clock.advance(1000);
    await s.client.post(`/invoices/${created[2]}/cancel`, {});
    await s.client.post(`/invoices/${created[5]}/cancel`, {});
    const theirs = await createInvoice(other.client, { amount: '1', wallet_id: other.walletId });
    assert.equal(theirs.status, 201);

    const key = await newKey(s.client, { name: 'reader', scopes: ['invoices:read'] });
    const all = await s.client.get('/events', { bearer: key.secret });
    assert.equal(all.status, 200, all.text);
    const events = all.body.events as Array<{ id: string; type: string; created_at: string; data: { invoice: { id: string } } }>;
    assert.equal(events.length, 9, "7 created and 2 expired, none of the other merchant's");
    assert.equal(all.body.has_more, false);
    assert.deepEqual(
      events.slice(0, 2).map((e) => e.type),
      ['invoice.expired', 'invoice.expired'],
      'newest first',
    );
    for (let i = 1; i < events.length; i++) assert.ok(events[i - 1]!.created_at >= events[i]!.created_at);
    assert.ok(events.every((e) => e.data.invoice.id !== theirs.body.invoice.id));

    // Paging by 2 walks the same list; ending_before walks back.
    const walked: string[] = [];
    let after = '';
    for (;;) {
      const page = await s.client.get(`/events?limit=2${after}`);
      walked.push(...page.body.events.map((e: { id: string }) => e.id));
      if (!page.body.has_more) break;
      after = `&starting_after=${page.body.events.at(-1).id}`;
    }
    assert.deepEqual(
      walked,
      events.map((e) => e.id),
    );
    const back = await s.client.get(`/events?limit=3&ending_before=${events[4]!.id}`);
    assert.deepEqual(
      back.body.events.map((e: { id: string }) => e.id),
      events.slice(1, 4).map((e) => e.id),
    );
    assert.equal(back.body.has_more, true);

    const expired = await s.client.get('/events?type=invoice.expired');
    assert.deepEqual(expired.body.events.map((e: { data: { invoice: { id: string } } }) => e.data.invoice.id).sort(), [created[2], created[5]].sort());
    const both = await s.client.get('/events?type=invoice.expired&type=invoice.created&limit=3');
    assert.deepEqual(
      both.body.events.map((e: { id: string }) => e.id),
      events.slice(0, 3).map((e) => e.id),
    );
    const since = await s.client.get(`/events?created_gte=${encodeURIComponent(events[0]!.created_at)}`);
    assert.deepEqual(
      since.body.events.map((e: { id: string }) => e.id).sort(),
      events
        .filter((e) => e.created_at >= events[0]!.created_at)
        .map((e) => e.id)
        .sort(),
    );

    const one = await s.client.get(`/events/${events[3]!.id}`, { bearer: key.secret });
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.event, events[3]);

    // Tenancy: the other merchant's event is 404 by id, and not a valid cursor.
    const theirEvent = (await other.client.get('/events')).body.events[0].id as string;
    const foreign = await s.client.get(`/events/${theirEvent}`);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'not_found');
    assert.equal((await s.client.get(`/events?starting_after=${theirEvent}`)).status, 400);
    assert.equal((await s.client.get('/events/evt_nope')).status, 404);

    // A key without invoices:read is refused; no credentials is 401.
    const ledger = await newKey(s.client, { name: 'ledger', scopes: ['ledger:read'] });
    assert.equal((await s.client.get('/events', { bearer: ledger.secret })).body.error.code, 'insufficient_scope');
    assert.equal((await t.client().get('/events')).status, 401);
  } finally {
    await t.close();
  }
});

test('each page of GET /events is one index range read', { skip: sqliteOnly }, async () => {
  const t = await startTestApp();
  try {
    const s = await shop(t, ADDRESSES[0]);
    const explain = (q: { sql: string; parameters: readonly unknown[] }) =>
      (t.deps.sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.parameters) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    const cursor = { createdAt: t.clock.now(), id: 'evt_x' };
    for (const types of [undefined, ['invoice.created' as const], ['invoice.created' as const, 'invoice.expired' as const]]) {
      for (const page of [{ limit: 100 }, { limit: 100, startingAfter: cursor }, { limit: 100, endingBefore: cursor, createdGte: 0 }]) {
        for (const q of eventPageQueries(t.deps.db, s.merchant.id, types, page)) {
          const plan = explain(q);
          assert.match(plan, /^SEARCH events USING INDEX events_merchant_(created_id|type_created)_idx/, plan);
          assert.doesNotMatch(plan, /TEMP B-TREE|SCAN/, plan);
        }
      }
    }
  } finally {
    await t.close();
  }
});
