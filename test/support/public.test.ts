import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { MINUTE } from '../../src/lib/clock.js';
import { sha256Hex } from '../../src/lib/crypto.js';

let t: TestApp;
let staff: SignedIn;
before(async () => {
  // Rate limits off here: they have their own tests in limits.test.ts.
  t = await startTestApp({ config: { support: { staff_emails: ['staff@example.test'] }, rate_limits: { public_per_ip: 0, chat_per_token: 0 } } });
  staff = await signedInMerchant(t, { email: 'staff@example.test' });
});
after(() => t.close());

const CONTACT = { name: 'Vera', email: 'vera@example.org', subject: 'Pricing', category: 'payments', message: 'How much?' };
const CHAT = { name: 'Chad', email: 'chad.private@example.org', message: 'Is anyone there?' };
const chatHeaders = (token: string) => ({ headers: { 'x-support-chat-token': token } });

async function ticketByReference(reference: string) {
  return t.deps.db.selectFrom('support_tickets').selectAll().where('reference', '=', reference).executeTakeFirstOrThrow();
}

test('POST /support/contact: 201 with only the reference, status and time', async () => {
  const res = await t.client().post('/support/contact', CONTACT);
  assert.equal(res.status, 201);
  assert.deepEqual(Object.keys(res.body), ['ticket']);
  assert.deepEqual(Object.keys(res.body.ticket).sort(), ['created_at', 'reference', 'status']);
  assert.match(res.body.ticket.reference, /^SUP-[A-Z0-9]{10}$/);
  assert.equal(res.body.ticket.status, 'open');
  assert.equal(res.body.ticket.created_at, new Date(t.clock.now()).toISOString());
  assert.ok(!res.text.includes('vera@example.org'));
  assert.ok(!res.text.includes('tkt_'));

  const row = await ticketByReference(res.body.ticket.reference);
  assert.equal(row.source, 'contact');
  assert.equal(row.category, 'payments');
  assert.equal(row.merchant_id, null);
  const inbox = await staff.client.get(`/support/inbox/${row.id}`);
  assert.equal(inbox.body.ticket.name, 'Vera');
  assert.equal(inbox.body.ticket.email, 'vera@example.org');
  assert.equal(inbox.body.ticket.subject, 'Pricing');
  assert.deepEqual(
    inbox.body.messages.map((m: any) => [m.author, m.body]),
    [['customer', 'How much?']],
  );
});

test('contact: category defaults to general; a session is not needed and not used', async () => {
  const { category: _omit, ...rest } = CONTACT;
  const { client } = await signedInMerchant(t);
  const res = await client.post('/support/contact', rest);
  assert.equal(res.status, 201);
  const row = await ticketByReference(res.body.ticket.reference);
  assert.equal(row.category, 'general');
  assert.equal(row.merchant_id, null, 'a contact-form ticket is never tied to an account');
  // A cross-site form post works too: the contact form is public.
  assert.equal((await t.client({ origin: 'https://elsewhere.example' }).post('/support/contact', CONTACT)).status, 201);
});

