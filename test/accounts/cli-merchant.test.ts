import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestApp, tempDir } from '../helpers/app.js';
import { runCli, writeConfig } from '../helpers/process.js';

test('merchant create: a confirmed account from the password on stdin, usable at once; refuses duplicates and bad input', async () => {
  const dir = tempDir();
  const dbPath = join(dir, 'data', 'gateway.db');
  const config = writeConfig(dir, { database: { path: dbPath }, server: { secret: 'cli-test-secret-0123456789' } });
  const password = 'operator chosen password';
  const created = runCli(['merchant', 'create', '--config', config, '--email', 'Owner@Shop.Example', '--name', 'Night Market'], { input: `${password}\n` });
  assert.equal(created.status, 0, created.stderr);
  assert.match(created.stdout, /created merchant mch_[A-Za-z0-9_-]+ <owner@shop\.example> "Night Market", email confirmed/);
  assert.match(created.stdout, /^sign in at http:\/\/\S+\/login$/m, 'the sign-in page, not the bare origin');
  assert.ok(!created.stdout.includes(password) && !created.stderr.includes(password));

  const again = runCli(['merchant', 'create', '--config', config, '--email', 'owner@shop.example'], { input: `${password}\n` });
  assert.equal(again.status, 1);
  assert.match(again.stderr, /already exists/);

  const short = runCli(['merchant', 'create', '--config', config, '--email', 'other@shop.example'], { input: 'too short\n' });
  assert.equal(short.status, 2);
  assert.match(short.stderr, /12 to 128/);
  const noEmail = runCli(['merchant', 'create', '--config', config], { input: `${password}\n` });
  assert.equal(noEmail.status, 2);
  assert.match(noEmail.stderr, /--email is required/);
  const badEmail = runCli(['merchant', 'create', '--config', config, '--email', 'nope'], { input: `${password}\n` });
  assert.equal(badEmail.status, 2);
  const badSub = runCli(['merchant', 'remove']);
  assert.equal(badSub.status, 2);
  assert.match(runCli(['--help']).stdout, /merchant create --email E/);

  // The same database served by the app: the account signs in without any mail.
  const t = await startTestApp({ config: { database: { path: dbPath } } });
  try {
    const res = await t.client().post('/auth/login', { email: 'owner@shop.example', password });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.merchant.name, 'Night Market');
  } finally {
    await t.close();
  }
});
