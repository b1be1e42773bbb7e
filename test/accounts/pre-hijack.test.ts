/**
 * Pre-registration hijacking and its neighbours, performed as an attacker would: through the real
 * HTTP server and the real SMTP server. The owner is whoever reads the mailbox; the attacker knows
 * the owner's address and nothing else, and registers it with a password of their own.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE } from '../../src/lib/clock.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { REGISTRATION_COOKIE } from '../../src/accounts/auth.routes.js';
import type { HttpClient } from '../helpers/http.js';
import { confirmedAccount, startMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { fragmentToken, type ReceivedMail } from '../helpers/smtp.js';

const OWNER_PASSWORD = 'the owner chose this one';
const ATTACKER_PASSWORD = 'the attacker chose this';

let app: MailApp;
let rx: HttpsReceiver;
before(async () => {
  rx = await startHttpsReceiver();
  app = await startMailApp({ webhooks: rx.webhookConfig({ allow_private_cidrs: ['127.0.0.0/8'], resolve: { 'hooks.example.test': '127.0.0.1' } }) });
});
after(async () => {
  await app.close();
  await rx.close();
});

const mailsTo = (email: string) => app.smtp.messages.filter((m) => m.to.includes(email));

/**
 * Registers through the API from a browser of its own (a fresh client); returns the answer, the mail
 * this request caused, if any, and that browser (it holds the registration cookie).
 */
async function registerAs(
  email: string,
  password: string,
  name?: string,
): Promise<{ emailSent: boolean; mail: ReceivedMail | undefined; browser: HttpClient; setCookie: string[] }> {
  const before = mailsTo(email).length;
  const browser = app.t.client();
  const res = await browser.post('/auth/register', { email, password, ...(name ? { name } : {}) });
  assert.equal(res.status, 201, res.text);
  // The answer leaves once the mail server took the mail (or nothing was sent within the 5 minutes).
  const mail = mailsTo(email)[before];
  return { emailSent: res.body.email_sent, mail, browser, setCookie: res.headers.getSetCookie() };
}

const login = (email: string, password: string) => app.t.client().post('/auth/login', { email, password });

/** The owner follows a confirmation mail (by default in a browser that never registered): signed in, with a working session. */
async function ownerConfirms(mail: ReceivedMail, owner: HttpClient = app.t.client()): Promise<{ passwordSet: boolean; owner: HttpClient }> {
  const res = await owner.post('/auth/verify-email', { token: fragmentToken(mail, 'verify') });
  assert.equal(res.status, 200, res.text);
  assert.ok(owner.cookies.get(SESSION_COOKIE), 'the owner is signed in');
  assert.equal((await owner.get('/me')).status, 200);
  assert.equal(owner.cookies.get(REGISTRATION_COOKIE), undefined, 'the registration cookie is cleared');
  return { passwordSet: res.body.password_set, owner };
}

/** The owner sets a password through the reset link the confirmation mailed them. */
async function ownerSetsPassword(email: string, password: string): Promise<void> {
  const reset = await app.smtp.waitFor((m) => m.to.includes(email) && m.text.includes('#reset='));
  const res = await app.t.client().post('/auth/password/reset', { token: fragmentToken(reset, 'reset'), password });
  assert.equal(res.status, 200, res.text);
}

test("owner first, attacker more than 5 minutes later: whichever mail the owner follows, the attacker's password never opens the account", async () => {
  for (const follow of ['newest', 'oldest'] as const) {
    const email = uniqueEmail(`victim-${follow}`);
    const owner = await registerAs(email, OWNER_PASSWORD);
    assert.ok(owner.emailSent && owner.mail);
    app.t.clock.advance(6 * MINUTE);
    const attacker = await registerAs(email, ATTACKER_PASSWORD);
    assert.ok(attacker.emailSent && attacker.mail, "the attacker's registration mails the owner a link of its own");

    const { passwordSet } = await ownerConfirms(follow === 'newest' ? attacker.mail : owner.mail);
    assert.equal((await login(email, ATTACKER_PASSWORD)).status, 401, `${follow}: the attacker's password does not open the account`);
    assert.equal((await login(email, OWNER_PASSWORD)).status, 401, "nor does any registration's password");
    assert.equal(passwordSet, false, 'competing registrations: no password is kept');

    await ownerSetsPassword(email, 'the owner sets this now');
    assert.equal((await login(email, 'the owner sets this now')).status, 200);
    assert.equal((await login(email, ATTACKER_PASSWORD)).status, 401);
  }
});

