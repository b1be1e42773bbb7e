/** Shared steps of the webhook tests: a receiver-backed app, events, and independent signature checks. */
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeTransaction } from '../../src/db/database.js';
import { insertEvent, type EventType, type StoredEvent } from '../../src/events/events.repo.js';
import { findDeliveryById, type Delivery } from '../../src/webhooks/webhooks.repo.js';
import { before, after, beforeEach } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js';
import type { HttpClient } from '../helpers/http.js';

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

export async function storeEvent(
  t: TestApp,
  merchantId: string,
  type: EventType = 'invoice.created',
  data: Record<string, unknown> = { invoice: { id: 'inv_test' } },
): Promise<StoredEvent> {
  return writeTransaction(t.deps.db, async (_trx, tx) => insertEvent(tx, { merchantId, type, data }, t.clock.now()));
}

export async function deliveriesOf(t: TestApp, eventId: string): Promise<Delivery[]> {
  const rows = await t.deps.db.selectFrom('deliveries').select('id').where('event_id', '=', eventId).execute();
  return Promise.all(rows.map(async (r) => (await findDeliveryById(t.deps.db, r.id))!));
}

export async function deliveryOf(t: TestApp, eventId: string, webhookId: string): Promise<Delivery> {
  const row = await t.deps.db
    .selectFrom('deliveries')
    .select('id')
    .where('event_id', '=', eventId)
    .where('webhook_id', '=', webhookId)
    .executeTakeFirstOrThrow();
  return (await findDeliveryById(t.deps.db, row.id))!;
}

/** The app of a webhook test file: a real HTTPS receiver, the app delivering to it, a signed-in owner (before/after/beforeEach set up here). */
export function receiverAppForFile(): { readonly rx: HttpsReceiver; readonly t: TestApp; readonly owner: SignedIn } {
  const state = {} as { rx: HttpsReceiver; t: TestApp; owner: SignedIn };
  before(async () => {
    state.rx = await startHttpsReceiver();
    state.t = await startTestApp({ config: { webhooks: state.rx.webhookConfig({ timeout_seconds: 2 }) } });
    state.owner = await signedInMerchant(state.t);
  });
  after(async () => {
    await state.t.close();
    await state.rx.close();
  });
  beforeEach(() => {
    state.rx.answer(200);
    state.rx.requests.length = 0;
  });
  return state;
}
