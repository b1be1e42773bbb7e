import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTransaction } from '../../src/db/database.js';
import type { InvoiceStatus } from '../../src/db/schema.js';
import { INVOICE_STATUSES, INVOICE_TRANSITIONS, isAllowedMove, OPEN_STATUSES } from '../../src/invoices/invoice.states.js';
import { cancelOpenInvoice, isOpen, moveReviewedInvoice } from '../../src/invoices/invoices.repo.js';
import { confirmByResolution } from '../../src/invoices/resolutions.repo.js';
import { startTestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, payOnChain, shop } from '../helpers/shop.js';
import { micros } from '../../src/lib/amounts.js';

test('the state machine: confirmed is final, every step writes a known status, open means pending or review', () => {
  for (const to of INVOICE_STATUSES) assert.equal(isAllowedMove('confirmed', to), false, `confirmed -> ${to}`);
  assert.equal(isAllowedMove('pending', 'review'), false, 'a pending invoice never goes to review by itself');
  assert.equal(isAllowedMove('expired', 'pending'), false, 'nothing reopens an invoice');
  assert.equal(isAllowedMove('pending', 'confirmed'), true);
  assert.equal(isAllowedMove('review', 'expired'), true);
  for (const [step, t] of Object.entries(INVOICE_TRANSITIONS)) {
    assert.ok((INVOICE_STATUSES as readonly InvoiceStatus[]).includes(t.to), step);
    assert.ok(t.from.length > 0, step);
  }
  assert.deepEqual([...OPEN_STATUSES], [...INVOICE_TRANSITIONS.cancel.from]);
  assert.deepEqual([...OPEN_STATUSES], [...INVOICE_TRANSITIONS.expire.from]);
});

test('isOpen stays literal SQL (the partial index invoices_open_idx needs it) and follows OPEN_STATUSES', async () => {
  const t = await startTestApp();
  try {
    const compiled = t.deps.db.selectFrom('invoices').select('id').where(isOpen('status')).compile();
    assert.match(compiled.sql, /"status" in \('pending', 'review'\)/);
    assert.deepEqual(compiled.parameters, []);
  } finally {
    await t.close();
  }
});

test('an illegal transition is refused by the guarded update and changes nothing', async () => {
  const t = await startTestApp();
  try {
    const s = await shop(t, ADDRESSES[0]);
    const inv = (await createInvoice(s.client, { amount: '7', wallet_id: s.walletId })).body.invoice;
    const status = async () => (await t.deps.db.selectFrom('invoices').select('status').where('id', '=', inv.id).executeTakeFirstOrThrow()).status;

    // pending -> confirmed by the owner's "accept" is not a move of the table (accept starts from review).
    assert.equal(await writeTransaction(t.deps.db, (trx) => moveReviewedInvoice(trx, inv.id, 'accept', t.clock.now())), false);
    assert.equal(await status(), 'pending');

    // Paid: confirmed is final; cancel, reject and a resolution are all refused.
    await payOnChain(t, s.address, inv.payable_amount, { txHash: 'cd'.repeat(32), blockTimestamp: t.clock.now() + 1000 });
    assert.equal(await status(), 'confirmed');
    assert.equal(await writeTransaction(t.deps.db, (trx) => cancelOpenInvoice(trx, inv.id, t.clock.now())), false);
    assert.equal(await writeTransaction(t.deps.db, (trx) => moveReviewedInvoice(trx, inv.id, 'reject', null)), false);
    assert.equal(
      await writeTransaction(t.deps.db, (trx) =>
        confirmByResolution(trx, inv.id, 'ef'.repeat(32), micros(1n), t.clock.now(), { resolution: 'manual', addToReceived: true }),
      ),
      false,
    );
    assert.equal(await status(), 'confirmed');
    // And over HTTP: the documented envelope, nothing changed.
    const res = await s.client.post(`/invoices/${inv.id}/cancel`, {});
    assert.equal(res.status, 409, res.text);
    assert.equal(await status(), 'confirmed');
  } finally {
    await t.close();
  }
});
