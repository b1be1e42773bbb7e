import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { writeTransaction } from '../../src/db/database.js';
import { allocateReference, randomReference } from '../../src/support/support.repo.js';

test('randomReference: prefix, dash, 10 of A-Z0-9, every character reachable', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const ref = randomReference('SUP');
    assert.match(ref, /^SUP-[A-Z0-9]{10}$/);
    for (const ch of ref.slice(4)) seen.add(ch);
  }
  assert.equal(seen.size, 36);
});

test('randomReference skips bytes that would bias the alphabet', () => {
  // 252..255 are dropped; 0 -> A, 35 -> 9, 36 -> A again.
  const bytes = Buffer.from([252, 253, 254, 255, 0, 35, 36, 71, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(
    randomReference('X', () => bytes),
    'X-A9A9BCDEFG',
  );
});

test('allocateReference draws again when a reference is taken', async () => {
  const t = await startTestApp();
  try {
    const now = t.clock.now();
    await t.deps.db
      .insertInto('support_tickets')
      .values({
        id: 'tkt_taken',
        reference: 'SUP-AAAAAAAAAA',
        source: 'contact',
        category: 'general',
        status: 'open',
        subject: 's',
        merchant_id: null,
        name: 'n',
        email: 'n@example.org',
        chat_token_hash: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const draws = ['SUP-AAAAAAAAAA', 'SUP-AAAAAAAAAA', 'SUP-BBBBBBBBBB'];
    const got = await writeTransaction(t.deps.db, (trx) => allocateReference(trx, 'SUP', () => draws.shift()!));
    assert.equal(got, 'SUP-BBBBBBBBBB');
    assert.equal(draws.length, 0);
    // Ten collisions in a row is a broken random source, not bad luck: fail loudly.
    await assert.rejects(
      writeTransaction(t.deps.db, (trx) => allocateReference(trx, 'SUP', () => 'SUP-AAAAAAAAAA')),
      /free support reference/,
    );
    // The unique index is the last line of defence.
    await assert.rejects(
      t.deps.db
        .insertInto('support_tickets')
        .values({
          id: 'tkt_dup',
          reference: 'SUP-AAAAAAAAAA',
          source: 'contact',
          category: 'general',
          status: 'open',
          subject: 's',
          merchant_id: null,
          name: 'n',
          email: 'n@example.org',
          chat_token_hash: null,
          created_at: now,
          updated_at: now,
        })
        .execute(),
      /UNIQUE|duplicate key/,
    );
  } finally {
    await t.close();
  }
});

test('the schema refuses a ticket whose source and owner disagree', async () => {
  const t = await startTestApp();
  try {
    const now = t.clock.now();
    const base = { category: 'general' as const, status: 'open' as const, subject: 's', created_at: now, updated_at: now };
    // A chat without a token, and a contact ticket with a merchant: both refused.
    await assert.rejects(
      t.deps.db
        .insertInto('support_tickets')
        .values({ ...base, id: 'tkt_a', reference: 'SUP-CCCCCCCCCC', source: 'chat', merchant_id: null, name: 'n', email: 'e@x.io', chat_token_hash: null })
        .execute(),
      /CHECK|check constraint/,
    );
    await assert.rejects(
      t.deps.db
        .insertInto('support_tickets')
        .values({ ...base, id: 'tkt_b', reference: 'SUP-DDDDDDDDDD', source: 'dashboard', merchant_id: null, name: null, email: null, chat_token_hash: null })
        .execute(),
      /CHECK|check constraint/,
    );
  } finally {
    await t.close();
  }
});