test("attacker first, owner 2 minutes later: the owner is told no mail went out, follows the attacker's mail, and the attacker's password still never opens the account", async () => {
  const email = uniqueEmail('victim');
  const attacker = await registerAs(email, ATTACKER_PASSWORD, 'Attacker Ltd');
  assert.ok(attacker.emailSent && attacker.mail);
  app.t.clock.advance(2 * MINUTE);
  const owner = await app.t.client().post('/auth/register', { email, password: OWNER_PASSWORD, name: 'Owner Shop' });
  assert.equal(owner.status, 201);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(mailsTo(email).length, 1, "the owner's registration mails nothing within 5 minutes of the attacker's");

  const { passwordSet } = await ownerConfirms(attacker.mail);
  assert.equal((await login(email, ATTACKER_PASSWORD)).status, 401, "the attacker's password does not open the account");
  assert.equal((await login(email, OWNER_PASSWORD)).status, 401);
  assert.equal(owner.body.email_sent, true, "no mail went out for the owner's registration, yet the answer is a new registration's");
  assert.equal(passwordSet, false);
  await ownerSetsPassword(email, 'the owner sets this now');
  const signedIn = await login(email, 'the owner sets this now');
  assert.equal(signedIn.status, 200);
  assert.notEqual(signedIn.body.merchant.name, 'Attacker Ltd', 'no name typed by a competing registration is kept');
});

test('an attacker alone registers the address and waits: nothing they chose changes the account, and their password is refused as unconfirmed', async () => {
  const email = uniqueEmail('victim');
  await registerAs(email, ATTACKER_PASSWORD, 'Attacker Ltd');
  const row = await app.t.deps.db.selectFrom('merchants').select(['password_hash', 'name']).where('email', '=', email).executeTakeFirstOrThrow();
  assert.equal(row.password_hash, null, "a pending registration never sets the account's password");
  assert.equal(row.name, email.split('@')[0]);
  assert.equal((await login(email, ATTACKER_PASSWORD)).body.error.code, 'email_not_verified');
});

test('the only registration, confirmed through its own link in the browser that registered, keeps its password (the plain case still works)', async () => {
  const email = uniqueEmail('owner');
  const owner = await registerAs(email, OWNER_PASSWORD, 'Owner Shop');
  const cookie = owner.setCookie.find((c) => c.startsWith(`${REGISTRATION_COOKIE}=`));
  assert.ok(cookie, 'the registration sets its cookie');
  assert.match(cookie, /HttpOnly/i);
  assert.match(cookie, /SameSite=Lax/i);
  assert.match(cookie, /Path=\/api\/v1\/auth\/verify-email/i, 'sent only to the confirmation endpoint');
  assert.match(cookie, /Max-Age=86400/i, 'lives as long as the registration');
  assert.doesNotMatch(cookie, /Secure/i, 'plain http public_url');
  const stored = await app.t.deps.db.selectFrom('registrations').selectAll().where('name', '=', 'Owner Shop').executeTakeFirstOrThrow();
  assert.ok(!Object.values(stored).includes(owner.browser.cookies.get(REGISTRATION_COOKIE)!), 'the cookie value is stored nowhere');
  assert.equal((await ownerConfirms(owner.mail!, owner.browser)).passwordSet, true);
  const res = await login(email, OWNER_PASSWORD);
  assert.equal(res.status, 200);
  assert.equal(res.body.merchant.name, 'Owner Shop');
});

