import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DAY, SECOND } from '../../src/lib/clock.js';
import { SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { confirmedAccount, PASSWORD, startMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';

let app: MailApp;
before(async () => {
  app = await startMailApp();
});
after(() => app.close());

const EVIL = 'https://evil.example';

test('sign-in: 200 {merchant} and an HttpOnly, SameSite=Lax, 30-day cookie; wrong password and unknown email are the same 401', async () => {
  const { email, merchantId } = await confirmedAccount(app);
  const client = app.t.client();
  const res = await client.post('/auth/login', { email: email.toUpperCase(), password: PASSWORD });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    merchant: { id: merchantId, name: email.split('@')[0], email, mode: 'live', support_staff: false, checkout_qr: 'address', markup_percent: '0' },
  });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Lax/);
  assert.match(cookie, /Path=\//);
  assert.match(cookie, /Max-Age=2592000/);
  assert.doesNotMatch(cookie, /Secure/, 'http public_url: no Secure flag');
  assert.equal((await client.get('/auth/session')).body.signed_in, true);

  const wrong = await app.t.client().post('/auth/login', { email, password: 'wrong password!' });
  const unknown = await app.t.client().post('/auth/login', { email: uniqueEmail('nobody'), password: 'wrong password!' });
  assert.equal(wrong.status, 401);
  assert.equal(unknown.status, 401);
  assert.deepEqual(wrong.body, unknown.body);
  assert.equal(wrong.body.error.code, 'invalid_credential');
});

test('sign-in rotates the session: the cookie the request came with stops working', async () => {
  const { email, client } = await confirmedAccount(app);
  const before = client.cookies.get(SESSION_COOKIE)!;
  const stale = app.t.client();
  stale.cookies.set(SESSION_COOKIE, before);
  assert.equal((await stale.get('/me')).status, 200);

  const res = await client.post('/auth/login', { email, password: PASSWORD });
  assert.equal(res.status, 200);
  const after = client.cookies.get(SESSION_COOKIE)!;
  assert.notEqual(after, before);
  assert.equal((await stale.get('/me')).status, 401);
  assert.equal((await client.get('/me')).status, 200);
});

test('sign-in adds a session: other devices stay signed in; logout ends only its own', async () => {
  const { email, client: first } = await confirmedAccount(app);
  const second = app.t.client();
  assert.equal((await second.post('/auth/login', { email, password: PASSWORD })).status, 200);
  assert.equal((await first.get('/me')).status, 200);
  const token = second.cookies.get(SESSION_COOKIE)!;

  const out = await second.post('/auth/logout', {});
  assert.equal(out.status, 200);
  assert.deepEqual(out.body, { success: true });
  assert.ok(
    out.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`) && /Max-Age=0/.test(c)),
    'the cookie is cleared',
  );
  const replay = app.t.client();
  replay.cookies.set(SESSION_COOKIE, token);
  assert.equal((await replay.get('/me')).status, 401, 'the logged-out token is dead server-side');
  assert.equal((await first.get('/me')).status, 200);
  assert.equal((await app.t.client().post('/auth/logout')).status, 200, 'logout without a session is fine');
});

test('sessions last 30 days, renewed on use', async () => {
  const { client } = await confirmedAccount(app);
  app.t.clock.advance(20 * DAY);
  const used = await client.get('/me');
  assert.equal(used.status, 200);
  assert.ok(
    used.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`)),
    'renewal re-sends the cookie',
  );
  app.t.clock.advance(20 * DAY);
  assert.equal((await client.get('/me')).status, 200, 'renewed 20 days ago');
  app.t.clock.advance(30 * DAY + SECOND);
  assert.equal((await client.get('/me')).status, 401);
  assert.equal((await client.get('/auth/session')).body.signed_in, false);
});

