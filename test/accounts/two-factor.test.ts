/**
 * Two-factor sign-in (TOTP, RFC 6238) through the real server: setup and confirmation, the code
 * step of password and Google sign-in, replays, recovery codes, resets, turning it off, the limits
 * and the staff rule. Codes are generated here with otpauth at the server's (injected) clock.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { MINUTE } from '../../src/lib/clock.js';
import { translate } from '../../src/lib/i18n.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { confirmedAccount, PASSWORD, startMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';
import { GOOGLE_CLIENT_ID, startGoogle, type GoogleStub } from '../helpers/google.js';
import type { HttpClient } from '../helpers/http.js';
import { fragmentToken } from '../helpers/smtp.js';

const STAFF = 'twofa-staff@shop.example';
let google: GoogleStub;
let app: MailApp;
before(async () => {
  google = await startGoogle();
  app = await startMailApp({
    google: { client_id: GOOGLE_CLIENT_ID, jwks_url: google.jwksUrl },
    support: { staff_emails: [STAFF] },
    auth: { require_2fa_for_staff: true },
  });
});
after(async () => {
  await app.close();
  await google.close();
});

/** A code of the secret at the server's clock, `steps` 30-second steps away. */
function codeAt(secret: string, steps = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: app.t.clock.now() + steps * 30_000 });
}
/** Moves the server's clock to the next 30-second step, so a new code exists. */
const nextStep = () => app.t.clock.advance(30_000);

async function enable(client: HttpClient): Promise<{ secret: string; recovery: string[] }> {
  const setup = await client.post('/me/two-factor/setup');
  assert.equal(setup.status, 200, setup.text);
  assert.match(setup.body.qr_svg, /^<svg/);
  assert.ok(setup.body.otpauth_uri.startsWith('otpauth://totp/'));
  const { secret } = setup.body;
  const confirmed = await client.post('/me/two-factor/confirm', { code: codeAt(secret) });
  assert.equal(confirmed.status, 200, confirmed.text);
  assert.equal(confirmed.body.recovery_codes.length, 10);
  assert.equal(new Set(confirmed.body.recovery_codes).size, 10);
  nextStep();
  return { secret, recovery: confirmed.body.recovery_codes };
}

async function passwordStep(email: string, client = app.t.client()): Promise<{ client: HttpClient; challenge: string }> {
  const res = await client.post('/auth/login', { email, password: PASSWORD });
  assert.equal(res.status, 401, res.text);
  assert.equal(res.body.error.code, 'two_factor_required');
  assert.equal(client.cookies.get(SESSION_COOKIE), undefined, 'no session before the code');
  return { client, challenge: res.body.error.challenge };
}

test('setup shows a QR code and the secret once; a wrong first code is refused; the secret is stored encrypted', async () => {
  const { client, merchantId } = await confirmedAccount(app);
  assert.deepEqual((await client.get('/me/two-factor')).body, { enabled: false, recovery_codes_left: 0 });
  const setup = await client.post('/me/two-factor/setup');
  const wrong = await client.post('/me/two-factor/confirm', { code: codeAt(setup.body.secret, 5) });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error.code, 'invalid_credential');
  assert.equal((await client.get('/me/two-factor')).body.enabled, false);
  const row = await app.t.deps.db.selectFrom('two_factor').selectAll().where('merchant_id', '=', merchantId).executeTakeFirstOrThrow();
  assert.ok(!row.secret_enc.includes(setup.body.secret), 'not stored in clear');
  assert.equal((await client.post('/me/two-factor/confirm', { code: codeAt(setup.body.secret) })).status, 200);
  assert.deepEqual((await client.get('/me/two-factor')).body, { enabled: true, recovery_codes_left: 10 });
  const again = await client.post('/me/two-factor/setup');
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, 'two_factor_already_enabled');
  const codes = await app.t.deps.db.selectFrom('two_factor_recovery_codes').select('code_hash').where('merchant_id', '=', merchantId).execute();
  assert.equal(codes.length, 10);
  assert.ok(codes.every((c) => /^[0-9a-f]{64}$/.test(c.code_hash)));
});

