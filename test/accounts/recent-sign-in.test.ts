/**
 * Adding a password to an account that has none, and changing the password, need a sign-in within
 * the last 10 minutes, and the owner is mailed about it in their locale: a stolen session alone
 * can no longer become a lasting credential, silently.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE } from '../../src/lib/clock.js';
import { LOCALES, translate } from '../../src/lib/i18n.js';
import { confirmedAccount, PASSWORD, startGoogleMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';
import type { GoogleStub } from '../helpers/google.js';

let google: GoogleStub;
let app: MailApp & { google: GoogleStub };
before(async () => {
  app = await startGoogleMailApp();
  google = app.google;
});
after(() => app.close());

const passwordOf = (email: string) => app.t.deps.db.selectFrom('merchants').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();

test("a Google account's stolen session, 10 minutes after its sign-in, cannot add a password; a fresh sign-in can, and the owner is told", async () => {
  const email = uniqueEmail('google');
  const owner = app.t.client();
  const credential = await google.idToken({ sub: `sub-${email}`, email, email_verified: true, name: 'Owner' }, { nowMs: app.t.clock.now() });
  assert.equal((await owner.post('/auth/google', { credential })).status, 201);

  app.t.clock.advance(10 * MINUTE + 1);
  const stolen = await owner.post('/auth/password/set', { password: 'the thief wants a password' });
  assert.equal(stolen.status, 403);
  assert.equal(stolen.body.error.code, 'recent_sign_in_required');
  assert.equal((await passwordOf(email)).password_hash, null, 'nothing was written');
  assert.equal((await owner.get('/me')).status, 200, 'the session itself still works');

  const before = app.smtp.messages.length;
  const fresh = app.t.client();
  const again = await google.idToken({ sub: `sub-${email}`, email, email_verified: true }, { nowMs: app.t.clock.now() });
  assert.equal((await fresh.post('/auth/google', { credential: again })).status, 200);
  assert.equal((await fresh.post('/auth/password/set', { password: 'the owner chose this one' })).status, 200);
  const mail = await app.smtp.waitFor((m) => app.smtp.messages.indexOf(m) >= before && m.to.includes(email));
  assert.equal(mail.subject, translate('en', 'email.password_set.subject'));
  assert.ok(mail.text.includes(translate('en', 'email.password_notice.action')));
});

test('changing the password needs a sign-in within 10 minutes; the owner is mailed in their locale', async () => {
  const { email, client } = await confirmedAccount(app);
  app.t.clock.advance(10 * MINUTE + 1);
  const old = await client.post('/me/password', { current_password: PASSWORD, new_password: 'a stolen session tries this' });
  assert.equal(old.status, 403);
  assert.equal(old.body.error.code, 'recent_sign_in_required');
  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 200, 'the password did not change');

  const before = app.smtp.messages.length;
  const fresh = app.t.client();
  assert.equal((await fresh.post('/auth/login', { email, password: PASSWORD, locale: 'fa' })).status, 200);
  app.t.clock.advance(9 * MINUTE);
  assert.equal((await fresh.post('/me/password', { current_password: PASSWORD, new_password: 'the owner changed it 2026' })).status, 200);
  const mail = await app.smtp.waitFor((m) => app.smtp.messages.indexOf(m) >= before && m.to.includes(email));
  assert.equal(mail.subject, translate('fa', 'email.password_changed.subject'));
  assert.match(mail.html, /dir="rtl"/);
});

test('the password notices exist in every locale', () => {
  for (const locale of LOCALES) {
    for (const key of [
      'email.password_set.subject',
      'email.password_set.intro',
      'email.password_changed.subject',
      'email.password_changed.intro',
      'email.password_notice.action',
      'email.password_notice.button',
    ]) {
      const text = translate(locale, key);
      assert.ok(text && text !== key, `${locale} ${key}`);
      if (locale !== 'en') assert.notEqual(text, translate('en', key), `${locale} ${key} is translated`);
    }
  }
});
