import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { translate } from '../../src/lib/i18n.js';
import { startChat } from '../../src/support/support.service.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';

// support.staff_emails left empty (the default): nobody can open the inbox.
let t: TestApp;
let staffed: TestApp;
before(async () => {
  t = await startTestApp();
  staffed = await startTestApp({ config: { support: { staff_emails: ['staff@example.test'] } } });
});
after(async () => {
  await t.close();
  await staffed.close();
});

const CONTACT = { name: 'Vera', email: 'vera@example.org', subject: 'Pricing', category: 'payments', message: 'How much?' };
const tickets = (app: TestApp) =>
  app.deps.db
    .selectFrom('support_tickets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
const messages = (app: TestApp) =>
  app.deps.db
    .selectFrom('support_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();

test('without support staff the public contact form and chat answer 503 support_unavailable and store nothing', async () => {
  const before = { tickets: (await tickets(t)).n, messages: (await messages(t)).n };
  for (const [path, body] of [
    ['/support/contact', CONTACT],
    ['/support/chat', { name: 'Chad', email: 'chad@example.org', message: 'Anyone?' }],
  ] as const) {
    const res = await t.client().post(path, body);
    assert.equal(res.status, 503, path);
    assert.equal(res.body.error.code, 'support_unavailable', path);
    assert.equal(res.body.mode, 'live');
  }
  // A chat begun earlier (while staff were configured) can still be read, but takes no new message.
  const chat = await startChat(t.deps, { name: 'Old', email: 'old@example.org', message: 'Earlier question' });
  const headers = { headers: { 'x-support-chat-token': chat.token } };
  const countBefore = (await messages(t)).n;
  const write = await t.client().post('/support/chat/messages', { message: 'Hello?' }, headers);
  assert.equal(write.status, 503);
  assert.equal(write.body.error.code, 'support_unavailable');
  assert.equal((await messages(t)).n, countBefore);
  const read = await t.client().get('/support/chat', headers);
  assert.equal(read.status, 200);
  assert.equal(read.body.messages.length, 1);
  assert.equal((await tickets(t)).n, before.tickets + 1, 'only the chat made through the service');

  // With staff configured the same requests are accepted.
  assert.equal((await staffed.client().post('/support/contact', CONTACT)).status, 201);
});

test('pages: the contact page says support is off (no form, no captcha, no chat widget); sign-in has no chat; the console Support page says who answers', async () => {
  const page = async (app: TestApp, path: string, client = app.client()) =>
    (await client.get(`${app.baseUrl}${path}`, { headers: { accept: 'text/html' } })).text;
  for (const lang of ['en', 'fa']) {
    const contact = await page(t, `/support/contact?lang=${lang}`);
    assert.ok(contact.includes(translate(lang === 'fa' ? 'fa' : 'en', 'page.contact.off')), lang);
    assert.doesNotMatch(contact, /data-api="\/api\/v1\/support\/contact"/);
    assert.doesNotMatch(contact, /id="chat"|chat\.js|forms\.js/);
  }
  assert.doesNotMatch(await page(t, '/login'), /id="chat"|chat\.js/);
  const open = await page(staffed, '/support/contact');
  assert.match(open, /data-api="\/api\/v1\/support\/contact"/);
  assert.match(open, /id="chat"/);
  assert.match(await page(staffed, '/login'), /id="chat"/);

  const owner = await signedInMerchant(t);
  const unstaffed = await page(t, '/console/support', owner.client);
  assert.ok(unstaffed.includes(translate('en', 'console.support.unstaffed')));
  assert.ok(!unstaffed.includes(translate('en', 'console.support.staffed')));
  const other = await signedInMerchant(staffed);
  const withStaff = await page(staffed, '/console/support', other.client);
  assert.ok(withStaff.includes(translate('en', 'console.support.staffed')));
  assert.ok(!withStaff.includes(translate('en', 'console.support.unstaffed')));
});
