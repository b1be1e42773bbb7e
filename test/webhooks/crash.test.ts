import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { startTestApp, tempDir } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { onPostgres } from '../helpers/database.js';
import { HttpClient } from '../helpers/http.js';
import { startGateway } from '../helpers/process.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { openDatabase, writeTransaction } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { insertMerchant } from '../../src/accounts/merchants.repo.js';
import { createSession, SESSION_COOKIE } from '../../src/accounts/sessions.repo.js';
import { insertEvent } from '../../src/events/events.repo.js';
import { recoverAfterCrash } from '../../src/workers.js';
import { createDeliveryWorker } from '../../src/webhooks/webhooks.worker.js';
import { deliveryOf, registerWebhook, storeEvent, verifySignature } from './support.js';

test('crash recovery puts `sending` back to `pending`; a late outcome of the cut-off attempt is not recorded', async () => {
  const rx = await startHttpsReceiver();
  const t = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: 1 }) } });
  try {
    const owner = await signedInMerchant(t);
    const hook = await registerWebhook(owner.client, rx.url('/crash'));
    rx.answer('hang');
    const event = await storeEvent(t, owner.merchant.id);
    const before = createDeliveryWorker(t.deps);
    assert.equal(await before.runOnce(), true);
    await rx.waitFor(1);
    assert.equal((await deliveryOf(t, event.id, hook.id)).status, 'sending');

    // What `serve` does at start after a crash (here while the old attempt is still hanging).
    // On PostgreSQL another instance may still be sending: only a claim older than the time-out plus a minute is reset.
    t.clock.advance(onPostgres ? 62_000 : 5000);
    await recoverAfterCrash(t.deps);
    let d = await deliveryOf(t, event.id, hook.id);
    assert.equal(d.status, 'pending');
    assert.equal(d.attempts, 0);
    assert.equal(d.nextAttemptAt, t.clock.now());
    assert.match(t.logText(), /crash recovery: deliveries left in sending are pending again/);

    await before.idle();
    d = await deliveryOf(t, event.id, hook.id);
    assert.equal(d.status, 'pending', 'the old attempt ends after the reset and does not overwrite it');
    assert.equal(d.attempts, 0);

    rx.answer(200);
    await createDeliveryWorker(t.deps).drain();
    d = await deliveryOf(t, event.id, hook.id);
    assert.equal(d.status, 'delivered');
    assert.equal(rx.requests.length, 2, 'sent at least once: the cut-off attempt is sent again');
    assert.equal(rx.requests[1]!.headers['x-gateway-event-id'], event.id);
  } finally {
    await t.close();
    await rx.close();
  }
});

test('gatewayd killed (SIGKILL) mid-delivery: after restart the delivery is sent again and recorded', async () => {
  const rx = await startHttpsReceiver();
  const dir = tempDir('gatewayd-crash-');
  const dbPath = join(dir, 'gateway.db');
  // Prepare the database (a merchant with a session) before the first start.
  const db = openDatabase(dbPath);
  migrate(db.sqlite, Date.now());
  const merchant = await insertMerchant(db.db, { email: 'crash@example.test', name: 'Crash', passwordHash: null, emailVerifiedAt: Date.now() }, Date.now());
  const { token } = await createSession(db.db, merchant.id, Date.now());
  await db.close();

  const config = { webhooks: rx.webhookConfig({ timeout_seconds: 60 }), database: { path: dbPath } };
  let gw = await startGateway({ config, dir });
  try {
    const client = new HttpClient(gw.baseUrl, gw.baseUrl);
    client.cookies.set(SESSION_COOKIE, token);
    const hook = await registerWebhook(client, rx.url('/killed'));
    rx.answer('hang');

    // An event stored by another writer of the same database: the worker's poll finds it.
    const writer = openDatabase(dbPath);
    const event = await writeTransaction(writer.db, async (_trx, tx) =>
      insertEvent(tx, { merchantId: merchant.id, type: 'invoice.expired', data: { invoice: { id: 'inv_k' } } }, Date.now()),
    );
    await rx.waitFor(1, 10_000);
    const status = async () =>
      await writer.db.selectFrom('deliveries').select(['status', 'attempts']).where('event_id', '=', event.id).executeTakeFirstOrThrow();
    assert.equal((await status()).status, 'sending');

    await gw.kill();
    assert.equal((await status()).status, 'sending', 'the crash left it in flight');

    rx.answer(200);
    gw = await startGateway({ config, dir });
    await rx.waitFor(2, 10_000);
    const deadline = Date.now() + 10_000;
    while ((await status()).status !== 'delivered') {
      assert.ok(Date.now() < deadline, `still ${(await status()).status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await status()).attempts, 1);
    assert.ok(rx.requests.every((r) => r.headers['x-gateway-event-id'] === event.id));
    assert.ok(
      verifySignature(rx.requests[1]!, (await writer.db.selectFrom('webhooks').select('secret').where('id', '=', hook.id).executeTakeFirstOrThrow()).secret),
    );
    assert.match(gw.output(), /crash recovery/);
    await writer.close();
  } finally {
    await gw.stop();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
