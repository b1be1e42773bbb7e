import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HOUR } from '../../src/lib/clock.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { startTestApp } from '../helpers/app.js';
import { confirmedAccount, PASSWORD, registerAndReadToken, startGoogleMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';
import { GOOGLE_CLIENT_ID, startGoogle, type GoogleStub } from '../helpers/google.js';

let google: GoogleStub;
let app: MailApp & { google: GoogleStub };
before(async () => {
  app = await startGoogleMailApp();
  google = app.google;
});
after(() => app.close());

let sub = 1000;
function claims(email: string, extra: Record<string, unknown> = {}) {
  sub += 1;
  return { sub: String(sub), email, email_verified: true, name: 'Google Person', ...extra };
}
const token = (c: Record<string, unknown>, options: Partial<Parameters<GoogleStub['idToken']>[1]> = {}) =>
  google.idToken(c, { nowMs: app.t.clock.now(), ...options });

test('/config shows the client id', async () => {
  const res = await app.t.client().get('/config');
  assert.deepEqual(res.body.google, { client_id: GOOGLE_CLIENT_ID });
});

test('a new email creates a confirmed account (201); the same Google account signs in next time (200)', async () => {
  const email = uniqueEmail('g');
  const c = claims(email.toUpperCase());
  const client = app.t.client();
  const created = await client.post('/auth/google', { credential: await token(c) });
  assert.equal(created.status, 201);
  assert.equal(created.body.merchant.email, email);
  assert.equal(created.body.merchant.name, 'Google Person');
  assert.ok(client.cookies.get(SESSION_COOKIE));
  assert.equal((await client.get('/me')).status, 200);
  const again = await app.t.client().post('/auth/google', { credential: await token({ ...c, email: 'changed@elsewhere.example' }) });
  assert.equal(again.status, 200, 'matched by subject');
  assert.equal(again.body.merchant.id, created.body.merchant.id);
  const noPassword = await app.t.client().post('/auth/login', { email, password: 'whatever password' });
  assert.equal(noPassword.status, 401, 'a Google-only account has no password');
});

test('an existing confirmed account is linked on first use and keeps its password', async () => {
  const { email, merchantId } = await confirmedAccount(app);
  const res = await app.t.client().post('/auth/google', { credential: await token(claims(email)) });
  assert.equal(res.status, 200);
  assert.equal(res.body.merchant.id, merchantId);
  const row = await app.t.deps.db.selectFrom('merchants').select('google_sub').where('id', '=', merchantId).executeTakeFirstOrThrow();
  assert.equal(row.google_sub, String(sub));
  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 200);
  const other = await app.t.client().post('/auth/google', { credential: await token(claims(email)) });
  assert.equal(other.status, 401, 'another Google account with the same address is refused');
  assert.equal(other.body.error.code, 'invalid_credential');
});

test('an unconfirmed account is claimed: 200, its password and confirmation link stop working, and the owner may choose a first password', async () => {
  const email = uniqueEmail('claim');
  const attacker = app.t.client();
  const verifyToken = await registerAndReadToken(app, email, 'attacker set this', {}, attacker);
  const owner = app.t.client();
  const res = await owner.post('/auth/google', { credential: await token(claims(email)) });
  assert.equal(res.status, 200);
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'attacker set this' })).status, 401);
  // Even from the browser that registered (it holds the registration cookie), the link is void.
  assert.equal((await attacker.post('/auth/verify-email', { token: verifyToken })).body.error.code, 'invalid_token');
  assert.equal((await owner.post('/auth/password/set', { password: 'the owner adds a password' })).status, 200);
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'the owner adds a password' })).status, 200);
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'attacker set this' })).status, 401);
});