test("an attacker alone registers the owner's address; the owner confirms from their own browser: the attacker's password never opens the account", async () => {
  const email = uniqueEmail('victim');
  const attacker = await registerAs(email, ATTACKER_PASSWORD, 'Attacker Ltd');
  assert.ok(attacker.emailSent && attacker.mail);
  app.t.clock.advance(10 * MINUTE);

  const { passwordSet, owner } = await ownerConfirms(attacker.mail);
  const refused = await login(email, ATTACKER_PASSWORD);
  assert.equal(refused.status, 401, "the attacker's password does not open the account");
  assert.equal(passwordSet, false, "no registration's password is kept for a browser that did not register");
  const row = await app.t.deps.db
    .selectFrom('merchants')
    .select(['password_hash', 'name', 'email_verified_at'])
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  assert.equal(row.password_hash, null);
  assert.notEqual(row.email_verified_at, null);
  assert.notEqual(row.name, 'Attacker Ltd');

  // An account without a password answers a sign-in exactly like a wrong password and like an unknown address.
  const { email: other } = await confirmedAccount(app, uniqueEmail('other'), OWNER_PASSWORD);
  const wrong = await login(other, ATTACKER_PASSWORD);
  const unknown = await login(uniqueEmail('nobody'), ATTACKER_PASSWORD);
  for (const res of [wrong, unknown]) {
    assert.equal(res.status, refused.status);
    assert.deepEqual(res.body, refused.body);
  }

  // The owner, signed in, chooses a password at once; a second "first password" is refused.
  assert.equal((await owner.post('/auth/password/set', { password: 'the owner sets this now' })).status, 200);
  const again = await owner.post('/auth/password/set', { password: 'someone else tries this' });
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, 'password_already_set');
  assert.equal((await login(email, 'the owner sets this now')).status, 200);
  assert.equal((await login(email, 'someone else tries this')).status, 401);
  assert.equal((await login(email, ATTACKER_PASSWORD)).status, 401);
  // The reset link mailed by the confirmation stopped working when the password was chosen.
  const reset = await app.smtp.waitFor((m) => m.to.includes(email) && m.text.includes('#reset='));
  const late = await app.t.client().post('/auth/password/reset', { token: fragmentToken(reset, 'reset'), password: 'a reset after the choice' });
  assert.equal(late.body.error?.code, 'invalid_token');

  // The attacker's own browser, holding the cookie of their registration, has no link left to use.
  assert.equal((await attacker.browser.post('/auth/verify-email', { token: fragmentToken(attacker.mail, 'verify') })).status, 400);
});

test('the owner registers on one device and confirms on another: signed in without a password, and sets one', async () => {
  const email = uniqueEmail('two-devices');
  const laptop = await registerAs(email, OWNER_PASSWORD);
  const { passwordSet, owner: phone } = await ownerConfirms(laptop.mail!);
  assert.equal(passwordSet, false);
  assert.equal((await login(email, OWNER_PASSWORD)).status, 401, 'the typed password is not kept for another browser');
  assert.equal((await phone.post('/auth/password/set', { password: 'chosen on the phone' })).status, 200);
  assert.equal((await login(email, 'chosen on the phone')).status, 200);
});

test("a registration cookie proves only its own registration: another registration's cookie, or a made-up one, keeps no password", async () => {
  const email = uniqueEmail('mixed');
  const mine = await registerAs(uniqueEmail('mine'), OWNER_PASSWORD);
  const theirs = await registerAs(email, ATTACKER_PASSWORD);
  // A browser holding a valid cookie for another registration.
  assert.equal((await ownerConfirms(theirs.mail!, mine.browser)).passwordSet, false);
  assert.equal((await login(email, ATTACKER_PASSWORD)).status, 401);
  // A forged cookie value.
  const forged = await registerAs(uniqueEmail('forged'), OWNER_PASSWORD);
  const browser = app.t.client();
  browser.cookies.set(
    REGISTRATION_COOKIE,
    forged.browser.cookies.get(REGISTRATION_COOKIE)!.replace(/^./, (ch) => (ch === 'A' ? 'B' : 'A')),
  );
  assert.equal((await ownerConfirms(forged.mail!, browser)).passwordSet, false);
});