test('contact: every field limit', async () => {
  const local = 'a'.repeat(64);
  const domain = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.org`;
  const email254 = `${local}@${domain}`;
  assert.equal(email254.length, 254);
  const ok = await t
    .client()
    .post('/support/contact', { ...CONTACT, name: 'n'.repeat(100), email: email254, subject: 's'.repeat(150), message: 'm'.repeat(5000) });
  assert.equal(ok.status, 201);
  const bad: Array<Record<string, unknown>> = [
    { ...CONTACT, name: 'n'.repeat(101) },
    { ...CONTACT, name: '' },
    { ...CONTACT, name: ' ' },
    { ...CONTACT, email: `${local}@x${domain}` },
    { ...CONTACT, email: 'not-an-email' },
    { ...CONTACT, email: '' },
    { ...CONTACT, subject: 's'.repeat(151) },
    { ...CONTACT, subject: '' },
    { ...CONTACT, message: 'm'.repeat(5001) },
    { ...CONTACT, message: '' },
    { ...CONTACT, category: 'spam' },
    { ...CONTACT, captcha_token: 'x'.repeat(2049) },
    { ...CONTACT, phone: '123' },
    { ...CONTACT, email: null },
  ];
  for (const field of ['name', 'email', 'subject', 'message']) {
    const copy: Record<string, unknown> = { ...CONTACT };
    delete copy[field];
    bad.push(copy);
  }
  for (const body of bad) {
    const res = await t.client().post('/support/contact', body);
    assert.equal(res.status, 400, JSON.stringify(body).slice(0, 100));
    assert.equal(res.body.error.code, 'validation_error');
  }
  // captcha_token is ignored (but limited) while captcha is off.
  assert.equal((await t.client().post('/support/contact', { ...CONTACT, captcha_token: 'x'.repeat(2048) })).status, 201);
});

test('POST /support/chat: 201 thread with a one-time token; the email is never echoed', async () => {
  const res = await t.client().post('/support/chat', CHAT);
  assert.equal(res.status, 201);
  assert.deepEqual(Object.keys(res.body).sort(), ['chat_token', 'messages', 'name', 'ticket']);
  assert.deepEqual(Object.keys(res.body.ticket).sort(), ['created_at', 'reference', 'status', 'subject', 'updated_at']);
  assert.equal(res.body.ticket.status, 'open');
  assert.equal(res.body.ticket.subject, 'Is anyone there?');
  assert.equal(res.body.name, 'Chad');
  assert.equal(res.body.messages.length, 1);
  assert.equal(res.body.messages[0].author, 'customer');
  assert.equal(res.body.messages[0].body, 'Is anyone there?');
  assert.match(res.body.chat_token, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(!res.text.includes('chad.private'));
  assert.ok(!res.text.includes('tkt_'));

  // Stored as SHA-256 only.
  const row = await ticketByReference(res.body.ticket.reference);
  assert.equal(row.chat_token_hash, sha256Hex(res.body.chat_token));
  const dump = JSON.stringify(await t.deps.db.selectFrom('support_tickets').selectAll().execute());
  assert.ok(!dump.includes(res.body.chat_token));
  assert.ok(!t.logText().includes(res.body.chat_token));

  // Later reads never show the token again, nor the email.
  const read = await t.client().get('/support/chat', chatHeaders(res.body.chat_token));
  assert.equal(read.status, 200);
  assert.deepEqual(Object.keys(read.body).sort(), ['messages', 'name', 'ticket']);
  assert.deepEqual(read.body.ticket, res.body.ticket);
  assert.ok(!read.text.includes(res.body.chat_token));
  assert.ok(!read.text.includes('chad.private'));
});

test('chat start limits: name 1 to 100, email at most 254, message 1 to 5000', async () => {
  assert.equal((await t.client().post('/support/chat', { ...CHAT, name: 'n'.repeat(100), message: 'm'.repeat(5000) })).status, 201);
  for (const body of [
    { ...CHAT, name: 'n'.repeat(101) },
    { ...CHAT, name: '' },
    { ...CHAT, email: `${'a'.repeat(250)}@x.io` },
    { ...CHAT, email: 'nope' },
    { ...CHAT, message: 'm'.repeat(5001) },
    { ...CHAT, message: '' },
    { name: 'n', email: 'e@example.org' },
    { ...CHAT, subject: 'chats have none' },
  ]) {
    const res = await t.client().post('/support/chat', body);
    assert.equal(res.status, 400, JSON.stringify(body).slice(0, 100));
    assert.equal(res.body.error.code, 'validation_error');
  }
});

test('a long first chat message gives a short subject; the message itself stays whole', async () => {
  const message = `Hello\n\n  I paid   twice ${'x'.repeat(200)}`;
  const res = await t.client().post('/support/chat', { ...CHAT, message });
  assert.equal(res.status, 201);
  assert.ok(res.body.ticket.subject.startsWith('Hello I paid twice xxx'));
  assert.equal([...res.body.ticket.subject].length, 80);
  assert.ok(res.body.ticket.subject.endsWith('…'));
  assert.equal(res.body.messages[0].body, message);
});

test('GET and POST /support/chat*: a missing, malformed or unknown token is 401 unauthorized', async () => {
  const unknown = 'A'.repeat(43);
  for (const headers of [
    {} as Record<string, string>,
    { 'x-support-chat-token': '' },
    { 'x-support-chat-token': 'short' },
    { 'x-support-chat-token': unknown },
  ]) {
    const get = await t.client().get('/support/chat', { headers });
    assert.equal(get.status, 401, JSON.stringify(headers));
    assert.equal(get.body.error.code, 'unauthorized');
    const post = await t.client().post('/support/chat/messages', { message: 'hi' }, { headers });
    assert.equal(post.status, 401, JSON.stringify(headers));
    assert.equal(post.body.error.code, 'unauthorized');
  }
  // Without a token the body is not even looked at.
  const noTokenBadBody = await t.client().post('/support/chat/messages', { nope: true });
  assert.equal(noTokenBadBody.status, 401);
});

test('POST /support/chat/messages appends; a closed chat reopens', async () => {
  const start = await t.client().post('/support/chat', CHAT);
  const token: string = start.body.chat_token;
  t.clock.advance(MINUTE);
  const more = await t.client().post('/support/chat/messages', { message: 'Still here' }, chatHeaders(token));
  assert.equal(more.status, 201);
  assert.deepEqual(Object.keys(more.body).sort(), ['messages', 'name', 'ticket']);
  assert.deepEqual(
    more.body.messages.map((m: any) => m.body),
    ['Is anyone there?', 'Still here'],
  );
  assert.equal(more.body.ticket.updated_at, new Date(t.clock.now()).toISOString());
  assert.ok(!more.text.includes('chad.private'));

  const row = await ticketByReference(start.body.ticket.reference);
  assert.equal((await staff.client.post(`/support/inbox/${row.id}/status`, { status: 'closed' })).body.ticket.status, 'closed');
  assert.equal((await t.client().get('/support/chat', chatHeaders(token))).body.ticket.status, 'closed');
  const reopened = await t.client().post('/support/chat/messages', { message: 'Come back' }, chatHeaders(token));
  assert.equal(reopened.status, 201);
  assert.equal(reopened.body.ticket.status, 'open');
  assert.equal(reopened.body.messages.length, 3);

  // An answered chat also goes back to open when the visitor writes.
  await staff.client.post(`/support/inbox/${row.id}/messages`, { message: 'Hello!' });
  const answeredThenVisitor = await t.client().post('/support/chat/messages', { message: 'Thanks' }, chatHeaders(token));
  assert.equal(answeredThenVisitor.body.ticket.status, 'open');

  for (const body of [{ message: '' }, { message: 'm'.repeat(5001) }, {}, { message: 'x', name: 'y' }]) {
    const res = await t.client().post('/support/chat/messages', body, chatHeaders(token));
    assert.equal(res.status, 400);
  }
  assert.equal((await t.client().post('/support/chat/messages', { message: 'm'.repeat(5000) }, chatHeaders(token))).status, 201);
});

test('a chat token opens that chat alone', async () => {
  const a = (await t.client().post('/support/chat', { ...CHAT, name: 'Alice', message: 'alice secret' })).body;
  const b = (await t.client().post('/support/chat', { ...CHAT, name: 'Bob', message: 'bob secret' })).body;
  const owner = await signedInMerchant(t);
  const ownerTicket = (await owner.client.post('/support/tickets', { subject: 'owner', message: 'owner secret' })).body.ticket;

  const readA = await t.client().get('/support/chat', chatHeaders(a.chat_token));
  assert.equal(readA.body.name, 'Alice');
  assert.equal(readA.body.ticket.reference, a.ticket.reference);
  assert.ok(!readA.text.includes('bob secret'));
  await t.client().post('/support/chat/messages', { message: 'alice again' }, chatHeaders(a.chat_token));
  const readB = await t.client().get('/support/chat', chatHeaders(b.chat_token));
  assert.deepEqual(
    readB.body.messages.map((m: any) => m.body),
    ['bob secret'],
  );

  // The token is no credential anywhere else.
  for (const path of ['/support/tickets', `/support/tickets/${ownerTicket.id}`, '/support/inbox']) {
    const res = await t.client().get(path, chatHeaders(a.chat_token));
    assert.equal(res.status, 401, path);
  }
  // Nor as a Bearer key.
  assert.equal((await t.client().get('/support/chat', { bearer: a.chat_token })).status, 401);
  // Changing one character of a token opens nothing.
  const flipped = a.chat_token.slice(0, -1) + (a.chat_token.endsWith('A') ? 'B' : 'A');
  assert.equal((await t.client().get('/support/chat', chatHeaders(flipped))).status, 401);
});

test('HTML and script in every visitor field are stored and returned verbatim', async () => {
  const name = '<script>alert(1)</script>';
  const message = '<img src=x onerror="alert(document.cookie)">\r\n<style>*{}</style>';
  const chatRes = await t.client().post('/support/chat', { name, email: 'v@example.org', message });
  assert.equal(chatRes.status, 201);
  assert.equal(chatRes.body.name, name);
  assert.equal(chatRes.body.messages[0].body, message);
  const read = await t.client().get('/support/chat', chatHeaders(chatRes.body.chat_token));
  assert.equal(read.body.name, name);
  assert.equal(read.body.messages[0].body, message);
  const more = await t.client().post('/support/chat/messages', { message: '</textarea><svg onload=alert(2)>' }, chatHeaders(chatRes.body.chat_token));
  assert.equal(more.body.messages[1].body, '</textarea><svg onload=alert(2)>');

  const subject = '<h1>"Hi" & \'bye\'</h1>';
  const contact = await t.client().post('/support/contact', { name, email: 'w@example.org', subject, message });
  assert.equal(contact.status, 201);
  const row = await ticketByReference(contact.body.ticket.reference);
  const inbox = await staff.client.get(`/support/inbox/${row.id}`);
  assert.equal(inbox.body.ticket.name, name);
  assert.equal(inbox.body.ticket.subject, subject);
  assert.equal(inbox.body.messages[0].body, message);
});

test('a body over 64 KiB is 413 payload_too_large on the public endpoints', async () => {
  const big = { ...CONTACT, message: 'm'.repeat(70 * 1024) };
  const contact = await t.client().post('/support/contact', big);
  assert.equal(contact.status, 413);
  assert.equal(contact.body.error.code, 'payload_too_large');
  assert.equal((await t.client().post('/support/chat', { ...CHAT, message: big.message })).status, 413);
});
