/**
 * With an https public_url the session and registration cookies carry the `__Host-` prefix (a
 * sibling subdomain or plain http on the same host cannot plant them), and only the prefixed names
 * are read; on plain http the bare names stay, for local use.
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { confirmedAccount, PASSWORD, startMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';
import { fragmentToken } from '../helpers/smtp.js';

let https: MailApp;
let http: MailApp;
before(async () => {
  https = await startMailApp({ server: { public_url: 'https://pay.example.com' } });
  http = await startMailApp();
});
after(async () => {
  await https.close();
  await http.close();
});

const cookieLine = (setCookie: string[], name: string) => setCookie.find((c) => c.startsWith(`${name}=`));

test('https: __Host-gw_reg and __Host-gw_session, Secure, Path=/, no Domain', async () => {
  const email = uniqueEmail('host');
  const browser = https.t.client();
  const reg = await browser.post('/auth/register', { email, password: PASSWORD });
  assert.equal(reg.status, 201);
  const regCookie = cookieLine(reg.headers.getSetCookie(), '__Host-gw_reg');
  assert.ok(regCookie, reg.headers.getSetCookie().join('\n'));
  assert.match(regCookie, /; Path=\/(;|$)/);
  assert.match(regCookie, /; Secure/);
  assert.match(regCookie, /; HttpOnly/);
  assert.doesNotMatch(regCookie, /Domain=/i);
  assert.equal(cookieLine(reg.headers.getSetCookie(), 'gw_reg'), undefined);

  const mail = await https.smtp.waitFor((m) => m.to.includes(email));
  const confirmed = await browser.post('/auth/verify-email', { token: fragmentToken(mail, 'verify') });
  assert.equal(confirmed.status, 200);
  assert.equal(confirmed.body.password_set, true, 'the prefixed proof is read');
  const session = cookieLine(confirmed.headers.getSetCookie(), '__Host-gw_session');
  assert.ok(session);
  assert.match(session, /; Path=\/(;|$)/);
  assert.match(session, /; Secure/);
  assert.equal((await browser.get('/me')).status, 200);

  // A bare gw_session with a live token is not read on https.
  const bare = https.t.client();
  bare.cookies.set('gw_session', browser.cookies.get('__Host-gw_session')!);
  assert.equal((await bare.get('/me')).status, 401);
  assert.equal((await browser.post('/auth/logout', {})).status, 200);
  assert.equal(browser.cookies.get('__Host-gw_session'), undefined, 'logout clears the prefixed cookie');
});

test("https: a gw_reg cookie planted in the owner's browser (sibling subdomain, plain http) does not keep the attacker's password", async () => {
  const email = uniqueEmail('planted');
  const attacker = https.t.client();
  assert.equal((await attacker.post('/auth/register', { email, password: 'attacker password 1' })).status, 201);
  const mail = await https.smtp.waitFor((m) => m.to.includes(email));
  // The attacker's proof, planted under the bare name, as a page on a sibling subdomain can set it.
  const owner = https.t.client();
  owner.cookies.set('gw_reg', attacker.cookies.get('__Host-gw_reg')!);
  const confirmed = await owner.post('/auth/verify-email', { token: fragmentToken(mail, 'verify') });
  assert.equal(confirmed.status, 200);
  assert.equal(confirmed.body.password_set, false, 'the planted proof is ignored');
  assert.equal((await https.t.client().post('/auth/login', { email, password: 'attacker password 1' })).status, 401);
});

test('plain http keeps gw_session and gw_reg (local use)', async () => {
  const { client } = await confirmedAccount(http);
  assert.ok(client.cookies.get('gw_session'));
  assert.equal(client.cookies.get('__Host-gw_session'), undefined);
  const reg = await http.t.client().post('/auth/register', { email: uniqueEmail(), password: PASSWORD });
  const regCookie = cookieLine(reg.headers.getSetCookie(), 'gw_reg');
  assert.ok(regCookie);
  assert.match(regCookie, /; Path=\/api\/v1\/auth\/verify-email/);
  assert.doesNotMatch(regCookie, /; Secure/);
});
