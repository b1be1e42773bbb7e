/**
 * Several instances on one PostgreSQL database (issue 31): a shop's callback or a webhook delivery
 * that an instance claimed (`sending`) and never finished because that instance died is sent again
 * within one pass of the abandoned-claims worker (every 5 s), as soon as its claimer has no
 * connection to the database; one whose claimer is still connected is left to it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INSTANCE_NAME } from '../../src/db/database.js';
import { claimNotify } from '../../src/shops/shop-notifies.repo.js';
import { staleSendingWorker } from '../../src/workers.js';
import { onPostgres } from '../helpers/database.js';
import { registerWebhook } from '../webhooks/support.js';
import { connect, paidEpusdtOrder as paidOrder, startShopWorld } from './support.js';

const GONE = 'gatewayd 4242@a-machine-that-died';

test(
  'a callback or delivery left in sending by an instance that is gone is pending again at the next pass; one whose claimer is connected is not',
  { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (the claimers are the connections to a PostgreSQL database)' },
  async () => {
    const w = await startShopWorld();
    try {
      const { t } = w.h;
      const db = t.deps.db;
      await registerWebhook(w.merchant.client, w.rx.url('/hook'));
      const conn = await connect(w, { protocol: 'epusdt', allow_http_notify: true });
      const deadsInvoice = await paidOrder(w, conn, 'ORDER-DEAD');
      const livesInvoice = await paidOrder(w, conn, 'ORDER-LIVE');
      const now = t.clock.now();

      // This instance claims both callbacks (as its worker does), and records itself as the claimer.
      const notifies = await db.selectFrom('shop_notifies').select(['id', 'invoice_id']).execute();
      assert.equal(notifies.length, 2);
      for (const n of notifies) assert.ok(await claimNotify(db, n.id, ['pending'], now, false));
      const claimers = await db.selectFrom('shop_notifies').select('claimed_by').execute();
      assert.deepEqual(
        claimers.map((r) => r.claimed_by),
        [INSTANCE_NAME, INSTANCE_NAME],
      );
      // One callback and one delivery of each invoice were claimed a moment ago: one by an instance
      // that died since, the others by this one, which is still connected.
      const claimedBy = (invoiceId: string) => (invoiceId === deadsInvoice ? GONE : INSTANCE_NAME);
      for (const n of notifies)
        await db
          .updateTable('shop_notifies')
          .set({ claimed_by: claimedBy(n.invoice_id) })
          .where('id', '=', n.id)
          .execute();
      const deliveries = await db
        .selectFrom('deliveries')
        .innerJoin('events', 'events.id', 'deliveries.event_id')
        .select(['deliveries.id', 'events.invoice_id'])
        .where('events.type', '=', 'invoice.confirmed')
        .execute();
      assert.equal(deliveries.length, 2);
      for (const d of deliveries) {
        await db
          .updateTable('deliveries')
          .set({ status: 'sending', updated_at: now, claimed_by: claimedBy(d.invoice_id!) })
          .where('id', '=', d.id)
          .execute();
      }

      assert.equal(await staleSendingWorker(t.deps).runOnce(), false);

      const notifyStatus = await db.selectFrom('shop_notifies').select(['invoice_id', 'status']).execute();
      const deliveryStatus = await db
        .selectFrom('deliveries')
        .innerJoin('events', 'events.id', 'deliveries.event_id')
        .select(['events.invoice_id', 'deliveries.status', 'deliveries.next_attempt_at'])
        .where('events.type', '=', 'invoice.confirmed')
        .execute();
      const statusOf = (rows: Array<{ invoice_id: string | null; status: string }>, invoiceId: string) => rows.find((r) => r.invoice_id === invoiceId)?.status;
      assert.equal(statusOf(notifyStatus, deadsInvoice), 'pending', "the dead instance's callback is sent again at once");
      assert.equal(statusOf(deliveryStatus, deadsInvoice), 'pending', "the dead instance's delivery is sent again at once");
      assert.equal(statusOf(notifyStatus, livesInvoice), 'sending', "a live instance's callback is left to it");
      assert.equal(statusOf(deliveryStatus, livesInvoice), 'sending', "a live instance's delivery is left to it");
      assert.ok(deliveryStatus.every((r) => r.status === 'sending' || r.next_attempt_at === now));
    } finally {
      await w.close();
    }
  },
);
