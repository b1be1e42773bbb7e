/**
 * A password reset of an account with two-factor sign-in on (docs/security.md, Password reset and
 * two-factor sign-in), through the real server and a real SMTP stand-in: the attack of whoever
 * holds the mailbox (forgot, read the mail's link, reset) gets no session, no /me and no API key
 * until the second factor is given; the reset's challenge is the sign-in's, with its limits; a
 * revocation asked with the reset happens only with the code; the mail says the API keys stay valid.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { confirmedAccount, PASSWORD, startMailApp, type MailApp } from '../helpers/accounts.js';
import type { HttpClient } from '../helpers/http.js';
import { fragmentToken } from '../helpers/smtp.js';

const NEW_PASSWORD = 'the mailbox holder chose this';

let app: MailApp;
before(async () => {
  app = await startMailApp();
});
after(() => app.close());

const codeAt = (mail: MailApp, secret: string) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: mail.t.clock.now() });

/** An owner with 2FA on and one API key; their signed-in client. */
async function twoFactorOwner(mail: MailApp = app): Promise<{ email: string; owner: HttpClient; secret: string; recovery: string[]; apiKey: string }> {
  const { email, client: owner } = await confirmedAccount(mail);
  const setup = await owner.post('/me/two-factor/setup');
  assert.equal(setup.status, 200, setup.text);
  const confirmed = await owner.post('/me/two-factor/confirm', { code: codeAt(mail, setup.body.secret) });
  assert.equal(confirmed.status, 200, confirmed.text);
  mail.t.clock.advance(30_000);
  const key = await owner.post('/api-keys', { name: 'shop backend' });
  assert.equal(key.status, 201, key.text);
  return { email, owner, secret: setup.body.secret, recovery: confirmed.body.recovery_codes, apiKey: key.body.secret };
}

/** What whoever holds the mailbox does: ask for a link and read it from the mail. */
async function resetLinkFromMailbox(mail: MailApp, email: string): Promise<{ token: string; text: string }> {
  const before = mail.smtp.messages.length;
  assert.equal((await mail.t.client().post('/auth/password/forgot', { email })).status, 202);
  const message = await mail.smtp.waitFor((m) => mail.smtp.messages.indexOf(m) >= before && m.to.includes(email) && m.text.includes('#reset='));
  return { token: fragmentToken(message, 'reset'), text: message.text };
}

const keyWorks = async (mail: MailApp, secret: string) => (await mail.t.client({ origin: null }).get('/invoices', { bearer: secret })).status;

test('the mailbox alone: a reset of a two-factor account sets the password and ends the sessions, but signs nobody in until the code', async () => {
  const { email, owner, secret } = await twoFactorOwner();
  const { token } = await resetLinkFromMailbox(app, email);

  const attacker = app.t.client();
  const reset = await attacker.post('/auth/password/reset', { token, password: NEW_PASSWORD });
  assert.equal(reset.status, 401, reset.text);
  assert.equal(reset.body.error.code, 'two_factor_required');
  assert.equal(typeof reset.body.error.challenge, 'string');
  assert.equal(reset.body.merchant, undefined, 'no account data before the code');
  assert.equal(attacker.cookies.get(SESSION_COOKIE), undefined, 'no session cookie before the code');
  assert.equal(reset.headers.get('set-cookie'), null);
  assert.equal((await attacker.get('/me')).status, 401, 'no authorized /me before the code');
  assert.equal((await attacker.post('/api-keys', { name: 'backdoor' })).status, 401, 'no API key before the code');
  assert.equal((await attacker.get('/invoices')).status, 401);

  // The reset did its part: the link is spent, the old sessions ended, the new password is the one.
  assert.equal((await owner.get('/me')).status, 401, "the owner's sessions are revoked");
  assert.equal((await app.t.client().post('/auth/password/reset', { token, password: 'again and again' })).body.error.code, 'invalid_token');
  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).body.error.code, 'invalid_credential');
  const login = await app.t.client().post('/auth/login', { email, password: NEW_PASSWORD });
  assert.equal(login.body.error.code, 'two_factor_required', 'the new password still asks for the code');

  // A wrong code opens nothing; the right one signs in through the sign-in's own second step.
  const wrong = await attacker.post('/auth/login/two-factor', { challenge: reset.body.error.challenge, code: '000000' });
  assert.equal(wrong.status, 401);
  assert.equal(attacker.cookies.get(SESSION_COOKIE), undefined);
  assert.equal((await attacker.get('/me')).status, 401);
  const done = await attacker.post('/auth/login/two-factor', { challenge: reset.body.error.challenge, code: codeAt(app, secret) });
  assert.equal(done.status, 200, done.text);
  assert.equal(done.body.merchant.email, email);
  assert.equal(done.body.revoked, undefined, 'nothing was asked to be revoked');
  assert.equal((await attacker.get('/me')).status, 200);
  assert.equal((await attacker.get('/me/two-factor')).body.enabled, true, 'the reset keeps 2FA on');
});

