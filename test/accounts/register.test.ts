import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HOUR, MINUTE } from '../../src/lib/clock.js';
import { startTestApp } from '../helpers/app.js';
import { confirmedAccount, PASSWORD, registerAndReadToken, startMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';
import { fragmentToken, linksIn } from '../helpers/smtp.js';

let app: MailApp;
before(async () => {
  app = await startMailApp();
});
after(() => app.close());

const mailsTo = (email: string) => app.smtp.messages.filter((m) => m.to.includes(email.toLowerCase()));

test('register: 201, no session, a confirmation mail with text and HTML parts; the link signs in once', async () => {
  const email = uniqueEmail();
  const client = app.t.client();
  const res = await client.post('/auth/register', { email: `  ${email.toUpperCase()} `.trim(), password: PASSWORD, name: 'Tea & Co' });
  assert.equal(res.status, 201);
  assert.deepEqual(res.body, { verification_required: true, email, email_sent: true });
  assert.deepEqual(
    res.headers.getSetCookie().map((c) => c.split('=')[0]),
    ['gw_reg'],
    'no session starts (only the registration cookie, which proves this browser registered)',
  );
  assert.equal((await client.get('/auth/session')).body.signed_in, false);

  const mail = await app.smtp.waitFor((m) => m.to.includes(email));
  assert.equal(mail.subject, 'Confirm your email address');
  assert.match(mail.from, /noreply@localhost/);
  const links = linksIn(mail.text);
  assert.ok(
    links.some((l) => /^http:\/\/127\.0\.0\.1:8080\/verify#verify=[A-Za-z0-9_-]{43}$/.test(l)),
    mail.text,
  );
  const token = fragmentToken(mail, 'verify');
  assert.ok(mail.html.includes(`/verify#verify=${token}`));
  // The address is not confirmed yet: the mail greets without the name typed at registration.
  assert.match(mail.text, /^Hello,$/m);
  assert.ok(!mail.text.includes('Tea') && !mail.html.includes('Tea'), 'no typed name in mail to an unconfirmed address');
  assert.match(mail.html, /<html lang="en" dir="ltr">/);

  const verified = await client.post('/auth/verify-email', { token });
  assert.equal(verified.status, 200);
  assert.equal(verified.body.password_set, true, 'the only registration: its password is kept');
  assert.equal(verified.body.merchant.email, email);
  assert.equal(verified.body.merchant.name, 'Tea & Co');
  assert.equal(verified.body.merchant.mode, 'live');
  assert.equal(verified.body.merchant.support_staff, false);
  assert.equal((await client.get('/auth/session')).body.signed_in, true);
  assert.equal((await client.get('/me')).status, 200);

  const again = await app.t.client().post('/auth/verify-email', { token });
  assert.equal(again.status, 400);
  assert.equal(again.body.error.code, 'invalid_token');
  // Now confirmed: the password signs in.
  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 200);
});

test('register without a name uses the part of the email before @', async () => {
  const email = uniqueEmail('kiosk');
  const token = await registerAndReadToken(app, email, PASSWORD, { name: '   ' });
  const res = await app.t.client().post('/auth/verify-email', { token });
  assert.equal(res.body.merchant.name, email.split('@')[0]);
});

test('mails come in the request locale; RTL locales get dir="rtl"; unknown locales fall back to English', async () => {
  const cases: Array<[string, RegExp, string]> = [
    ['fr', /^Confirmez votre adresse e-mail$/, 'ltr'],
    ['fa-IR', /^نشانی ایمیل خود را تأیید کنید$/, 'rtl'],
    ['zh', /^请确认您的电子邮件地址$/, 'ltr'],
    ['de', /^Confirm your email address$/, 'ltr'],
  ];
  for (const [locale, subject, dir] of cases) {
    const email = uniqueEmail(`loc-${locale.toLowerCase()}`);
    const res = await app.t.client().post('/auth/register', { email, password: PASSWORD, locale });
    assert.equal(res.status, 201);
    const mail = await app.smtp.waitFor((m) => m.to.includes(email));
    assert.match(mail.subject, subject);
    assert.match(mail.html, new RegExp(`dir="${dir}"`));
    assert.ok(fragmentToken(mail, 'verify').length === 43);
  }
  const bad = await app.t.client().post('/auth/register', { email: uniqueEmail(), password: PASSWORD, locale: 'not a locale!' });
  assert.equal(bad.status, 400);
});

test('a confirmation link expires after 24 hours', async () => {
  const token = await registerAndReadToken(app, uniqueEmail());
  app.t.clock.advance(24 * HOUR);
  const res = await app.t.client().post('/auth/verify-email', { token });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'invalid_token');
});

