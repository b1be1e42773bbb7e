import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { MINUTE } from '../../src/lib/clock.js';

let t: TestApp;
let staff: SignedIn;
before(async () => {
  t = await startTestApp({ config: { support: { staff_emails: ['Help@Example.test', 'other-staff@example.test'] } } });
  // The list says Help@Example.test: staff status ignores case.
  staff = await signedInMerchant(t, { email: 'help@example.TEST', name: 'Help Desk' });
});
after(() => t.close());

const INBOX_KEYS = ['category', 'created_at', 'email', 'id', 'merchant_id', 'merchant_name', 'name', 'reference', 'source', 'status', 'subject', 'updated_at'];

async function contactTicket(subject = 'Contact', email = 'visitor@example.org'): Promise<string> {
  const res = await t.client().post('/support/contact', { name: 'Vera Visitor', email, subject, message: 'Hello from the form' });
  assert.equal(res.status, 201);
  const row = await t.deps.db.selectFrom('support_tickets').select('id').where('reference', '=', res.body.ticket.reference).executeTakeFirstOrThrow();
  return row.id;
}

async function chat(message = 'Hi there'): Promise<{ id: string; token: string }> {
  const res = await t.client().post('/support/chat', { name: 'Chad Chatter', email: 'chad@example.org', message });
  assert.equal(res.status, 201);
  const row = await t.deps.db.selectFrom('support_tickets').select('id').where('reference', '=', res.body.ticket.reference).executeTakeFirstOrThrow();
  return { id: row.id, token: res.body.chat_token };
}

test('a non-staff session gets 403 support_staff_required on every inbox operation, before any 404', async () => {
  const { client } = await signedInMerchant(t, { name: 'Not Staff' });
  const { ticket } = (await client.post('/support/tickets', { subject: 'x', message: 'y' })).body;
  for (const [method, path, body] of [
    ['GET', '/support/inbox', undefined],
    ['GET', `/support/inbox/${ticket.id}`, undefined],
    ['GET', '/support/inbox/tkt_unknown', undefined],
    ['POST', `/support/inbox/${ticket.id}/messages`, { message: 'self-answer' }],
    ['POST', `/support/inbox/${ticket.id}/status`, { status: 'closed' }],
    ['POST', '/support/inbox/tkt_unknown/status', { status: 'closed' }],
  ] as const) {
    const res = await client.request(method, path, body);
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.equal(res.body.error.code, 'support_staff_required');
  }
  const after = await client.get(`/support/tickets/${ticket.id}`);
  assert.equal(after.body.messages.length, 1);
  assert.equal(after.body.ticket.status, 'open');
  // No session at all: 401; an API key: 403 session_required.
  assert.equal((await t.client().get('/support/inbox')).status, 401);
  const key = await t.client().get('/support/inbox', { bearer: 'gw_live_x' });
  assert.equal(key.body.error.code, 'session_required');
});

test('the inbox lists every ticket with contact details, open first', async () => {
  const owner = await signedInMerchant(t, { name: 'Acme <Shop>', email: 'owner@acme.test' });
  const dashboard = (await owner.client.post('/support/tickets', { subject: 'Dash', message: 'from the console' })).body.ticket;
  t.clock.advance(MINUTE);
  const contactId = await contactTicket('From the form');
  t.clock.advance(MINUTE);
  const chatTicket = await chat('Chat opener');
  t.clock.advance(MINUTE);
  // Answer the dashboard ticket and close the chat: the contact ticket stays open.
  assert.equal((await staff.client.post(`/support/inbox/${dashboard.id}/messages`, { message: 'On it' })).status, 201);
  assert.equal((await staff.client.post(`/support/inbox/${chatTicket.id}/status`, { status: 'closed' })).status, 200);

  const res = await staff.client.get('/support/inbox');
  assert.equal(res.status, 200);
  const tickets: any[] = res.body.tickets;
  const byId = new Map(tickets.map((x) => [x.id, x]));
  assert.deepEqual(Object.keys(byId.get(dashboard.id)).sort(), INBOX_KEYS);

  const d = byId.get(dashboard.id);
  assert.equal(d.source, 'dashboard');
  assert.equal(d.status, 'answered');
  assert.equal(d.merchant_id, owner.merchant.id);
  assert.equal(d.merchant_name, 'Acme <Shop>');
  assert.equal(d.name, 'Acme <Shop>');
  assert.equal(d.email, 'owner@acme.test');

  const c = byId.get(contactId);
  assert.equal(c.source, 'contact');
  assert.equal(c.status, 'open');
  assert.equal(c.merchant_id, null);
  assert.equal(c.merchant_name, null);
  assert.equal(c.name, 'Vera Visitor');
  assert.equal(c.email, 'visitor@example.org');
  assert.equal(c.subject, 'From the form');

  const ch = byId.get(chatTicket.id);
  assert.equal(ch.source, 'chat');
  assert.equal(ch.status, 'closed');
  assert.equal(ch.merchant_id, null);
  assert.equal(ch.name, 'Chad Chatter');
  assert.equal(ch.email, 'chad@example.org');
  assert.equal(ch.subject, 'Chat opener');

  // Open first, then answered, then closed; within a status, newest activity first.
  const rank = { open: 0, answered: 1, closed: 2 } as Record<string, number>;
  for (let i = 1; i < tickets.length; i++) {
    const a = tickets[i - 1];
    const b = tickets[i];
    assert.ok(rank[a.status]! < rank[b.status]! || (a.status === b.status && a.updated_at >= b.updated_at), `order at ${i}`);
  }
  assert.equal(tickets[0].status, 'open');
});

