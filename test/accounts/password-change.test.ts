import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { confirmedAccount, PASSWORD, startMailApp, type MailApp } from '../helpers/accounts.js';
import { newKey } from '../helpers/shop.js';

let app: MailApp;
before(async () => {
  app = await startMailApp({ server: { trust_proxy: true }, rate_limits: { auth_per_ip: 50, auth_per_email: 4 } });
});
after(() => app.close());

const NEW_PASSWORD = 'a brand new passphrase 2026';

test('POST /me/password: the current password is required; the new one signs in, the old one no longer; other sessions end, this one stays', async () => {
  const { email, client } = await confirmedAccount(app);
  const other = app.t.client();
  assert.equal((await other.post('/auth/login', { email, password: PASSWORD })).status, 200);
  const stored = () => app.t.deps.db.selectFrom('merchants').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();
  const before = (await stored()).password_hash;

  const wrong = await client.post('/me/password', { current_password: 'not my password at all', new_password: NEW_PASSWORD });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error.code, 'invalid_credential');
  assert.deepEqual(
    wrong.body.error.details.map((d: { path: string }) => d.path),
    ['current_password'],
  );
  assert.equal((await stored()).password_hash, before, 'a wrong current password changes nothing');
  assert.equal((await client.get('/me')).status, 200, 'a wrong current password does not end the session');
  assert.equal((await other.get('/me')).status, 200, 'nor the other sessions');

  for (const body of [
    { current_password: PASSWORD, new_password: 'too short' },
    { current_password: PASSWORD, new_password: 'x'.repeat(129) },
    { current_password: PASSWORD },
    { current_password: PASSWORD, new_password: NEW_PASSWORD, extra: 1 },
  ]) {
    const res = await client.post('/me/password', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_error');
  }
  assert.equal((await stored()).password_hash, before);

  const ok = await client.post('/me/password', { current_password: PASSWORD, new_password: NEW_PASSWORD });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, { success: true });
  assert.match((await stored()).password_hash ?? '', /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  assert.equal((await client.get('/me')).status, 200, 'the session that changed it stays signed in');
  assert.equal((await other.get('/me')).status, 401, 'every other session is revoked');

  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 401, 'the old password no longer signs in');
  assert.equal((await app.t.client().post('/auth/login', { email, password: NEW_PASSWORD })).status, 200);
});

test('POST /me/password: session only (an API key is 403 session_required), no session is 401, a foreign Origin is 403', async () => {
  const { client } = await confirmedAccount(app);
  const key = await newKey(client, { name: 'server', scopes: ['invoices:read', 'invoices:write', 'ledger:read'] });
  const withKey = app.t.client();
  const byKey = await withKey.post(
    '/me/password',
    { current_password: PASSWORD, new_password: NEW_PASSWORD },
    { headers: { authorization: `Bearer ${key.secret}` } },
  );
  assert.equal(byKey.status, 403);
  assert.equal(byKey.body.error.code, 'session_required');
  assert.equal((await app.t.client().post('/me/password', { current_password: PASSWORD, new_password: NEW_PASSWORD })).status, 401);
  const cross = await client.post('/me/password', { current_password: PASSWORD, new_password: NEW_PASSWORD }, { headers: { origin: 'https://evil.example' } });
  assert.equal(cross.status, 403);
  assert.equal(cross.body.error.code, 'invalid_origin');
  assert.equal((await client.get('/me')).status, 200);
});

test('POST /me/password is rate limited per account like sign-in: guessing the current password from a stolen session stops at the limit', async () => {
  const { email, client } = await confirmedAccount(app);
  const stolen = app.t.client();
  stolen.cookies.set(SESSION_COOKIE, client.cookies.get(SESSION_COOKIE)!);
  const guess = (n: number) =>
    stolen.post('/me/password', { current_password: `guess number ${n}`, new_password: NEW_PASSWORD }, { headers: { 'x-forwarded-for': `10.9.0.${n}` } });
  for (let n = 1; n <= 4; n++) assert.equal((await guess(n)).status, 401, `guess ${n}`);
  const limited = await guess(5);
  assert.equal(limited.status, 429, 'per account, whatever the address');
  assert.equal(limited.body.error.code, 'rate_limited');
  assert.match(limited.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
  // Even the right password waits: the limit is counted before the check, so the answer tells nothing.
  const right = await stolen.post('/me/password', { current_password: PASSWORD, new_password: NEW_PASSWORD }, { headers: { 'x-forwarded-for': '10.9.1.1' } });
  assert.equal(right.status, 429);
  assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 200, 'the password is unchanged');
});
