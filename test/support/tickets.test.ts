import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { MINUTE } from '../../src/lib/clock.js';
import { onPostgres } from '../helpers/database.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ config: { support: { reference_prefix: 'HELP' } } });
});
after(() => t.close());

const TICKET_KEYS = ['category', 'created_at', 'id', 'reference', 'source', 'status', 'subject', 'updated_at'];

test('POST /support/tickets opens a dashboard ticket with its first message', async () => {
  const { client } = await signedInMerchant(t);
  const res = await client.post('/support/tickets', { subject: 'Payout question', category: 'payments', message: 'Where is my money?' });
  assert.equal(res.status, 201);
  const { ticket, messages } = res.body;
  assert.deepEqual(Object.keys(ticket).sort(), TICKET_KEYS);
  assert.match(ticket.id, /^tkt_[A-Za-z0-9_-]{22}$/);
  assert.match(ticket.reference, /^HELP-[A-Z0-9]{10}$/);
  assert.equal(ticket.subject, 'Payout question');
  assert.equal(ticket.category, 'payments');
  assert.equal(ticket.status, 'open');
  assert.equal(ticket.source, 'dashboard');
  assert.equal(ticket.created_at, new Date(t.clock.now()).toISOString());
  assert.equal(ticket.updated_at, ticket.created_at);
  assert.equal(messages.length, 1);
  assert.deepEqual(Object.keys(messages[0]).sort(), ['author', 'body', 'created_at', 'id']);
  assert.match(messages[0].id, /^msg_/);
  assert.equal(messages[0].author, 'customer');
  assert.equal(messages[0].body, 'Where is my money?');
});

test('category defaults to general; an unknown category or field is 400', async () => {
  const { client } = await signedInMerchant(t);
  const res = await client.post('/support/tickets', { subject: 'Hi', message: 'Hello' });
  assert.equal(res.status, 201);
  assert.equal(res.body.ticket.category, 'general');
  for (const category of ['technical', 'account', 'other']) {
    assert.equal((await client.post('/support/tickets', { subject: 'Hi', category, message: 'Hello' })).status, 201);
  }
  const bad = await client.post('/support/tickets', { subject: 'Hi', category: 'billing', message: 'Hello' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'validation_error');
  assert.ok(bad.body.error.details.some((d: { path: string }) => d.path === 'category'));
  const extra = await client.post('/support/tickets', { subject: 'Hi', message: 'Hello', priority: 'high' });
  assert.equal(extra.status, 400);
  const nul = await client.post('/support/tickets', { subject: 'Hi', message: 'Hello', category: null });
  assert.equal(nul.status, 400);
});

test('every owner ticket operation needs a session; an API key is 403 session_required; a foreign Origin 403', async () => {
  const anonymous = t.client();
  assert.equal((await anonymous.get('/support/tickets')).status, 401);
  assert.equal((await anonymous.post('/support/tickets', { subject: 'a', message: 'b' })).status, 401);
  assert.equal((await anonymous.get('/support/tickets/tkt_x')).status, 401);
  assert.equal((await anonymous.post('/support/tickets/tkt_x/messages', { message: 'b' })).status, 401);
  assert.equal((await anonymous.post('/support/tickets/tkt_x/close', {})).status, 401);
  const key = await anonymous.get('/support/tickets', { bearer: 'gw_live_whatever' });
  assert.equal(key.status, 403);
  assert.equal(key.body.error.code, 'session_required');

  const { client } = await signedInMerchant(t);
  const foreign = await client.post('/support/tickets', { subject: 'a', message: 'b' }, { origin: 'https://evil.example' });
  assert.equal(foreign.status, 403);
  assert.equal(foreign.body.error.code, 'invalid_origin');
  const none = await client.post('/support/tickets', { subject: 'a', message: 'b' }, { origin: null });
  assert.equal(none.status, 403);
});

test('GET /support/tickets lists only my tickets, newest activity first', async () => {
  const me = await signedInMerchant(t);
  const other = await signedInMerchant(t);
  await other.client.post('/support/tickets', { subject: 'Not yours', message: 'x' });
  const first = (await me.client.post('/support/tickets', { subject: 'First', message: 'x' })).body.ticket;
  t.clock.advance(MINUTE);
  const second = (await me.client.post('/support/tickets', { subject: 'Second', message: 'x' })).body.ticket;
  t.clock.advance(MINUTE);
  let list = await me.client.get('/support/tickets');
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.tickets.map((x: { id: string }) => x.id),
    [second.id, first.id],
  );
  assert.deepEqual(Object.keys(list.body.tickets[0]).sort(), TICKET_KEYS);

  // A new message on the older ticket moves it to the top.
  await me.client.post(`/support/tickets/${first.id}/messages`, { message: 'any news?' });
  list = await me.client.get('/support/tickets');
  assert.deepEqual(
    list.body.tickets.map((x: { id: string }) => x.id),
    [first.id, second.id],
  );
  assert.equal(list.body.tickets[0].updated_at, new Date(t.clock.now()).toISOString());
  assert.equal(list.body.tickets[0].created_at, first.created_at);
});