test('the Origin rule: session requests with a foreign or missing Origin are 403 invalid_origin', async () => {
  const { client } = await confirmedAccount(app);
  const foreignGet = await client.get('/me', { origin: EVIL });
  assert.equal(foreignGet.status, 403);
  assert.equal(foreignGet.body.error.code, 'invalid_origin');
  // It names the setting it compares with, and its value: the way out when the port changed.
  assert.equal(
    foreignGet.body.error.message,
    `The Origin header (${EVIL}) does not match server.public_url (${app.t.config.publicOrigin}); if this is the address you use, set server.public_url to it`,
  );
  assert.equal((await client.get('/me', { origin: null })).status, 200, 'a same-origin GET may omit Origin');
  const noOriginPatch = await client.patch('/me', { name: 'X' }, { origin: null });
  assert.equal(noOriginPatch.status, 403);
  assert.equal(noOriginPatch.body.error.code, 'invalid_origin');
  assert.equal((await client.patch('/me', { name: 'X' }, { origin: EVIL })).status, 403);
  const logout = await client.post('/auth/logout', {}, { origin: EVIL });
  assert.equal(logout.body.error.code, 'invalid_origin');
  const silentLogout = await client.post('/auth/logout', {}, { origin: null });
  assert.equal(silentLogout.body.error.code, 'invalid_origin', 'logout with a session cookie needs the Origin');
  assert.equal((await client.get('/me')).status, 200, 'still signed in');
});

test('login CSRF: a sign-in POST from a foreign Origin is refused; a client without Origin may sign in', async () => {
  const { email } = await confirmedAccount(app);
  const foreign = await app.t.client({ origin: EVIL }).post('/auth/login', { email, password: PASSWORD });
  assert.equal(foreign.status, 403);
  assert.equal(foreign.body.error.code, 'invalid_origin');
  assert.equal(foreign.headers.getSetCookie().length, 0);
  for (const path of ['/auth/register', '/auth/verify-email', '/auth/password/forgot', '/auth/password/reset', '/auth/google']) {
    const res = await app.t.client({ origin: EVIL }).post(path, {});
    assert.equal(res.status, 403, path);
  }
  assert.equal((await app.t.client({ origin: 'null' }).post('/auth/login', { email, password: PASSWORD })).status, 403);
  const cli = await app.t.client({ origin: null }).post('/auth/login', { email, password: PASSWORD });
  assert.equal(cli.status, 200);
});

test('an API key is refused on /me (session only)', async () => {
  const { merchantId } = await confirmedAccount(app);
  const { sha256Hex } = await import('../../src/lib/crypto.js');
  const secret = `gw_live_${'k'.repeat(43)}`;
  await app.t.deps.db
    .insertInto('api_keys')
    .values({
      id: 'key_test1',
      merchant_id: merchantId,
      name: 'k',
      prefix: secret.slice(0, 12),
      secret_hash: sha256Hex(secret),
      scopes: 'invoices:read',
      expires_in_days: null,
      created_at: app.t.clock.now(),
      last_used_at: null,
      revoked_at: null,
      expires_at: null,
      replaced_key_id: null,
    })
    .execute();
  const res = await app.t.client({ origin: null }).get('/me', { bearer: secret });
  assert.equal(res.status, 403);
  assert.equal(res.body.error.code, 'session_required');
  assert.equal((await app.t.client().get('/me')).status, 401);
});

