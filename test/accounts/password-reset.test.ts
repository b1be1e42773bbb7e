import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HOUR, MINUTE } from '../../src/lib/clock.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { confirmedAccount, PASSWORD, registerAndReadToken, startMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';
import { fragmentToken, type ReceivedMail } from '../helpers/smtp.js';

let app: MailApp;
before(async () => {
  app = await startMailApp();
});
after(() => app.close());

async function requestReset(email: string, locale?: string): Promise<ReceivedMail> {
  const before = app.smtp.messages.length;
  const res = await app.t.client().post('/auth/password/forgot', { email, ...(locale ? { locale } : {}) });
  assert.equal(res.status, 202);
  assert.deepEqual(res.body, { success: true });
  return app.smtp.waitFor((m) => app.smtp.messages.indexOf(m) >= before && m.to.includes(email) && m.text.includes('#reset='));
}

test('forgot + reset: new password, every old session revoked, signed in with a new session, single-use link', async () => {
  const { email, client: deviceA } = await confirmedAccount(app);
  const deviceB = app.t.client();
  assert.equal((await deviceB.post('/auth/login', { email, password: PASSWORD })).status, 200);

  const mail = await requestReset(email, 'ar');
  assert.equal(mail.subject, 'إعادة تعيين كلمة المرور');
  assert.match(mail.html, /dir="rtl"/);
  assert.match(mail.text, /http:\/\/127\.0\.0\.1:8080\/reset#reset=[A-Za-z0-9_-]{43}/);
  const token = fragmentToken(mail, 'reset');

  const browser = app.t.client();
  const res = await browser.post('/auth/password/reset', { token, password: 'a brand new password' });
  assert.equal(res.status, 200);
  assert.equal(res.body.merchant.email, email);
  assert.ok(browser.cookies.get(SESSION_COOKIE));
  assert.equal((await browser.get('/me')).status, 200);
  assert.equal((await deviceA.get('/me')).status, 401, 'every existing session is revoked');
  assert.equal((await deviceB.get('/me')).status, 401);

  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 401);
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'a brand new password' })).status, 200);
  const reuse = await app.t.client().post('/auth/password/reset', { token, password: 'yet another password' });
  assert.equal(reuse.status, 400);
  assert.equal(reuse.body.error.code, 'invalid_token');
});

test('forgot for an unknown address: the same 202, and no mail', async () => {
  const known = await confirmedAccount(app);
  const before = app.smtp.messages.length;
  const unknown = await app.t.client().post('/auth/password/forgot', { email: uniqueEmail('nobody') });
  assert.equal(unknown.status, 202);
  assert.deepEqual(unknown.body, { success: true });
  await requestReset(known.email);
  assert.equal(app.smtp.messages.length, before + 1, 'only the known address got a mail');
});

test('a reset link expires after 1 hour; a newer one replaces it', async () => {
  const { email } = await confirmedAccount(app);
  const expired = fragmentToken(await requestReset(email), 'reset');
  app.t.clock.advance(HOUR);
  assert.equal((await app.t.client().post('/auth/password/reset', { token: expired, password: 'new password 1234' })).body.error.code, 'invalid_token');

  const older = fragmentToken(await requestReset(email), 'reset');
  app.t.clock.advance(5 * MINUTE);
  const newer = fragmentToken(await requestReset(email), 'reset');
  assert.equal((await app.t.client().post('/auth/password/reset', { token: older, password: 'new password 1234' })).body.error.code, 'invalid_token');
  app.t.clock.advance(55 * MINUTE - 1);
  assert.equal((await app.t.client().post('/auth/password/reset', { token: newer, password: 'new password 1234' })).status, 200);
});

test('a reset confirms an unconfirmed account and voids its confirmation link; a verify token is no reset token', async () => {
  const email = uniqueEmail();
  const verifyToken = await registerAndReadToken(app, email);
  const wrongKind = await app.t.client().post('/auth/password/reset', { token: verifyToken, password: 'new password 1234' });
  assert.equal(wrongKind.body.error.code, 'invalid_token');
  const token = fragmentToken(await requestReset(email), 'reset');
  assert.equal((await app.t.client().post('/auth/verify-email', { token })).body.error.code, 'invalid_token', 'a reset token is no verify token');
  const res = await app.t.client().post('/auth/password/reset', { token, password: 'new password 1234' });
  assert.equal(res.status, 200);
  assert.equal((await app.t.client().post('/auth/verify-email', { token: verifyToken })).body.error.code, 'invalid_token');
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'new password 1234' })).status, 200, 'confirmed: sign-in works');
});

test('no response and no log line ever contains a password, a token or a hash', async () => {
  const secrets: string[] = [];
  const email = uniqueEmail();
  const password = 'secret-password-XYZ-1';
  secrets.push(password);
  const responses: string[] = [];
  const c = app.t.client();
  const record = async (p: Promise<{ text: string; headers: Headers }>) => {
    const r = await p;
    responses.push(r.text);
    return r;
  };
  await record(c.post('/auth/register', { email, password, name: 'Leak Check' }));
  const verifyToken = fragmentToken(await app.smtp.waitFor((m) => m.to.includes(email)), 'verify');
  secrets.push(verifyToken);
  await record(c.post('/auth/login', { email, password: 'wrong-password-ABC-2' }));
  secrets.push('wrong-password-ABC-2');
  await record(c.post('/auth/verify-email', { token: verifyToken }));
  const session = c.cookies.get(SESSION_COOKIE)!;
  secrets.push(session);
  await record(c.get('/me'));
  await record(c.post('/auth/login', { email, password }));
  secrets.push(c.cookies.get(SESSION_COOKIE)!);
  const resetToken = fragmentToken(await requestReset(email), 'reset');
  secrets.push(resetToken);
  const newPassword = 'another-secret-PQR-3';
  secrets.push(newPassword);
  await record(c.post('/auth/password/reset', { token: resetToken, password: newPassword }));
  await record(c.patch('/me', { name: 'Renamed' }));
  await record(c.post('/auth/logout', {}));

  const row = await app.t.deps.db.selectFrom('merchants').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();
  assert.match(row.password_hash!, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, 'argon2id with the OWASP parameters');
  secrets.push(row.password_hash!, row.password_hash!.split('$').pop()!);
  const { sha256Hex } = await import('../../src/lib/crypto.js');
  for (const s of [verifyToken, resetToken, session]) secrets.push(sha256Hex(s));
  const stored = await app.t.deps.db.selectFrom('sessions').select('token_hash').execute();
  assert.ok(
    stored.every((s) => /^[0-9a-f]{64}$/.test(s.token_hash)),
    'sessions are stored hashed',
  );

  const logs = app.t.logText();
  assert.ok(logs.length > 0);
  for (const secret of secrets) {
    assert.ok(!logs.includes(secret), `the log contains a secret (${secret.slice(0, 4)}...)`);
    for (const text of responses) assert.ok(!text.includes(secret), `a response contains a secret (${secret.slice(0, 4)}...)`);
  }
});