test('GET /support/tickets returns at most 200', async () => {
  const { merchant, client } = await signedInMerchant(t);
  // Seeded straight into the table: 205 tickets over HTTP would only slow the test down.
  const now = t.clock.now();
  const rows = Array.from({ length: 205 }, (_, i) => ({
    id: `tkt_seed${merchant.id}${i}`,
    reference: `HELP-S${String(i).padStart(3, '0')}${merchant.id.slice(4, 10).toUpperCase()}`,
    source: 'dashboard' as const,
    category: 'general' as const,
    status: 'open' as const,
    subject: `seed ${i}`,
    merchant_id: merchant.id,
    name: null,
    email: null,
    chat_token_hash: null,
    created_at: now + i,
    updated_at: now + i,
  }));
  await t.deps.db.insertInto('support_tickets').values(rows).execute();
  const list = await client.get('/support/tickets');
  assert.equal(list.body.tickets.length, 200);
  assert.equal(list.body.tickets[0].subject, 'seed 204');
  assert.equal(list.body.tickets[199].subject, 'seed 5');
});

test("GET /support/tickets/{id}: the thread; another owner's ticket and an unknown id are the same 404", async () => {
  const me = await signedInMerchant(t);
  const other = await signedInMerchant(t);
  const mine = (await me.client.post('/support/tickets', { subject: 'Mine', message: 'one' })).body.ticket;
  const res = await me.client.get(`/support/tickets/${mine.id}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.ticket.id, mine.id);
  assert.equal(res.body.messages[0].body, 'one');

  const theirs = await other.client.get(`/support/tickets/${mine.id}`);
  const unknown = await other.client.get('/support/tickets/tkt_doesnotexist');
  assert.equal(theirs.status, 404);
  assert.equal(unknown.status, 404);
  assert.deepEqual(theirs.body, unknown.body);
  assert.equal(theirs.body.error.code, 'not_found');
  // Writing on or closing someone else's ticket is 404 too, and changes nothing.
  assert.equal((await other.client.post(`/support/tickets/${mine.id}/messages`, { message: 'hijack' })).status, 404);
  assert.equal((await other.client.post(`/support/tickets/${mine.id}/close`, {})).status, 404);
  const after = await me.client.get(`/support/tickets/${mine.id}`);
  assert.equal(after.body.messages.length, 1);
  assert.equal(after.body.ticket.status, 'open');
});

test('owner reply appends in order; closing; a reply reopens a closed ticket', async () => {
  const { client } = await signedInMerchant(t);
  const ticket = (await client.post('/support/tickets', { subject: 'Flow', message: 'first' })).body.ticket;
  const reply = await client.post(`/support/tickets/${ticket.id}/messages`, { message: 'second' });
  assert.equal(reply.status, 201);
  assert.equal(reply.body.ticket.status, 'open');
  assert.deepEqual(
    reply.body.messages.map((m: { body: string }) => m.body),
    ['first', 'second'],
  );

  t.clock.advance(MINUTE);
  const closed = await client.post(`/support/tickets/${ticket.id}/close`, {});
  assert.equal(closed.status, 200);
  assert.equal(closed.body.ticket.status, 'closed');
  assert.equal(closed.body.ticket.updated_at, new Date(t.clock.now()).toISOString());
  assert.equal(closed.body.messages.length, 2);

  // Closing again is harmless and does not count as activity.
  t.clock.advance(MINUTE);
  const again = await client.post(`/support/tickets/${ticket.id}/close`);
  assert.equal(again.status, 200);
  assert.equal(again.body.ticket.status, 'closed');
  assert.equal(again.body.ticket.updated_at, closed.body.ticket.updated_at);
  assert.equal((await client.post(`/support/tickets/${ticket.id}/close`, { reason: 'x' })).status, 400);

  const reopened = await client.post(`/support/tickets/${ticket.id}/messages`, { message: 'third' });
  assert.equal(reopened.status, 201);
  assert.equal(reopened.body.ticket.status, 'open');
  assert.deepEqual(
    reopened.body.messages.map((m: { body: string }) => m.body),
    ['first', 'second', 'third'],
  );
  assert.ok(reopened.body.messages.every((m: { author: string }) => m.author === 'customer'));
});

test('length limits: subject 1 to 150, message 1 to 5000 (in characters), no blank text', async () => {
  const { client } = await signedInMerchant(t);
  const ok = await client.post('/support/tickets', { subject: 's'.repeat(150), message: 'm'.repeat(5000) });
  assert.equal(ok.status, 201);
  assert.equal(ok.body.ticket.subject.length, 150);
  assert.equal(ok.body.messages[0].body.length, 5000);
  // An emoji is one character, even though it takes two UTF-16 units.
  const emoji = await client.post('/support/tickets', { subject: '💸'.repeat(150), message: '🙂'.repeat(5000) });
  assert.equal(emoji.status, 201);
  for (const body of [
    { subject: 's'.repeat(151), message: 'm' },
    { subject: '💸'.repeat(151), message: 'm' },
    { subject: '', message: 'm' },
    { subject: '   ', message: 'm' },
    { subject: 's', message: 'm'.repeat(5001) },
    { subject: 's', message: '' },
    { subject: 's', message: '\n\t ' },
    { subject: 's' },
    { message: 'm' },
    { subject: 5, message: 'm' },
  ]) {
    const res = await client.post('/support/tickets', body);
    assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
    assert.equal(res.body.error.code, 'validation_error');
  }
  const ticket = ok.body.ticket;
  assert.equal((await client.post(`/support/tickets/${ticket.id}/messages`, { message: 'm'.repeat(5001) })).status, 400);
  assert.equal((await client.post(`/support/tickets/${ticket.id}/messages`, { message: '' })).status, 400);
  assert.equal((await client.post(`/support/tickets/${ticket.id}/messages`, {})).status, 400);
  assert.equal((await client.post(`/support/tickets/${ticket.id}/messages`, { message: 'm'.repeat(5000) })).status, 201);
});

test('HTML and script in a subject or message are stored and returned verbatim', async () => {
  const { client } = await signedInMerchant(t);
  const subject = '<img src=x onerror=alert(1)> & "quotes"';
  const message = `<script>alert("x")</script>\n<b>bold</b> &amp; ${onPostgres ? '' : '\u0000 '}end`;
  if (onPostgres) {
    // PostgreSQL cannot store U+0000 in text: there the same message with it is a 400, not a 500.
    const refused = await client.post('/support/tickets', { subject, message: `${message} \u0000` });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'validation_error');
  }
  const res = await client.post('/support/tickets', { subject, message });
  assert.equal(res.status, 201);
  const thread = await client.get(`/support/tickets/${res.body.ticket.id}`);
  assert.equal(thread.body.ticket.subject, subject);
  assert.equal(thread.body.messages[0].body, message);
  assert.ok(thread.text.includes('<script>alert(\\"x\\")</script>'));
  assert.match(thread.headers.get('content-type') ?? '', /application\/json/);
});

test('references are unique and of the configured form; ticket ids are long random strings', async () => {
  const { client } = await signedInMerchant(t);
  const refs = new Set<string>();
  const ids = new Set<string>();
  for (let i = 0; i < 30; i++) {
    const { ticket } = (await client.post('/support/tickets', { subject: `n${i}`, message: 'x' })).body;
    assert.match(ticket.reference, /^HELP-[A-Z0-9]{10}$/);
    refs.add(ticket.reference);
    ids.add(ticket.id);
  }
  assert.equal(refs.size, 30);
  assert.equal(ids.size, 30);
});

test('concurrent replies on one ticket are all kept, each once, in one order for every reader', async () => {
  const { client } = await signedInMerchant(t);
  const { ticket } = (await client.post('/support/tickets', { subject: 'Race', message: 'm0' })).body;
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => client.post(`/support/tickets/${ticket.id}/messages`, { message: `m${i + 1}` })));
  assert.ok(results.every((r) => r.status === 201));
  const thread = (await client.get(`/support/tickets/${ticket.id}`)).body;
  const bodies: string[] = thread.messages.map((m: { body: string }) => m.body);
  assert.equal(bodies.length, 13);
  assert.equal(new Set(bodies).size, 13);
  assert.equal(bodies[0], 'm0');
  // Each answer showed the thread as it stood after its own message: a prefix of the final order.
  for (const r of results) {
    const seen: string[] = r.body.messages.map((m: { body: string }) => m.body);
    assert.deepEqual(seen, bodies.slice(0, seen.length));
  }
});

test('a wrong method on a support path is 405 with Allow', async () => {
  const { client } = await signedInMerchant(t);
  const put = await client.request('PUT', '/support/tickets', { subject: 'x', message: 'y' });
  assert.equal(put.status, 405);
  assert.match(put.headers.get('allow') ?? '', /GET.*POST|POST.*GET/);
  const del = await t.client().request('DELETE', '/support/chat');
  assert.equal(del.status, 405);
  assert.equal((await client.get('/support/tickets/tkt_x/close')).status, 405);
});