test('password sign-in asks for the code; a wrong code and a replayed code are refused', async () => {
  const { email, client } = await confirmedAccount(app);
  const { secret } = await enable(client);
  const { client: browser, challenge } = await passwordStep(email);
  const wrong = await browser.post('/auth/login/two-factor', { challenge, code: codeAt(secret, 10) });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error.details[0].path, 'code');
  assert.equal(browser.cookies.get(SESSION_COOKIE), undefined);
  const foreign = await browser.post('/auth/login/two-factor', { challenge, code: codeAt(secret) }, { origin: 'https://evil.example' });
  assert.equal(foreign.status, 403, 'login CSRF: a foreign page cannot complete a sign-in');
  const forged = await browser.post('/auth/login/two-factor', {
    challenge: challenge.replace(/.$/, (c: string) => (c === '0' ? '1' : '0')),
    code: codeAt(secret),
  });
  assert.equal(forged.status, 400);

  const code = codeAt(secret);
  const ok = await browser.post('/auth/login/two-factor', { challenge, code });
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await browser.get('/me')).status, 200);

  // The same code within its 30 seconds, and a code of the same step from another challenge: refused.
  const thief = await passwordStep(email);
  const replay = await thief.client.post('/auth/login/two-factor', { challenge: thief.challenge, code });
  assert.equal(replay.status, 401);
  assert.equal(thief.client.cookies.get(SESSION_COOKIE), undefined);
  // The previous step's code (within the drift window) is older than the accepted one: refused too.
  assert.equal((await thief.client.post('/auth/login/two-factor', { challenge: thief.challenge, code: codeAt(secret, -1) })).status, 401);
  nextStep();
  assert.equal((await thief.client.post('/auth/login/two-factor', { challenge: thief.challenge, code: codeAt(secret) })).status, 200);
});

test('one code sent twice at once opens one session, never two', async () => {
  const { email, client } = await confirmedAccount(app);
  const { secret } = await enable(client);
  for (let round = 0; round < 5; round += 1) {
    const a = await passwordStep(email);
    const b = await passwordStep(email);
    const code = codeAt(secret);
    const answers = await Promise.all([a, b].map((s) => s.client.post('/auth/login/two-factor', { challenge: s.challenge, code })));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 401], `round ${round}`);
    nextStep();
  }
});

test('a challenge expires after 5 minutes and dies with a password reset; a reset keeps 2FA', async () => {
  const { email, client } = await confirmedAccount(app);
  const { secret } = await enable(client);
  const old = await passwordStep(email);
  app.t.clock.advance(5 * MINUTE + 1);
  assert.equal((await old.client.post('/auth/login/two-factor', { challenge: old.challenge, code: codeAt(secret) })).status, 400);

  const pending = await passwordStep(email);
  const before = app.smtp.messages.length;
  assert.equal((await app.t.client().post('/auth/password/forgot', { email })).status, 202);
  const mail = await app.smtp.waitFor((m) => app.smtp.messages.indexOf(m) >= before && m.to.includes(email));
  const reset = await app.t.client().post('/auth/password/reset', { token: fragmentToken(mail, 'reset'), password: PASSWORD });
  assert.equal(reset.status, 401, 'the reset link is a first step only: it asks for the code (reset-two-factor.test.ts)');
  assert.equal(reset.body.error.code, 'two_factor_required');
  const voided = await pending.client.post('/auth/login/two-factor', { challenge: pending.challenge, code: codeAt(secret) });
  assert.equal(voided.status, 400, 'a challenge from before the reset is void');
  // The reset did not turn 2FA off: the new password still asks for the code.
  const after = await passwordStep(email);
  assert.equal((await after.client.post('/auth/login/two-factor', { challenge: after.challenge, code: codeAt(secret) })).status, 200);
});