test('unconfirmed sign-in: 403 email_not_verified; a new link at most every 5 minutes, replacing the older one', async () => {
  const email = uniqueEmail();
  const first = await registerAndReadToken(app, email);
  const login = () => app.t.client().post('/auth/login', { email, password: PASSWORD, locale: 'es' });

  const early = await login();
  assert.equal(early.status, 403);
  assert.equal(early.body.error.code, 'email_not_verified');
  assert.equal(early.headers.getSetCookie().length, 0);
  assert.equal(mailsTo(email).length, 1, 'the registration mail counts toward the 5-minute limit');

  app.t.clock.advance(5 * MINUTE);
  assert.equal((await login()).status, 403);
  const resent = await app.smtp.waitFor((m) => m.to.includes(email) && m.subject === 'Confirma tu dirección de correo electrónico');
  const second = fragmentToken(resent, 'verify');
  assert.notEqual(second, first);
  assert.equal((await login()).status, 403);
  assert.equal(mailsTo(email).length, 2);

  const old = await app.t.client().post('/auth/verify-email', { token: first });
  assert.equal(old.body.error.code, 'invalid_token', 'a newer mail replaces older links');
  assert.equal((await app.t.client().post('/auth/verify-email', { token: second })).status, 200);
});

test('a wrong password on an unconfirmed account is 401, not 403, and sends nothing', async () => {
  const email = uniqueEmail();
  await registerAndReadToken(app, email);
  app.t.clock.advance(10 * MINUTE);
  const res = await app.t.client().post('/auth/login', { email, password: 'not the password' });
  assert.equal(res.status, 401);
  assert.equal(res.body.error.code, 'invalid_credential');
  assert.equal(mailsTo(email).length, 1);
});

test('registering an unconfirmed address again: the registrations compete; within 5 minutes no mail, answered exactly like a new registration (email_sent true); every link confirms, none keeps a password', async () => {
  const email = uniqueEmail();
  const first = await registerAndReadToken(app, email, 'first password 123');
  const again = await app.t.client().post('/auth/register', { email, password: 'second password 456' });
  assert.equal(again.status, 201);
  assert.deepEqual(again.body, { verification_required: true, email, email_sent: true }, 'the answer of a new registration (decisions: no tell)');
  assert.equal(mailsTo(email).length, 1, 'no second mail within 5 minutes');

  app.t.clock.advance(5 * MINUTE);
  const before = mailsTo(email).length;
  const third = await app.t.client().post('/auth/register', { email, password: 'third password 789', name: 'Third' });
  assert.deepEqual(third.body, { verification_required: true, email, email_sent: true });
  const mail = await app.smtp.waitFor((m) => m.to.includes(email) && mailsTo(email).indexOf(m) >= before);
  const latest = fragmentToken(mail, 'verify');
  // Each registration's password answers 403 (it is one of the account's registrations), a stranger's 401.
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'second password 456' })).status, 403);
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'not one of them 000' })).status, 401);

  const ok = await app.t.client().post('/auth/verify-email', { token: first });
  assert.equal(ok.status, 200, 'the older link still confirms');
  assert.equal(ok.body.password_set, false);
  assert.equal(ok.body.merchant.name, email.split('@')[0], 'no typed name is kept either');
  for (const password of ['first password 123', 'second password 456', 'third password 789']) {
    assert.equal((await app.t.client().post('/auth/login', { email, password })).status, 401, password);
  }
  assert.equal((await app.t.client().post('/auth/verify-email', { token: latest })).body.error.code, 'invalid_token', 'confirming voids the other links');
  const reset = await app.smtp.waitFor((m) => m.to.includes(email) && m.text.includes('#reset='));
  assert.equal((await app.t.client().post('/auth/password/reset', { token: fragmentToken(reset, 'reset'), password: 'chosen after confirming' })).status, 200);
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'chosen after confirming' })).status, 200);
});