test('first password: needs a session and its Origin, refuses an account that has one, validates the password', async () => {
  const anonymous = await app.t.client().post('/auth/password/set', { password: 'no session at all here' });
  assert.equal(anonymous.status, 401);
  const { client, email } = await confirmedAccount(app, uniqueEmail('has-one'), OWNER_PASSWORD);
  const refused = await client.post('/auth/password/set', { password: 'replacing without the old one' });
  assert.equal(refused.status, 409);
  assert.equal(refused.body.error.code, 'password_already_set');
  assert.equal((await client.post('/auth/password/set', { password: 'short' })).status, 400);
  assert.equal((await client.post('/auth/password/set', { password: 'replacing without the old one' }, { origin: 'https://evil.example' })).status, 403);
  assert.equal((await login(email, OWNER_PASSWORD)).status, 200, 'the password is unchanged');
});

test('password reset offers to revoke every API key and webhook, shows their counts only to a reset-link holder, and by default keeps them', async () => {
  // Someone else held this account's password (the way the old hijack worked) and left a key and a webhook.
  const { email } = await confirmedAccount(app, uniqueEmail('held'), OWNER_PASSWORD);
  const intruder = app.t.client();
  assert.equal((await intruder.post('/auth/login', { email, password: OWNER_PASSWORD })).status, 200);
  const { secret } = (await intruder.post('/api-keys', { name: 'backdoor' })).body;
  const hook = await intruder.post('/webhooks', { url: rx.url('/exfiltrate', 'hooks.example.test') });
  assert.equal(hook.status, 201, hook.text);
  const api = app.t.client({ origin: null });
  const useKey = async () => (await api.get('/invoices', { bearer: secret })).status;
  assert.equal(await useKey(), 200);

  const forgot = async () => {
    const before = app.smtp.messages.length;
    assert.equal((await app.t.client().post('/auth/password/forgot', { email })).status, 202);
    return fragmentToken(await app.smtp.waitFor((m) => app.smtp.messages.indexOf(m) >= before && m.to.includes(email) && m.text.includes('#reset=')), 'reset');
  };
  // Without a live reset link there are no counts.
  const noToken = await app.t.client().post('/auth/password/reset/preview', { token: 'A'.repeat(43) });
  assert.equal(noToken.status, 400);
  assert.equal(noToken.body.error.code, 'invalid_token');

  // A reset without the option keeps integrations running (sessions are revoked as always).
  let token = await forgot();
  assert.deepEqual((await app.t.client().post('/auth/password/reset/preview', { token })).body, { api_keys: 1, webhooks: 1 });
  const plain = await app.t.client().post('/auth/password/reset', { token, password: 'first new password' });
  assert.deepEqual(plain.body.revoked, { api_keys: 0, webhooks: 0 });
  assert.equal(await useKey(), 200, 'the key survives a reset that did not ask');
  assert.equal((await intruder.get('/me')).status, 401, 'sessions never survive');

  // With the option: the key stops working and the webhook is deactivated.
  app.t.clock.advance(5 * MINUTE);
  token = await forgot();
  const revoke = await app.t.client().post('/auth/password/reset', { token, password: 'second new password', revoke_api_keys_and_webhooks: true });
  assert.equal(revoke.status, 200, revoke.text);
  assert.deepEqual(revoke.body.revoked, { api_keys: 1, webhooks: 1 });
  assert.equal(await useKey(), 401, 'the backdoor key is revoked');
  const stored = await app.t.deps.db.selectFrom('webhooks').select(['id', 'active']).where('id', '=', hook.body.webhook.id).executeTakeFirstOrThrow();
  assert.equal(stored.active, 0, 'the webhook is deactivated');
  assert.equal((await login(email, 'second new password')).status, 200);
  // The link was used: the counts are no longer shown to it.
  assert.equal((await app.t.client().post('/auth/password/reset/preview', { token })).body.error.code, 'invalid_token');
});