test("a reset's challenge takes a recovery code and cannot be turned into a revoking one", async () => {
  const { email, recovery } = await twoFactorOwner();
  const first = await app.t.client().post('/auth/password/reset', { token: (await resetLinkFromMailbox(app, email)).token, password: NEW_PASSWORD });
  const challenge: string = first.body.error.challenge;
  // The intent is signed: adding or removing it breaks the signature.
  const parts = challenge.split('.');
  const forged = [...parts.slice(0, 3), 'revoke', parts[3]].join('.');
  assert.equal((await app.t.client().post('/auth/login/two-factor', { challenge: forged, code: recovery[0] })).status, 400);

  const browser = app.t.client();
  const ok = await browser.post('/auth/login/two-factor', { challenge, code: recovery[0] });
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await browser.get('/me/two-factor')).body.recovery_codes_left, 9);
});

test('revoking the API keys with a reset of a two-factor account waits for the code; the mail and the reset say the keys stay valid', async () => {
  const { email, secret, apiKey } = await twoFactorOwner();
  const { token, text } = await resetLinkFromMailbox(app, email);
  assert.match(text, /API keys never ask for a second factor/);
  assert.ok(text.includes('http://127.0.0.1:8080/console/api-keys'), 'the mail names the page that lists and revokes them');
  assert.deepEqual((await app.t.client().post('/auth/password/reset/preview', { token })).body, { api_keys: 1, webhooks: 0 });

  const browser = app.t.client();
  const reset = await browser.post('/auth/password/reset', { token, password: NEW_PASSWORD, revoke_api_keys_and_webhooks: true });
  assert.equal(reset.status, 401);
  assert.equal(reset.body.error.code, 'two_factor_required');
  assert.equal(await keyWorks(app, apiKey), 200, 'the mailbox alone revokes nothing');
  assert.equal((await browser.post('/auth/login/two-factor', { challenge: reset.body.error.challenge, code: '111111' })).status, 401);
  assert.equal(await keyWorks(app, apiKey), 200, 'nor does a wrong code');

  const done = await browser.post('/auth/login/two-factor', { challenge: reset.body.error.challenge, code: codeAt(app, secret) });
  assert.equal(done.status, 200, done.text);
  assert.deepEqual(done.body.revoked, { api_keys: 1, webhooks: 0 });
  assert.equal(await keyWorks(app, apiKey), 401, 'revoked with the code');
});

test("a reset's code step is limited per account like a sign-in's", async () => {
  const limited = await startMailApp({ rate_limits: { two_factor_per_account: 3 } });
  try {
    const { email, secret } = await twoFactorOwner(limited);
    limited.t.clock.advance(60_000);
    const reset = await limited.t.client().post('/auth/password/reset', { token: (await resetLinkFromMailbox(limited, email)).token, password: NEW_PASSWORD });
    assert.equal(reset.status, 401);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await limited.t.client().post('/auth/login/two-factor', { challenge: reset.body.error.challenge, code: '000000' })).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    const right = await limited.t.client().post('/auth/login/two-factor', { challenge: reset.body.error.challenge, code: codeAt(limited, secret) });
    assert.equal(right.status, 429, 'even the right code waits');
  } finally {
    await limited.close();
  }
});