test('the inbox returns at most 300 tickets and keeps open ones first', async () => {
  const now = t.clock.now();
  const rows = Array.from({ length: 310 }, (_, i) => ({
    id: `tkt_inboxseed${i}`,
    reference: `SUP-INBOX${String(i).padStart(5, '0')}`,
    source: 'contact' as const,
    category: 'general' as const,
    status: i % 100 === 0 ? ('open' as const) : ('closed' as const),
    subject: `seed ${i}`,
    merchant_id: null,
    name: 'n',
    email: 'n@example.org',
    chat_token_hash: null,
    // Old activity: the seeded open tickets are the oldest of all, and still come first.
    created_at: now - 1_000_000 + i,
    updated_at: now - 1_000_000 + i,
  }));
  await t.deps.db.insertInto('support_tickets').values(rows).execute();
  const res = await staff.client.get('/support/inbox');
  assert.equal(res.body.tickets.length, 300);
  const ids = res.body.tickets.map((x: { id: string }) => x.id);
  for (const i of [0, 100, 200, 300]) assert.ok(ids.includes(`tkt_inboxseed${i}`), `open seed ${i} listed`);
});

test('GET /support/inbox/{id}: any ticket with contact details; unknown 404', async () => {
  const id = await contactTicket('Details please', 'd@example.org');
  const res = await staff.client.get(`/support/inbox/${id}`);
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.body.ticket).sort(), INBOX_KEYS);
  assert.equal(res.body.ticket.email, 'd@example.org');
  assert.equal(res.body.messages.length, 1);
  assert.equal(res.body.messages[0].body, 'Hello from the form');
  const missing = await staff.client.get('/support/inbox/tkt_nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'not_found');
  assert.equal((await staff.client.post('/support/inbox/tkt_nope/messages', { message: 'x' })).status, 404);
  assert.equal((await staff.client.post('/support/inbox/tkt_nope/status', { status: 'open' })).status, 404);
});

test("a staff reply makes a ticket answered and the owner sees it; the owner's answer reopens it", async () => {
  const owner = await signedInMerchant(t);
  const { ticket } = (await owner.client.post('/support/tickets', { subject: 'Help', message: 'q1' })).body;
  t.clock.advance(MINUTE);
  const reply = await staff.client.post(`/support/inbox/${ticket.id}/messages`, { message: 'a1' });
  assert.equal(reply.status, 201);
  assert.equal(reply.body.ticket.status, 'answered');
  assert.equal(reply.body.ticket.updated_at, new Date(t.clock.now()).toISOString());
  assert.deepEqual(
    reply.body.messages.map((m: any) => [m.author, m.body]),
    [
      ['customer', 'q1'],
      ['staff', 'a1'],
    ],
  );

  const seen = await owner.client.get(`/support/tickets/${ticket.id}`);
  assert.equal(seen.body.ticket.status, 'answered');
  assert.deepEqual(
    seen.body.messages.map((m: any) => m.author),
    ['customer', 'staff'],
  );
  assert.equal(seen.body.ticket.email, undefined, 'the owner view has no inbox fields');

  const back = await owner.client.post(`/support/tickets/${ticket.id}/messages`, { message: 'q2' });
  assert.equal(back.body.ticket.status, 'open');
  // A staff reply on a closed ticket answers it.
  await owner.client.post(`/support/tickets/${ticket.id}/close`, {});
  const late = await staff.client.post(`/support/inbox/${ticket.id}/messages`, { message: 'a2' });
  assert.equal(late.body.ticket.status, 'answered');
  assert.equal(late.body.messages.length, 4);
});

