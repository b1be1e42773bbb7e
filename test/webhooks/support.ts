/** Shared steps of the webhook tests: a receiver-backed app, events, and independent signature checks. */
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeTransaction } from '../../src/db/database.js';
import { insertEvent, type EventType, type StoredEvent } from '../../src/events/events.repo.js';
import { findDeliveryById, type Delivery } from '../../src/webhooks/webhooks.repo.js';
import type { TestApp } from '../helpers/app.js';
import type { HttpClient } from '../helpers/http.js';
import type { ReceivedRequest } from '../helpers/https-receiver.js';

/** What a receiver does, written from the spec alone (not with our signer). */
export function verifySignature(req: ReceivedRequest, secret: string): boolean {
  const timestamp = String(req.headers['x-gateway-timestamp']);
  const header = String(req.headers['x-gateway-signature']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${req.rawBody}`).digest('hex')}`;
  return header.length === expected.length && timingSafeEqual(Buffer.from(header), Buffer.from(expected));
}

export async function registerWebhook(client: HttpClient, url: string): Promise<{ id: string; secret: string }> {
  const res = await client.post('/webhooks', { url });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.webhook.id, secret: res.body.secret };
}

export async function storeEvent(t: TestApp, merchantId: string, type: EventType = 'invoice.created', data: Record<string, unknown> = { invoice: { id: 'inv_test' } }): Promise<StoredEvent> {
  return writeTransaction(t.deps.db, async (_trx, tx) => insertEvent(tx, { merchantId, type, data }, t.clock.now()));
}

export async function deliveriesOf(t: TestApp, eventId: string): Promise<Delivery[]> {
  const rows = await t.deps.db.selectFrom('deliveries').select('id').where('event_id', '=', eventId).execute();
  return Promise.all(rows.map(async (r) => (await findDeliveryById(t.deps.db, r.id))!));
}

export async function deliveryOf(t: TestApp, eventId: string, webhookId: string): Promise<Delivery> {
  const row = await t.deps.db.selectFrom('deliveries').select('id').where('event_id', '=', eventId).where('webhook_id', '=', webhookId).executeTakeFirstOrThrow();
  return (await findDeliveryById(t.deps.db, row.id))!;
}