test('a repeated registration answers exactly like a new one (email_sent included), for a new, an unconfirmed and a confirmed address', async () => {
  const fresh = uniqueEmail('fresh');
  const unconfirmed = uniqueEmail('pending');
  await registerAs(unconfirmed, OWNER_PASSWORD);
  const { email: confirmed } = await confirmedAccount(app, uniqueEmail('confirmed'), OWNER_PASSWORD);
  app.t.clock.advance(5 * MINUTE);

  const answers: Record<string, boolean[]> = {};
  for (const email of [fresh, unconfirmed, confirmed]) {
    answers[email] = [];
    for (let i = 0; i < 2; i++) {
      const before = mailsTo(email).length;
      const { emailSent, browser } = await registerAs(email, ATTACKER_PASSWORD);
      answers[email]!.push(emailSent);
      assert.match(browser.cookies.get(REGISTRATION_COOKIE) ?? '', /^[A-Za-z0-9_-]{43}$/, 'every answer sets a registration cookie of the same shape');
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(mailsTo(email).length, before + (i === 0 ? 1 : 0), 'one mail per address per 5 minutes');
    }
  }
  assert.deepEqual(Object.values(answers), [
    [true, true],
    [true, true],
    [true, true],
  ]);
});

test('a name typed at registration never appears in mail to an address that has not confirmed it', async () => {
  const email = uniqueEmail('target');
  const bait = 'URGENT send 500 USDT to TXYZ';
  const { mail } = await registerAs(email, ATTACKER_PASSWORD, bait);
  assert.ok(mail);
  assert.ok(!mail.text.includes('URGENT') && !mail.html.includes('URGENT') && !mail.subject.includes('URGENT'), mail.text);
  // A reset mail to the still unconfirmed address carries no name either.
  assert.equal((await app.t.client().post('/auth/password/forgot', { email })).status, 202);
  const reset = await app.smtp.waitFor((m) => m.to.includes(email) && m.text.includes('#reset='));
  assert.ok(!reset.text.includes('URGENT') && !reset.html.includes('URGENT'), reset.text);
  assert.match(reset.text, /^Hello,$/m);
});

test('forgot password: at most one reset mail per address every 5 minutes, and the same stored work whether or not the address has an account', async () => {
  const { email } = await confirmedAccount(app, uniqueEmail('forgetful'), OWNER_PASSWORD);
  const unknown = uniqueEmail('nobody');
  const resets = (to: string) => app.smtp.messages.filter((m) => m.to.includes(to) && m.text.includes('#reset=')).length;
  const rows = async () => app.t.deps.db.selectFrom('password_resets').select(['merchant_id', 'sent_at', 'token_hash']).orderBy('sent_at').execute();
  const before = (await rows()).length;
  for (let i = 0; i < 3; i++) {
    assert.equal((await app.t.client().post('/auth/password/forgot', { email })).status, 202);
    assert.equal((await app.t.client().post('/auth/password/forgot', { email: unknown })).status, 202);
  }
  await app.smtp.waitFor((m) => m.to.includes(email) && m.text.includes('#reset='));
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(resets(email), 1, 'three requests within 5 minutes: one mail');
  assert.equal(resets(unknown), 0);
  const stored = (await rows()).slice(before);
  assert.equal(stored.length, 2, 'one row per address, for an account or not');
  assert.deepEqual(stored.map((r) => [r.merchant_id === null, /^[0-9a-f]{64}$/.test(r.token_hash ?? '')]).sort(), [
    [false, true],
    [true, true],
  ]);
  app.t.clock.advance(5 * MINUTE);
  assert.equal((await app.t.client().post('/auth/password/forgot', { email })).status, 202);
  await app.smtp.waitFor((m) => m.to.includes(email) && resets(email) === 2);
});

test('a confirmation that keeps no password mails the reset link at once, even within the reset limit of the address', async () => {
  const email = uniqueEmail('victim');
  // The attacker asks a reset for the address before it has an account (that takes its 5-minute slot), then registers it.
  assert.equal((await app.t.client().post('/auth/password/forgot', { email })).status, 202);
  const attacker = await registerAs(email, ATTACKER_PASSWORD);
  app.t.clock.advance(MINUTE);
  await app.t.client().post('/auth/register', { email, password: OWNER_PASSWORD });
  const { passwordSet } = await ownerConfirms(attacker.mail!);
  assert.equal(passwordSet, false);
  await ownerSetsPassword(email, 'the owner sets this now');
  assert.equal((await login(email, 'the owner sets this now')).status, 200);
});