test('registering a confirmed address answers like a new one, mails the owner a notice and changes nothing', async () => {
  const { email, merchantId } = await confirmedAccount(app);
  const before = mailsTo(email).length;
  const res = await app.t.client().post('/auth/register', { email, password: 'attacker password', locale: 'ru' });
  assert.equal(res.status, 201);
  assert.deepEqual(res.body, { verification_required: true, email, email_sent: true });
  const notice = await app.smtp.waitFor((m) => m.to.includes(email) && mailsTo(email).indexOf(m) >= before);
  assert.equal(notice.subject, 'Кто-то пытался зарегистрироваться с вашим адресом электронной почты');
  assert.doesNotMatch(notice.text, /#verify=|#reset=/);
  assert.match(notice.text, /^Здравствуйте, /m, 'the confirmed owner is greeted by their own name');
  // A second attempt within 5 minutes does not mail again (no flooding of the owner), and says so.
  const second = await app.t.client().post('/auth/register', { email, password: 'attacker password' });
  assert.deepEqual(second.body, { verification_required: true, email, email_sent: true });
  assert.equal(mailsTo(email).length, before + 1);
  const login = await app.t.client().post('/auth/login', { email, password: PASSWORD });
  assert.equal(login.status, 200);
  assert.equal(login.body.merchant.id, merchantId);
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'attacker password' })).status, 401);
});

test('an SMTP server that refuses the message: email_sent false; signing in later sends a new link at once', async () => {
  const email = uniqueEmail();
  app.smtp.reject('rcpt');
  try {
    const res = await app.t.client().post('/auth/register', { email, password: PASSWORD });
    assert.equal(res.status, 201);
    assert.equal(res.body.email_sent, false);
    app.smtp.reject('data');
    const res2 = await app.t.client().post('/auth/register', { email: uniqueEmail(), password: PASSWORD });
    assert.equal(res2.body.email_sent, false);
  } finally {
    app.smtp.reject(false);
  }
  assert.equal(mailsTo(email).length, 0);
  const login = await app.t.client().post('/auth/login', { email, password: PASSWORD });
  assert.equal(login.body.error.code, 'email_not_verified');
  const mail = await app.smtp.waitFor((m) => m.to.includes(email));
  assert.equal((await app.t.client().post('/auth/verify-email', { token: fragmentToken(mail, 'verify') })).status, 200);
});

test('request validation: lengths, formats, unknown fields and null', async () => {
  const c = app.t.client();
  const cases: Array<[string, unknown]> = [
    ['/auth/register', { email: uniqueEmail(), password: 'x'.repeat(11) }],
    ['/auth/register', { email: uniqueEmail(), password: 'x'.repeat(129) }],
    ['/auth/register', { email: 'not-an-email', password: PASSWORD }],
    ['/auth/register', { email: uniqueEmail(), password: PASSWORD, name: 'n'.repeat(101) }],
    ['/auth/register', { email: uniqueEmail(), password: PASSWORD, name: null }],
    ['/auth/register', { email: uniqueEmail(), password: PASSWORD, plan: 'gold' }],
    ['/auth/register', { password: PASSWORD }],
    ['/auth/login', { email: uniqueEmail(), password: 'x'.repeat(9) }],
    ['/auth/verify-email', { token: 'short' }],
    ['/auth/verify-email', { token: `${'a'.repeat(42)}!` }],
    ['/auth/password/reset', { token: 'a'.repeat(43), password: 'x'.repeat(11) }],
    ['/auth/google', { credential: 'x'.repeat(19) }],
    ['/auth/logout', { extra: true }],
  ];
  for (const [path, body] of cases) {
    const res = await c.post(path, body);
    assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}: ${res.text}`);
    assert.equal(res.body.error.code, 'validation_error');
  }
  assert.equal((await c.post('/auth/register', { email: uniqueEmail(), password: 'x'.repeat(128) })).status, 201, '128 characters is allowed');
  const tenChars = await c.post('/auth/login', { email: uniqueEmail(), password: 'x'.repeat(10) });
  assert.equal(tenChars.status, 401, '10 characters passes validation at sign-in');
  const unknownToken = await c.post('/auth/verify-email', { token: 'A'.repeat(43) });
  assert.equal(unknownToken.body.error.code, 'invalid_token');
});

test('no SMTP configured: register and forgot answer 503 email_unavailable and create nothing', async () => {
  const t = await startTestApp();
  try {
    const email = uniqueEmail();
    const res = await t.client().post('/auth/register', { email, password: PASSWORD });
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'email_unavailable');
    const forgot = await t.client().post('/auth/password/forgot', { email });
    assert.equal(forgot.status, 503);
    assert.equal(forgot.body.error.code, 'email_unavailable');
    const row = await t.deps.db.selectFrom('merchants').select('id').where('email', '=', email).executeTakeFirst();
    assert.equal(row, undefined);
  } finally {
    await t.close();
  }
});
