import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOnce as sendNotices } from '../../src/payments/payment-notices.js';
import { translate } from '../../src/lib/i18n.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { pass, startChainHarness, transfersOf } from '../helpers/chain-fixtures.js';
import { startSmtp } from '../helpers/smtp.js';
import { randomAddress } from '../helpers/tron-samples.js';
import { addWallet, ADDRESSES, createInvoice, micro, shop } from '../helpers/shop.js';

const EVIL = '<b>EVIL-TEXT</b> call +1 555 0100';

test('payment notices: one mail per owner for unmatched and late payments, queued with the transfer, retried until accepted, never twice, nothing typed by others', async () => {
  const smtp = await startSmtp();
  const h = await startChainHarness({ config: { email: smtp.email } });
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    await t.deps.db.updateTable('merchants').set({ locale: 'fa' }).where('id', '=', a.merchant.id).execute();
    // B shares A's address (ownership is never verified) under a label of its own.
    const b = await shop(t, ADDRESSES[1], 'Shop B');
    await addWallet(b.client, ADDRESSES[0], EVIL);
    const inv = (
      await createInvoice(a.client, { amount: '25', wallet_id: a.walletId, expires_in_minutes: 30, merchant_order_id: 'ORD-EVIL-1', description: EVIL })
    ).body.invoice;
    const paid = (await createInvoice(a.client, { amount: '7', wallet_id: a.walletId })).body.invoice;

    const wrong = tg.pay({ to: ADDRESSES[0], amount: 25_000_000n, blockTimestamp: t.clock.now() + 10 * SECOND });
    tg.pay({ to: ADDRESSES[0], amount: 1n, blockTimestamp: t.clock.now() + 11 * SECOND }); // dust: no mail
    tg.pay({ to: ADDRESSES[0], amount: micro(paid.payable_amount), blockTimestamp: t.clock.now() + 12 * SECOND });
    tg.pay({ to: randomAddress(), amount: 25_000_000n, blockTimestamp: t.clock.now() + 13 * SECOND }); // someone else's
    await pass(h, 2 * MINUTE);
    assert.equal((await a.client.get(`/invoices/${paid.id}`)).body.invoice.status, 'confirmed', 'an exact payment confirms and is not told of');
    const notices = () => t.deps.db.selectFrom('payment_notices').selectAll().orderBy('merchant_id').execute();
    const wrongId = (await transfersOf(t)).find((r) => r.tx_hash === wrong.txId)!.id;
    assert.deepEqual(
      (await notices()).map((n) => [n.transfer_id, n.merchant_id, n.sent_at]).sort(),
      [
        [wrongId, a.merchant.id, null],
        [wrongId, b.merchant.id, null],
      ].sort(),
      'queued with the transfer, for each owner of the address',
    );

    // The mail server refuses: nothing is lost, the notice waits and is tried again later.
    smtp.reject('rcpt');
    assert.equal(await sendNotices(t.deps), false);
    assert.equal(smtp.messages.length, 0);
    assert.ok((await notices()).every((n) => n.sent_at === null && n.attempts === 1));
    smtp.reject(false);
    await sendNotices(t.deps);
    assert.equal(smtp.messages.length, 0, 'not before its pause');
    t.clock.advance(MINUTE);
    await sendNotices(t.deps);
    assert.equal(smtp.messages.length, 2);
    const toA = smtp.messages.find((m) => m.to.includes(a.merchant.email))!;
    const toB = smtp.messages.find((m) => m.to.includes(b.merchant.email))!;
    assert.equal(toA.subject, translate('fa', 'email.payment.subject', { count: '1' }), "in the owner's language");
    assert.equal(toB.subject, translate('en', 'email.payment.subject', { count: '1' }));
    for (const mail of [toA, toB]) {
      assert.ok(mail.text.includes('25.000000 USDT'), mail.text);
      assert.ok(mail.text.includes(wrong.txId));
      assert.ok(mail.text.includes(`${t.config.server.public_url}/console/transfers`));
      // The owner's own business name greets them; nothing typed by a payer, an integrator or another tenant.
      for (const typed of ['EVIL', 'ORD-EVIL-1', 'Main']) assert.ok(!mail.raw.includes(typed), `${typed} is not in the mail`);
    }
    // Never twice: another pass, and the same transfer seen again, send nothing.
    await sendNotices(t.deps);
    await pass(h, 2 * MINUTE);
    t.clock.advance(10 * MINUTE);
    await sendNotices(t.deps);
    assert.equal(smtp.messages.length, 2);

    // A late payment is told to the invoice's owner only.
    t.clock.advance(30 * MINUTE);
    await pass(h, 2 * MINUTE);
    assert.equal((await a.client.get(`/invoices/${inv.id}`)).body.invoice.status, 'expired');
    await createInvoice(a.client, { amount: '1', wallet_id: a.walletId, expires_in_minutes: 60 }); // keeps the address watched
    const late = tg.pay({ to: ADDRESSES[0], amount: 25_000_001n, blockTimestamp: t.clock.now() });
    await pass(h, 2 * MINUTE);
    await sendNotices(t.deps);
    assert.equal(smtp.messages.length, 3);
    const lateMail = smtp.messages[2]!;
    assert.deepEqual(lateMail.to, [a.merchant.email]);
    assert.ok(
      lateMail.text.includes(translate('fa', 'email.payment.late', { amount: '25.000001', address: ADDRESSES[0], invoice: inv.id, tx: late.txId })),
      lateMail.text,
    );
    assert.ok(!lateMail.raw.includes('EVIL'));
  } finally {
    await h.close();
    await smtp.close();
  }
});

test('payment notices off (email.payment_notices = false, or no SMTP): nothing is queued', async () => {
  const smtp = await startSmtp();
  for (const email of [{ ...smtp.email, payment_notices: false }, {}]) {
    const h = await startChainHarness({ config: { email } });
    try {
      const a = await shop(h.t, ADDRESSES[0], 'Shop A');
      await createInvoice(a.client, { amount: '25', wallet_id: a.walletId });
      h.tg.pay({ to: ADDRESSES[0], amount: 25_000_000n, blockTimestamp: h.t.clock.now() + 10 * SECOND });
      await pass(h, 2 * MINUTE);
      assert.equal((await transfersOf(h.t)).filter((r) => r.kind === 'unmatched').length, 1);
      assert.equal((await h.t.deps.db.selectFrom('payment_notices').selectAll().execute()).length, 0, JSON.stringify(email));
      await sendNotices(h.t.deps);
      assert.equal(smtp.messages.length, 0);
    } finally {
      await h.close();
    }
  }
  await smtp.close();
});