test('https public_url: the session cookie and the registration cookie are Secure and __Host- prefixed', async () => {
  const secure = await startMailApp({ server: { public_url: 'https://pay.example.com' } });
  try {
    const registered = await secure.t.client().post('/auth/register', { email: uniqueEmail('secure'), password: PASSWORD });
    assert.ok(
      registered.headers.getSetCookie().some((c) => /^__Host-gw_reg=.*; Secure/i.test(c)),
      registered.headers.getSetCookie().join(' | '),
    );
    const { email } = await confirmedAccount(secure);
    const res = await secure.t.client().post('/auth/login', { email, password: PASSWORD });
    assert.equal(res.status, 200);
    assert.ok(res.headers.getSetCookie().some((c) => /^__Host-gw_session=.*Secure/.test(c)));
    const mail = secure.smtp.messages.find((m) => m.to.includes(email))!;
    assert.match(mail.text, /https:\/\/pay\.example\.com\/verify#verify=/);
  } finally {
    await secure.close();
  }
});

test('public_url written in capitals (HTTPS://...): the session and language cookies are still Secure', async () => {
  // Before public_url was normalised in config, the Secure flag came from a case-sensitive
  // startsWith('https:') on the raw value, so this configuration sent session cookies without it.
  const secure = await startMailApp({ server: { public_url: 'HTTPS://Pay.Example.COM/' } });
  try {
    const { email } = await confirmedAccount(secure);
    const res = await secure.t.client().post('/auth/login', { email, password: PASSWORD });
    assert.equal(res.status, 200);
    const session = res.headers.getSetCookie().find((c) => c.startsWith(`__Host-${SESSION_COOKIE}=`)) ?? '';
    assert.match(session, /; Secure/);
    const page = await fetch(`${secure.t.baseUrl}/login?lang=fr`, { headers: { accept: 'text/html' } });
    const lang = page.headers.getSetCookie().find((c) => /lang/.test(c)) ?? '';
    assert.match(lang, /=fr;.*Secure/);
    const mail = secure.smtp.messages.find((m) => m.to.includes(email))!;
    assert.match(mail.text, /https:\/\/pay\.example\.com\/verify#verify=/);
  } finally {
    await secure.close();
  }
});

test('rate limits: sign-in per address and per email (unknown emails count the same), registration and forgot; 429 with Retry-After', async () => {
  const limited = await startMailApp({ server: { trust_proxy: true }, rate_limits: { auth_per_ip: 3, auth_per_email: 2 } });
  try {
    const c = limited.t.client();
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
    const unknown = uniqueEmail('ghost');
    assert.equal((await c.post('/auth/login', { email: unknown, password: 'wrong password' }, from('10.0.0.1'))).status, 401);
    assert.equal((await c.post('/auth/login', { email: unknown, password: 'wrong password' }, from('10.0.0.2'))).status, 401);
    const perEmail = await c.post('/auth/login', { email: unknown, password: 'wrong password' }, from('10.0.0.3'));
    assert.equal(perEmail.status, 429);
    assert.equal(perEmail.body.error.code, 'rate_limited');
    assert.match(perEmail.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);

    for (let i = 0; i < 2; i++) assert.equal((await c.post('/auth/login', { email: uniqueEmail(), password: 'wrong password' }, from('10.0.0.9'))).status, 401);
    assert.equal((await c.post('/auth/login', { email: uniqueEmail(), password: 'wrong password' }, from('10.0.0.9'))).status, 401);
    assert.equal((await c.post('/auth/login', { email: uniqueEmail(), password: 'wrong password' }, from('10.0.0.9'))).status, 429, 'per address');

    const email = uniqueEmail();
    assert.equal((await c.post('/auth/register', { email, password: PASSWORD }, from('10.0.1.1'))).status, 201);
    assert.equal((await c.post('/auth/register', { email, password: PASSWORD }, from('10.0.1.2'))).status, 201);
    assert.equal((await c.post('/auth/register', { email, password: PASSWORD }, from('10.0.1.3'))).status, 429);
    assert.equal((await c.post('/auth/password/forgot', { email }, from('10.0.2.1'))).status, 202);
    assert.equal((await c.post('/auth/password/forgot', { email }, from('10.0.2.2'))).status, 202);
    assert.equal((await c.post('/auth/password/forgot', { email }, from('10.0.2.3'))).status, 429);

    for (const path of ['/auth/verify-email', '/auth/password/reset']) {
      const body = { token: 'A'.repeat(43), password: 'new password 1234' };
      const send = () => c.post(path, path.endsWith('reset') ? body : { token: body.token }, from('10.0.3.1'));
      for (let i = 0; i < 3; i++) assert.equal((await send()).body.error.code, 'invalid_token');
      assert.equal((await send()).status, 429, `${path}: per address (token guessing)`);
    }

    limited.t.clock.advance(60 * SECOND);
    assert.equal((await c.post('/auth/login', { email: unknown, password: 'wrong password' }, from('10.0.0.3'))).status, 401, 'refilled after a minute');
  } finally {
    await limited.close();
  }
});