test('a staff reply to a contact-form ticket is 409 email_reply_required and appends nothing', async () => {
  const id = await contactTicket();
  const res = await staff.client.post(`/support/inbox/${id}/messages`, { message: 'Dear visitor' });
  assert.equal(res.status, 409);
  assert.equal(res.body.error.code, 'email_reply_required');
  const thread = await staff.client.get(`/support/inbox/${id}`);
  assert.equal(thread.body.messages.length, 1);
  assert.equal(thread.body.ticket.status, 'open');
  // After answering by email, the staff mark it answered.
  const marked = await staff.client.post(`/support/inbox/${id}/status`, { status: 'answered' });
  assert.equal(marked.status, 200);
  assert.equal(marked.body.ticket.status, 'answered');
});

test('staff set any status in any direction; the body is checked', async () => {
  const owner = await signedInMerchant(t);
  const { ticket } = (await owner.client.post('/support/tickets', { subject: 'S', message: 'm' })).body;
  for (const status of ['closed', 'open', 'answered', 'open', 'closed', 'answered'] as const) {
    t.clock.advance(MINUTE);
    const res = await staff.client.post(`/support/inbox/${ticket.id}/status`, { status });
    assert.equal(res.status, 200);
    assert.equal(res.body.ticket.status, status);
    assert.equal(res.body.ticket.updated_at, new Date(t.clock.now()).toISOString());
    assert.equal((await owner.client.get(`/support/tickets/${ticket.id}`)).body.ticket.status, status);
  }
  // Setting the current status again is not activity.
  const before = (await staff.client.get(`/support/inbox/${ticket.id}`)).body.ticket.updated_at;
  t.clock.advance(MINUTE);
  const same = await staff.client.post(`/support/inbox/${ticket.id}/status`, { status: 'answered' });
  assert.equal(same.body.ticket.updated_at, before);
  for (const body of [{ status: 'pending' }, {}, { status: 'open', note: 'x' }, { status: null }]) {
    const res = await staff.client.post(`/support/inbox/${ticket.id}/status`, body);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'validation_error');
  }
  const long = await staff.client.post(`/support/inbox/${ticket.id}/messages`, { message: 'x'.repeat(5001) });
  assert.equal(long.status, 400);
});

test("a staff reply to a chat shows in the visitor's chat as staff; HTML stays verbatim", async () => {
  const c = await chat('<i>hello</i>');
  const html = '<a href="javascript:alert(1)">click</a>';
  const reply = await staff.client.post(`/support/inbox/${c.id}/messages`, { message: html });
  assert.equal(reply.status, 201);
  assert.equal(reply.body.ticket.status, 'answered');
  const seen = await t.client().get('/support/chat', { headers: { 'x-support-chat-token': c.token } });
  assert.equal(seen.body.ticket.status, 'answered');
  assert.deepEqual(
    seen.body.messages.map((m: any) => [m.author, m.body]),
    [
      ['customer', '<i>hello</i>'],
      ['staff', html],
    ],
  );
  // The staff account's identity does not leak to the visitor.
  assert.ok(!seen.text.includes(staff.merchant.id));
  assert.ok(!seen.text.includes('help@example'));
});

test("the inbox shows a merchant's current name and email, not a copy from when the ticket was opened", async () => {
  const owner = await signedInMerchant(t, { name: 'Old Name', email: 'old@shop.test' });
  const { ticket } = (await owner.client.post('/support/tickets', { subject: 'S', message: 'm' })).body;
  await t.deps.db.updateTable('merchants').set({ name: 'New Name', email: 'new@shop.test' }).where('id', '=', owner.merchant.id).execute();
  const res = await staff.client.get(`/support/inbox/${ticket.id}`);
  assert.equal(res.body.ticket.name, 'New Name');
  assert.equal(res.body.ticket.merchant_name, 'New Name');
  assert.equal(res.body.ticket.email, 'new@shop.test');
});

test('staff status follows the configuration: an account that is not listed is refused', async () => {
  // other-staff@example.test is listed; the same person under another address is not.
  const listed = await signedInMerchant(t, { email: 'OTHER-staff@example.test' });
  assert.equal((await listed.client.get('/support/inbox')).status, 200);
  const near = await signedInMerchant(t, { email: 'other-staff@example.test.evil' });
  assert.equal((await near.client.get('/support/inbox')).status, 403);
});