test('refused credentials: 401 invalid_credential', async () => {
  const email = uniqueEmail('bad');
  const cases: Array<[string, Promise<string> | string]> = [
    ['wrong audience', token(claims(email), { audience: 'someone-else.apps.googleusercontent.com' })],
    ['wrong issuer', token(claims(email), { issuer: 'https://evil.example' })],
    ['unknown signing key', token(claims(email), { foreignKey: true, kid: 'other' })],
    ['email not verified', token(claims(email, { email_verified: false }))],
    ['no email', token(claims(email, { email: undefined }))],
    ['not a JWT', 'this-is-not-a-jwt-at-all-but-long-enough'],
    ['tampered', token(claims(email)).then((jwt) => jwt.slice(0, -4) + (jwt.endsWith('AAAA') ? 'BBBB' : 'AAAA'))],
  ];
  for (const [name, credential] of cases) {
    const res = await app.t.client().post('/auth/google', { credential: await credential });
    assert.equal(res.status, 401, `${name}: ${res.text}`);
    assert.equal(res.body.error.code, 'invalid_credential', name);
  }
  const expiring = await token(claims(email), { lifetimeSeconds: 3600 });
  app.t.clock.advance(2 * HOUR);
  const expired = await app.t.client().post('/auth/google', { credential: expiring });
  assert.equal(expired.body.error.code, 'invalid_credential', 'expired');
  const row = await app.t.deps.db.selectFrom('merchants').select('id').where('email', '=', email).executeTakeFirst();
  assert.equal(row, undefined);
});

test('one canonical form of an address: KELVIN SIGN and other Unicode folds are refused, never merged into an ASCII account; ASCII case is folded', async () => {
  const local = `kate${sub}`;
  const { email, client: owner } = await confirmedAccount(app, `${local}@example.test`);
  // KELVIN SIGN (NFKC and toLowerCase give "k"), FULLWIDTH k (NFKC gives "k").
  for (const folded of [`\u212A${local.slice(1)}@example.test`, `\uFF4B${local.slice(1)}@example.test`]) {
    const attacker = app.t.client();
    const res = await attacker.post('/auth/google', { credential: await token(claims(folded)) });
    assert.equal(res.status, 401, folded);
    assert.equal(res.body.error.code, 'invalid_credential');
    assert.equal((await attacker.get('/me')).status, 401, `${folded} did not sign in to ${email}`);
  }
  const linked = await app.t.client().post('/auth/google', { credential: await token(claims(`${local.toUpperCase()}@Example.Test`)) });
  assert.equal(linked.status, 200, 'ASCII case differences are the same address');
  assert.equal(linked.body.merchant.email, email);
  // Registration, sign-in, reset and the contact form refuse the same address with the same rule.
  for (const [path, body] of [
    ['/auth/register', { email: `\u212A${local.slice(1)}@example.test`, password: PASSWORD }],
    ['/auth/login', { email: `\u212A${local.slice(1)}@example.test`, password: PASSWORD }],
    ['/auth/password/forgot', { email: `\u212A${local.slice(1)}@example.test` }],
  ] as const) {
    const res = await app.t.client().post(path, body);
    assert.equal(res.status, 400, path);
    assert.equal(res.body.error.code, 'validation_error');
  }
  assert.equal((await owner.get('/me')).status, 200);
});

test('keys unreachable: 503 identity_provider_unavailable; not configured: 503 too', async () => {
  for (const mode of ['500', 'garbage'] as const) {
    const idp = await startGoogle();
    idp.mode = mode;
    const t = await startTestApp({ config: { google: { client_id: GOOGLE_CLIENT_ID, jwks_url: idp.jwksUrl } } });
    try {
      const credential = await idp.idToken(claims(uniqueEmail()), { nowMs: t.clock.now() });
      const res = await t.client().post('/auth/google', { credential });
      assert.equal(res.status, 503, mode);
      assert.equal(res.body.error.code, 'identity_provider_unavailable');
      assert.ok(idp.fetches >= 1);
    } finally {
      await t.close();
      await idp.close();
    }
  }
  const closed = await startGoogle();
  const url = closed.jwksUrl;
  await closed.close();
  const t = await startTestApp({ config: { google: { client_id: GOOGLE_CLIENT_ID, jwks_url: url } } });
  try {
    const refused = await t.client().post('/auth/google', { credential: await closed.idToken(claims(uniqueEmail()), { nowMs: t.clock.now() }) });
    assert.equal(refused.body.error.code, 'identity_provider_unavailable', 'connection refused');
  } finally {
    await t.close();
  }
  const off = await startTestApp();
  try {
    const res = await off.client().post('/auth/google', { credential: await google.idToken(claims(uniqueEmail()), { nowMs: off.clock.now() }) });
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'identity_provider_unavailable');
  } finally {
    await off.close();
  }
});
