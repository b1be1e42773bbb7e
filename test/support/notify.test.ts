import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { mailText, startSmtp, type SmtpPeer } from './peers.js';

const STAFF = ['desk@example.test', 'lead@example.test'];
const settle = () => new Promise((r) => setTimeout(r, 300));

/** The notifier logs once all its mails are done, a moment after the SMTP server has them. */
async function notifiedLine(t: TestApp, count = 1): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const lines = t.logs.filter((l) => l.msg === 'support staff notified');
    if (lines.length >= count) return lines[count - 1]!;
    if (Date.now() > deadline) throw new Error('no "support staff notified" log line');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function header(raw: string, name: string): string {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line ? line.slice(name.length + 1).trim() : '';
}

describe('staff notifications', () => {
  let t: TestApp;
  let smtp: SmtpPeer;
  let staff: SignedIn;
  before(async () => {
    smtp = await startSmtp();
    t = await startTestApp({
      config: {
        email: { smtp_url: smtp.url, smtp_tls: 'opportunistic', from: 'gatewayd <noreply@pay.example>' },
        support: { staff_emails: STAFF },
        rate_limits: { public_per_ip: 0 },
      },
    });
    staff = await signedInMerchant(t, { email: STAFF[0] });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  test('a new contact ticket mails every staff address separately, in English, with the details', async () => {
    smtp.mails.length = 0;
    const res = await t.client().post('/support/contact', {
      name: 'Vera <b>Visitor</b>',
      email: 'vera@example.org',
      subject: 'Refund',
      category: 'payments',
      message: 'Please refund invoice inv_123.\nThanks',
    });
    assert.equal(res.status, 201);
    const mails = await smtp.waitFor(2);
    assert.deepEqual(mails.map((m) => m.to).sort(), [[STAFF[0]], [STAFF[1]]]);
    for (const mail of mails) {
      assert.equal(header(mail.raw, 'Subject'), `[${res.body.ticket.reference}] New support ticket: Refund`);
      const text = mailText(mail.raw);
      assert.match(text, /A new support ticket arrived from the contact form/);
      assert.ok(text.includes('Vera <b>Visitor</b> <vera@example.org>'));
      assert.ok(text.includes('Please refund invoice inv_123.'));
      assert.ok(text.includes('answer by email to vera@example.org'));
      assert.ok(text.includes('Category:  payments'));
    }
    const line = await notifiedLine(t);
    assert.equal(line.sent, 2);
    assert.equal(line.recipients, 2);
  });

  test('a new dashboard ticket and each owner message notify the staff; a staff reply notifies the merchant; status changes nothing', async () => {
    smtp.mails.length = 0;
    const owner = await signedInMerchant(t, { name: 'Acme', email: 'owner@acme.test' });
    const { ticket } = (await owner.client.post('/support/tickets', { subject: 'Webhooks', message: 'They fail' })).body;
    await smtp.waitFor(2);
    const first = mailText(smtp.mails[0]!.raw);
    assert.ok(first.includes(`Merchant:  Acme (${owner.merchant.id})`));
    assert.ok(first.includes('Acme <owner@acme.test>'));
    assert.ok(first.includes('merchant dashboard'));

    // A staff reply mails the merchant (not the staff).
    assert.equal((await staff.client.post(`/support/inbox/${ticket.id}/messages`, { message: 'Which <URL>?' })).status, 201);
    const toOwner = (await smtp.waitFor(3))[2]!;
    assert.deepEqual(toOwner.to, ['owner@acme.test']);
    assert.equal(header(toOwner.raw, 'Subject'), `[${ticket.reference}] Support answered: Webhooks`);
    assert.ok(mailText(toOwner.raw).includes('Which <URL>?'));
    assert.ok(mailText(toOwner.raw).includes('Hello Acme,'));

    assert.equal((await staff.client.post(`/support/inbox/${ticket.id}/status`, { status: 'closed' })).status, 200);
    assert.equal((await owner.client.post(`/support/tickets/${ticket.id}/close`, {})).status, 200);
    await settle();
    assert.equal(smtp.mails.length, 3, 'status changes and closing send nothing');

    assert.equal((await owner.client.post(`/support/tickets/${ticket.id}/messages`, { message: 'https://shop.example/hook' })).status, 201);
    const mails = await smtp.waitFor(5);
    const reply = mails[3]!;
    assert.equal(header(reply.raw, 'Subject'), `[${ticket.reference}] New customer message: Webhooks`);
    assert.ok(mailText(reply.raw).includes('https://shop.example/hook'));
  });

  test('a chat start and each chat message notify the staff; the token never appears in a mail', async () => {
    smtp.mails.length = 0;
    const start = await t.client().post('/support/chat', { name: 'Chad', email: 'chad@example.org', message: 'Hello there' });
    await smtp.waitFor(2);
    assert.ok(mailText(smtp.mails[0]!.raw).includes('website chat'));
    const more = await t.client().post('/support/chat/messages', { message: 'Anyone?' }, { headers: { 'x-support-chat-token': start.body.chat_token } });
    assert.equal(more.status, 201);
    const mails = await smtp.waitFor(4);
    assert.ok(mailText(mails[3]!.raw).includes('Anyone?'));
    for (const m of mails) assert.ok(!m.raw.includes(start.body.chat_token));
    // A staff answer to a chat is read on the page: no mail to the visitor's typed address.
    const row = await t.deps.db.selectFrom('support_tickets').select('id').where('reference', '=', start.body.ticket.reference).executeTakeFirstOrThrow();
    assert.equal((await staff.client.post(`/support/inbox/${row.id}/messages`, { message: 'Yes?' })).status, 201);
    await settle();
    assert.equal(smtp.mails.length, 4);
    assert.ok(smtp.mails.every((m) => STAFF.includes(m.to[0]!)));
  });

  test('a subject with line breaks cannot add mail headers or recipients', async () => {
    smtp.mails.length = 0;
    const { client } = await signedInMerchant(t);
    const res = await client.post('/support/tickets', { subject: 'Hi\r\nBcc: victim@evil.example\r\nX-Evil: 1', message: 'x' });
    assert.equal(res.status, 201);
    assert.equal(res.body.ticket.subject, 'Hi\r\nBcc: victim@evil.example\r\nX-Evil: 1', 'stored verbatim');
    const mails = await smtp.waitFor(2);
    await settle();
    assert.equal(smtp.mails.length, 2);
    for (const m of mails) {
      assert.ok(STAFF.includes(m.to[0]!) && m.to.length === 1);
      assert.equal(header(m.raw, 'X-Evil'), '');
      assert.equal(header(m.raw, 'Bcc'), '');
      assert.match(header(m.raw, 'Subject'), /New support ticket: Hi Bcc: victim@evil\.example X-Evil: 1$/);
    }
  });

  test("a contact form visitor's name and subject with CR, LF and other control characters add no line to the mail's body", async () => {
    smtp.mails.length = 0;
    const res = await t.client().post('/support/contact', {
      name: 'Vera\r\nMerchant:  Trusted Shop (mch_admin)\r\n\r\nURGENT: wire the refund to TXVj\u0085\u2028x',
      email: 'vera@example.org',
      subject: 'Refund\nCategory:  account\u000bz',
      message: 'first line\nsecond line',
    });
    assert.equal(res.status, 201);
    const mails = await smtp.waitFor(2);
    for (const m of mails) {
      const lines = mailText(m.raw).split(/\r?\n/);
      const from = lines.filter((l) => l.startsWith('From:'));
      assert.deepEqual(from, ['From:      Vera Merchant: Trusted Shop (mch_admin) URGENT: wire the refund to TXVj x <vera@example.org>']);
      assert.ok(!lines.some((l) => l.startsWith('Merchant:') || l.startsWith('URGENT')), 'no line of the name stands alone');
      assert.deepEqual(
        lines.filter((l) => l.startsWith('Category:')),
        ['Category:  general'],
      );
      assert.ok(lines.includes('Subject:   Refund Category: account z'));
      assert.ok(!/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u0085\u2028]/.test(mailText(m.raw)));
      assert.ok(lines.includes('first line') && lines.includes('second line'), 'the message keeps its own lines');
    }
  });
});

test('email.staff_notify = false: no staff mail', async () => {
  const smtp = await startSmtp();
  const t = await startTestApp({ config: { email: { smtp_url: smtp.url, smtp_tls: 'opportunistic', staff_notify: false }, support: { staff_emails: STAFF } } });
  try {
    assert.equal((await t.client().post('/support/contact', { name: 'a', email: 'a@example.org', subject: 's', message: 'm' })).status, 201);
    await settle();
    assert.equal(smtp.mails.length, 0);
  } finally {
    await t.close();
    await smtp.close();
  }
});

test('an unreachable mail server never fails the request', async () => {
  // A port that refuses connections: bind, note the port, close.
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const t = await startTestApp({ config: { email: { smtp_url: `smtp://127.0.0.1:${port}`, smtp_tls: 'opportunistic' }, support: { staff_emails: STAFF } } });
  try {
    const res = await t.client().post('/support/contact', { name: 'a', email: 'a@example.org', subject: 's', message: 'private-body-42' });
    assert.equal(res.status, 201);
    const line = await notifiedLine(t);
    assert.equal(line.sent, 0);
    assert.ok(t.logs.some((l) => l.msg === 'mail not sent'));
    assert.ok(!t.logText().includes('private-body-42'), 'message bodies stay out of the logs');
  } finally {
    await t.close();
  }
});
