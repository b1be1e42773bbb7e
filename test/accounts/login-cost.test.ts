/**
 * Sign-in on an unconfirmed address costs one argon2id whatever the number of live registrations:
 * the registrations of an address share one salt, so the server hashes the typed password once and
 * compares. Timing itself is measured by bench/accounts-login-timing.ts; here, the shape that makes
 * it so, and that every registration's password is still recognised.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PASSWORD, startMailApp, uniqueEmail, type MailApp } from '../helpers/accounts.js';

let app: MailApp;
before(async () => {
  app = await startMailApp();
});
after(() => app.close());

const registrationHashes = (email: string) =>
  app.t.deps.db
    .selectFrom('registrations as r')
    .innerJoin('merchants as m', 'm.id', 'r.merchant_id')
    .select('r.password_hash')
    .where('m.email', '=', email)
    .execute();

test('five competing registrations: one salt for all, each password still answers 403 email_not_verified, a wrong one 401', async () => {
  const email = uniqueEmail('competing');
  for (let i = 0; i < 5; i++) assert.equal((await app.t.client().post('/auth/register', { email, password: `${PASSWORD} ${i}` })).status, 201);
  const rows = await registrationHashes(email);
  assert.equal(rows.length, 5);
  const salts = new Set(rows.map((r) => r.password_hash.split('$')[4]));
  assert.equal(salts.size, 1, 'one salt per address: a sign-in hashes once and compares with every registration');
  for (let i = 0; i < 5; i++) {
    const res = await app.t.client().post('/auth/login', { email, password: `${PASSWORD} ${i}` });
    assert.equal(res.status, 403, `registration ${i}`);
    assert.equal(res.body.error.code, 'email_not_verified');
  }
  assert.equal((await app.t.client().post('/auth/login', { email, password: 'not one of them at all' })).status, 401);
  // Another address gets another salt.
  const other = uniqueEmail('other');
  assert.equal((await app.t.client().post('/auth/register', { email: other, password: PASSWORD })).status, 201);
  const [otherRow] = await registrationHashes(other);
  assert.ok(!salts.has(otherRow!.password_hash.split('$')[4]));
});
