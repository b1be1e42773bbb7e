import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOnce } from '../../src/accounts/accounts.worker.js';
import { createSession } from '../../src/accounts/sessions.repo.js';
import { writeTransaction } from '../../src/db/database.js';
import { issueVerifyToken } from '../../src/accounts/email-tokens.repo.js';
import { recordResetRequest } from '../../src/accounts/password-resets.repo.js';
import { insertRegistration } from '../../src/accounts/registrations.repo.js';
import { DAY, HOUR } from '../../src/lib/clock.js';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';

test('the cleanup worker deletes expired sessions, links, registrations and reset requests, and keeps live ones', async () => {
  const t = await startTestApp();
  try {
    const { merchant } = await signedInMerchant(t);
    const count = async (table: 'sessions' | 'email_tokens' | 'registrations' | 'password_resets') =>
      Number(
        (
          await t.deps.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    await writeTransaction(t.deps.db, async (trx) => {
      assert.ok(await recordResetRequest(trx, merchant.email, merchant.id, t.clock.now()));
      assert.ok(await recordResetRequest(trx, 'nobody@nowhere.example', null, t.clock.now()));
      const registration = await insertRegistration(trx, merchant.id, { passwordHash: 'x', name: 'n', locale: 'en' }, t.clock.now());
      await issueVerifyToken(trx, merchant.id, registration!, t.clock.now());
    });
    assert.equal(await count('password_resets'), 2);
    t.clock.advance(2 * HOUR);
    await createSession(t.deps.db, merchant.id, t.clock.now());
    await runOnce(t.deps);
    assert.equal(await count('password_resets'), 0, 'the 1-hour reset requests are gone, for an account or not');
    assert.equal(await count('email_tokens'), 1, 'the 24-hour link stays');
    assert.equal(await count('registrations'), 1);
    assert.equal(await count('sessions'), 2);
    t.clock.advance(30 * DAY - HOUR);
    await runOnce(t.deps);
    assert.equal(await count('email_tokens'), 0);
    assert.equal(await count('registrations'), 0);
    assert.equal(await count('sessions'), 1, 'the first session (30 days) expired; the later one lives');
  } finally {
    await t.close();
  }
});
