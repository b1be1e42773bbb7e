import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PASSWORD, startMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';
import { startSiteverify, type SiteverifyStub } from '../helpers/captcha.js';
import { GOOGLE_CLIENT_ID, startGoogle, type GoogleStub } from '../helpers/google.js';

let siteverify: SiteverifyStub;
let google: GoogleStub;
let app: MailApp;
before(async () => {
  siteverify = await startSiteverify();
  google = await startGoogle();
  app = await startMailApp({
    captcha: { provider: 'hcaptcha', site_key: 'site-key-1', secret_key: 'captcha-secret-1', verify_url: siteverify.url },
    google: { client_id: GOOGLE_CLIENT_ID, jwks_url: google.jwksUrl },
  });
});
after(async () => {
  await app.close();
  await siteverify.close();
  await google.close();
});

let n = 0;
const fresh = () => `captcha-token-${++n}`;

test('/config shows the provider and site key', async () => {
  assert.deepEqual((await app.t.client().get('/config')).body.captcha, { provider: 'hcaptcha', site_key: 'site-key-1' });
});

test('register, sign-in and forgot need a solved captcha; a token works once', async () => {
  siteverify.mode = 'yes';
  const email = uniqueEmail();
  const missing = await app.t.client().post('/auth/register', { email, password: PASSWORD });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error.code, 'captcha_invalid');

  const captcha = fresh();
  const ok = await app.t.client().post('/auth/register', { email, password: PASSWORD, captcha_token: captcha });
  assert.equal(ok.status, 201);
  const sent = siteverify.requests.at(-1)!;
  assert.equal(sent.get('secret'), 'captcha-secret-1');
  assert.equal(sent.get('response'), captcha);
  assert.equal(sent.get('remoteip'), '127.0.0.1');

  const reused = await app.t.client().post('/auth/password/forgot', { email, captcha_token: captcha });
  assert.equal(reused.status, 400);
  assert.equal(reused.body.error.code, 'captcha_invalid');

  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).body.error.code, 'captcha_invalid');
  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD, captcha_token: fresh() })).body.error.code, 'email_not_verified');
  assert.equal((await app.t.client().post('/auth/password/forgot', { email })).body.error.code, 'captcha_invalid');
  assert.equal((await app.t.client().post('/auth/password/forgot', { email, captcha_token: fresh() })).status, 202);
  const long = await app.t.client().post('/auth/login', { email, password: PASSWORD, captcha_token: 'x'.repeat(2049) });
  assert.equal(long.status, 400);
  assert.equal(long.body.error.code, 'validation_error');
});

test('a failed captcha is 400 captcha_invalid and nothing happens', async () => {
  siteverify.mode = 'no';
  const email = uniqueEmail();
  const res = await app.t.client().post('/auth/register', { email, password: PASSWORD, captcha_token: fresh() });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.code, 'captcha_invalid');
  assert.equal(await app.t.deps.db.selectFrom('merchants').select('id').where('email', '=', email).executeTakeFirst(), undefined);
});

test('provider failing: 500 or garbage or no answer is 503 captcha_unavailable, and the token stays usable', async () => {
  const email = uniqueEmail();
  for (const mode of ['500', 'garbage', 'hang'] as const) {
    siteverify.mode = mode;
    const token = fresh();
    const res = await app.t.client().post('/auth/login', { email, password: PASSWORD, captcha_token: token });
    assert.equal(res.status, 503, mode);
    assert.equal(res.body.error.code, 'captcha_unavailable');
    siteverify.mode = 'yes';
    const retry = await app.t.client().post('/auth/login', { email, password: PASSWORD, captcha_token: token });
    assert.equal(retry.body.error.code, 'invalid_credential', `${mode}: a token the provider never judged may be retried`);
  }
  siteverify.mode = '500';
  for (const [path, body] of [
    ['/auth/register', { email, password: PASSWORD }],
    ['/auth/password/forgot', { email }],
  ] as const) {
    const res = await app.t.client().post(path, { ...body, captcha_token: fresh() });
    assert.equal(res.status, 503, path);
    assert.equal(res.body.error.code, 'captcha_unavailable', path);
  }
  assert.equal(await app.t.deps.db.selectFrom('merchants').select('id').where('email', '=', email).executeTakeFirst(), undefined);
});

test('sign-in with Google needs no captcha', async () => {
  siteverify.mode = 'no';
  const before = siteverify.requests.length;
  const credential = await google.idToken({ sub: 'captcha-free', email: uniqueEmail('g'), email_verified: true }, { nowMs: app.t.clock.now() });
  assert.equal((await app.t.client().post('/auth/google', { credential })).status, 201);
  assert.equal(siteverify.requests.length, before);
});
