/**
 * A password reset ends an attacker's access even when the attacker acts while the reset is being
 * served: a sign-in with the old password, a password change made with it, and an API key made
 * with a stolen session, each started 0-10 ms after the owner's reset, through the real server.
 * Each race runs many times in a row: on the attacker's side one argon2id (15-20 ms) is the window.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { confirmedAccount, PASSWORD, startMailApp, type MailApp } from '../helpers/accounts.js';
import { fragmentToken } from '../helpers/smtp.js';
import type { HttpClient } from '../helpers/http.js';

const RUNS = 12;
const OWNER_PASSWORD = 'the owner took it back 2026';
const ATTACKER_PASSWORD = 'the attacker keeps it 2026';

let app: MailApp;
before(async () => {
  app = await startMailApp();
});
after(() => app.close());

/** A confirmed account whose password the attacker knows and holds a session of, and a reset link in the owner's mailbox. */
async function stolenAccount(): Promise<{ email: string; attacker: HttpClient; resetToken: string }> {
  const { email, client: attacker } = await confirmedAccount(app);
  const before = app.smtp.messages.length;
  assert.equal((await app.t.client().post('/auth/password/forgot', { email })).status, 202);
  const mail = await app.smtp.waitFor((m) => app.smtp.messages.indexOf(m) >= before && m.to.includes(email) && m.text.includes('#reset='));
  return { email, attacker, resetToken: fragmentToken(mail, 'reset') };
}

/** Starts the owner's reset, then the attacker's move `delayMs` later; both answers. */
async function race<T>(resetToken: string, delayMs: number, attack: () => Promise<T>, revoke = false) {
  const owner = app.t.client();
  const reset = owner.post('/auth/password/reset', { token: resetToken, password: OWNER_PASSWORD, revoke_api_keys_and_webhooks: revoke });
  await sleep(delayMs);
  const [resetAnswer, attackAnswer] = await Promise.all([reset, attack()]);
  assert.equal(resetAnswer.status, 200, resetAnswer.text);
  return { owner, attackAnswer };
}

test('a sign-in with the old password during a reset never leaves a working session', async () => {
  for (let run = 0; run < RUNS; run++) {
    const { email, resetToken } = await stolenAccount();
    const attacker = app.t.client();
    const { owner } = await race(resetToken, run % 11, () => attacker.post('/auth/login', { email, password: PASSWORD }));
    assert.equal((await attacker.get('/me')).status, 401, `run ${run}: the attacker's session must not work after the reset`);
    assert.equal((await owner.get('/me')).status, 200);
    assert.equal((await app.t.client().post('/auth/login', { email, password: PASSWORD })).status, 401);
  }
});

test('a password change with the old password during a reset never leaves the attacker the account', async () => {
  for (let run = 0; run < RUNS; run++) {
    const { email, attacker, resetToken } = await stolenAccount();
    await race(resetToken, run % 11, () => attacker.post('/me/password', { current_password: PASSWORD, new_password: ATTACKER_PASSWORD }));
    assert.equal((await app.t.client().post('/auth/login', { email, password: OWNER_PASSWORD })).status, 200, `run ${run}: the owner's new password works`);
    assert.equal((await app.t.client().post('/auth/login', { email, password: ATTACKER_PASSWORD })).status, 401, `run ${run}: the attacker's does not`);
    assert.equal((await attacker.get('/me')).status, 401, `run ${run}: nor the attacker's session`);
  }
});

test('an API key made with a stolen session during a reset that revokes keys never works afterwards', async () => {
  for (let run = 0; run < RUNS; run++) {
    const { attacker, resetToken } = await stolenAccount();
    const { attackAnswer } = await race(resetToken, run % 6, () => attacker.post('/api-keys', { name: 'mine' }), true);
    if (attackAnswer.status === 201) {
      const use = await app.t.client().get('/invoices', { bearer: attackAnswer.body.secret });
      assert.equal(use.status, 401, `run ${run}: a key made during the reset is revoked by it`);
    } else assert.equal(attackAnswer.status, 401, attackAnswer.text);
  }
});