test('a recovery code signs in once, and turns 2FA off once; turning off needs a code and a recent sign-in', async () => {
  const { email, client } = await confirmedAccount(app);
  const { recovery } = await enable(client);
  const first = await passwordStep(email);
  assert.equal((await first.client.post('/auth/login/two-factor', { challenge: first.challenge, code: recovery[0]!.toUpperCase() })).status, 200);
  const second = await passwordStep(email);
  assert.equal((await second.client.post('/auth/login/two-factor', { challenge: second.challenge, code: recovery[0] })).status, 401, 'spent');
  assert.equal((await first.client.get('/me/two-factor')).body.recovery_codes_left, 9);

  const noCode = await first.client.post('/me/two-factor/disable', { code: '000000' });
  assert.equal(noCode.status, 401);
  app.t.clock.advance(10 * MINUTE + 1);
  const stale = await first.client.post('/me/two-factor/disable', { code: recovery[1] });
  assert.equal(stale.status, 403);
  assert.equal(stale.body.error.code, 'recent_sign_in_required');
  const fresh = await passwordStep(email);
  assert.equal((await fresh.client.post('/auth/login/two-factor', { challenge: fresh.challenge, code: recovery[2] })).status, 200);
  assert.equal((await fresh.client.post('/me/two-factor/disable', { code: recovery[1] })).status, 200);
  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 200, 'off: the password alone signs in');
});

test('turning 2FA off with a current code', async () => {
  const { email, client } = await confirmedAccount(app);
  const { secret } = await enable(client);
  assert.equal((await client.post('/me/two-factor/disable', { code: codeAt(secret) })).status, 200);
  assert.equal((await client.get('/me/two-factor')).body.enabled, false);
  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 200);
});

test('Google sign-in asks for the code once 2FA is on', async () => {
  const email = uniqueEmail('g2fa');
  const claims = { sub: `sub-${email}`, email, email_verified: true };
  const owner = app.t.client();
  assert.equal((await owner.post('/auth/google', { credential: await google.idToken(claims, { nowMs: app.t.clock.now() }) })).status, 201);
  const { secret } = await enable(owner);
  const browser = app.t.client();
  const res = await browser.post('/auth/google', { credential: await google.idToken(claims, { nowMs: app.t.clock.now() }) });
  assert.equal(res.status, 401);
  assert.equal(res.body.error.code, 'two_factor_required');
  assert.equal(browser.cookies.get(SESSION_COOKIE), undefined);
  assert.equal((await browser.post('/auth/login/two-factor', { challenge: res.body.error.challenge, code: codeAt(secret) })).status, 200);
  assert.equal((await browser.get('/me')).status, 200);
});

test('support staff cannot use the inbox until 2FA is on (auth.require_2fa_for_staff)', async () => {
  const { client } = await confirmedAccount(app, STAFF);
  const refused = await client.get('/support/inbox');
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error.code, 'two_factor_setup_required');
  const page = await client.get(`${app.t.baseUrl}/console/inbox`);
  assert.equal(page.status, 303);
  assert.equal(page.headers.get('location'), '/console/account#two-factor');
  const account = await client.get(`${app.t.baseUrl}/console/account`);
  assert.ok(account.text.includes(translate('en', 'console.two_factor.staff_required')), 'the account page says why');
  await enable(client);
  assert.equal((await client.get('/support/inbox')).status, 200);
  assert.equal((await client.get(`${app.t.baseUrl}/console/inbox`)).status, 200);
});

test('codes are limited per account, whatever the address', async () => {
  const limited = await startMailApp({ rate_limits: { two_factor_per_account: 3 } });
  try {
    const { email, client } = await confirmedAccount(limited);
    const setup = await client.post('/me/two-factor/setup');
    const code = () => new TOTP({ secret: Secret.fromBase32(setup.body.secret) }).generate({ timestamp: limited.t.clock.now() });
    assert.equal((await client.post('/me/two-factor/confirm', { code: code() })).status, 200);
    limited.t.clock.advance(MINUTE);
    const res = await limited.t.client().post('/auth/login', { email, password: PASSWORD });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await limited.t.client().post('/auth/login/two-factor', { challenge: res.body.error.challenge, code: '000000' })).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    const right = await limited.t.client().post('/auth/login/two-factor', { challenge: res.body.error.challenge, code: code() });
    assert.equal(right.status, 429, 'even the right code waits');
  } finally {
    await limited.close();
  }
});
