/**
 * Concurrency (issue 11) against the real `gatewayd serve`: simultaneous creations across many
 * merchants sharing few addresses and one price; parallel retries of one idempotency key; a key
 * rolled while in use; a webhook deleted while its deliveries are in flight. Nothing duplicated,
 * nothing lost, no 5xx.
 */
import { test } from 'node:test';
import { startGateway } from '../helpers/process.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { HttpClient, type HttpResponse } from '../helpers/http.js';
import {
  checkNoUnhandledErrors,
  duplicatePayables,
  integrityOk,
  prepareDatabase,
  type PreparedMerchant,
  reader,
  sessionClient,
  size,
  sleep,
  Tally,
  teardown,
} from './harness.js';

test(
  'concurrency: simultaneous creations, one key retried in parallel, a key rolled in use, a webhook deleted mid-delivery',
  { timeout: 600_000 },
  async () => {
    const tally = new Tally('concurrency');
    const rx = await startHttpsReceiver();
    const prepared = await prepareDatabase(12, {
      addresses: ['TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx', 'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi'],
    });
    const merchants = prepared.merchants;
    const gw = await startGateway({
      dir: prepared.dir,
      config: {
        database: { path: prepared.dbPath },
        webhooks: rx.webhookConfig({ timeout_seconds: 2 }),
        rate_limits: { api_per_key: 0, invoices_per_merchant: 0 },
        log: { level: 'warn' },
      },
    });
    const db = reader(prepared.dbPath);
    const anon = new HttpClient(gw.baseUrl, null);
    const countInvoices = () => (db.prepare('SELECT COUNT(*) AS n FROM invoices').get() as { n: number }).n;
    const post = async (m: PreparedMerchant | string, key: string, body: Record<string, unknown>): Promise<HttpResponse | undefined> => {
      tally.requests += 1;
      try {
        return await anon.post('/invoices', body, { bearer: typeof m === 'string' ? m : m.key, headers: { 'idempotency-key': key } });
      } catch (err) {
        tally.check(false, `POST /invoices ${key}: no answer ${String(err)}`);
        return undefined;
      }
    };
    try {
      // 1. Simultaneous creations: many merchants, three addresses, one price.
      const total = size(600, 3000);
      const wave = size(600, 1000);
      const created = new Map<string, { payable: string; address: string }>();
      for (let start = 0; start < total; start += wave) {
        const answers = await Promise.all(
          Array.from({ length: Math.min(wave, total - start) }, (_, i) => {
            const m = merchants[(start + i) % merchants.length]!;
            const key = `burst-${start + i}`;
            return post(m, key, { merchant_order_id: key, amount: '10', wallet_id: m.walletId }).then((res) => ({ res, key }));
          }),
        );
        for (const { res, key } of answers) {
          if (!res) continue;
          tally.check(res.status === 201, `burst ${key}: ${res.status} ${res.text.slice(0, 160)}`);
          if (res.status === 201) created.set(res.body.invoice.id, { payable: res.body.invoice.payable_amount, address: res.body.invoice.wallet_address });
        }
      }
      tally.check(created.size === total, `burst: ${created.size} of ${total} created`);
      tally.check(countInvoices() === created.size, `burst: ${countInvoices()} invoices stored for ${created.size} answered`);
      tally.check(duplicatePayables(db) === 0, 'burst: a payable amount is used twice on one address');
      const answeredPairs = new Set([...created.values()].map((c) => `${c.address}/${c.payable}`));
      tally.check(answeredPairs.size === created.size, 'burst: two answers share an address and a payable amount');
      tally.count('burst_creations', created.size);

      // 2. Parallel retries of one idempotency key (same body), and of one key with different bodies.
      const m0 = merchants[0]!;
      const retries = await Promise.all(
        Array.from({ length: size(40, 200) }, () => post(m0, 'retry-key', { merchant_order_id: 'retry-order', amount: '7.5', wallet_id: m0.walletId })),
      );
      const ids = new Set(retries.filter((r) => r && (r.status === 200 || r.status === 201)).map((r) => r!.body.invoice.id as string));
      tally.check(
        retries.every((r) => r && (r.status === 200 || r.status === 201)),
        `retries: statuses ${[...new Set(retries.map((r) => r?.status))].join(',')}`,
      );
      tally.check(ids.size === 1, `retries of one key made ${ids.size} invoices`);
      tally.check(retries.filter((r) => r?.status === 201).length === 1, `retries: ${retries.filter((r) => r?.status === 201).length} answers were 201`);
      tally.check(
        retries.filter((r) => r?.status === 200).every((r) => r!.body.idempotent_replay === true),
        'retries: a 200 is not flagged idempotent_replay',
      );
      const clash = await Promise.all(
        Array.from({ length: 20 }, (_, i) => post(m0, 'clash-key', { merchant_order_id: 'clash-order', amount: `${i + 1}`, wallet_id: m0.walletId })),
      );
      tally.check(clash.filter((r) => r?.status === 201).length === 1, `clash: ${clash.filter((r) => r?.status === 201).length} created`);
      tally.check(
        clash.every((r) => r && (r.status === 201 || (r.status === 409 && r.body.error.code === 'idempotency_key_reused'))),
        `clash: statuses ${[...new Set(clash.map((r) => `${r?.status}:${r?.body?.error?.code ?? ''}`))].join(',')}`,
      );
      const rowsForKey = db
        .prepare('SELECT COUNT(*) AS n FROM invoices WHERE merchant_id = ? AND idempotency_key IN (?, ?)')
        .get(m0.id, 'retry-key', 'clash-key') as { n: number };
      tally.check(rowsForKey.n === 2, `one invoice per key, found ${rowsForKey.n}`);

      // 3. A key rolled while in use: every request is 201 (old key before the roll, new key after) or 401.
      const m1 = merchants[1]!;
      const owner = sessionClient(gw.baseUrl, m1);
      let rolling = true;
      const outcomes: Array<{ status: number; id?: string; afterRoll: boolean }> = [];
      let rolledAt = Infinity;
      const user = async (lane: number) => {
        for (let i = 0; rolling; i++) {
          const key = `roll-${lane}-${i}`;
          const sentAfter = Date.now() > rolledAt;
          const res = await post(m1.key, key, { merchant_order_id: key, amount: '3', wallet_id: m1.walletId });
          if (res) outcomes.push({ status: res.status, id: res.body?.invoice?.id, afterRoll: sentAfter });
        }
      };
      const lanes = [user(0), user(1), user(2), user(3)];
      await sleep(300);
      const rolled = await owner.post(`/api-keys/${m1.keyId}/roll`, {});
      rolledAt = Date.now();
      tally.requests += 1;
      tally.check(rolled.status === 201, `roll: ${rolled.status} ${rolled.text.slice(0, 160)}`);
      const newSecret = rolled.body.secret as string;
      await sleep(300);
      rolling = false;
      await Promise.all(lanes);
      tally.check(
        outcomes.every((o) => o.status === 201 || o.status === 401),
        `roll: statuses ${[...new Set(outcomes.map((o) => o.status))].join(',')}`,
      );
      tally.check(
        outcomes.filter((o) => o.afterRoll).every((o) => o.status === 401),
        'roll: the old key still worked after the roll answered',
      );
      for (const o of outcomes.filter((x) => x.status === 201))
        tally.check(db.prepare('SELECT 1 FROM invoices WHERE id = ?').get(o.id) !== undefined, `roll: answered invoice ${o.id} missing`);
      const withNew = await post(newSecret, 'after-roll', { merchant_order_id: 'after-roll', amount: '3', wallet_id: m1.walletId });
      tally.check(withNew?.status === 201, `the rolled key works: ${withNew?.status}`);
      const activeKeys = db.prepare('SELECT COUNT(*) AS n FROM api_keys WHERE merchant_id = ? AND revoked_at IS NULL').get(m1.id) as { n: number };
      tally.check(activeKeys.n === 1, `after the roll ${activeKeys.n} keys are active`);
      tally.count('roll_requests', outcomes.length);

      // 3b. Parallel rolls of one key: one new key, the others find the old one revoked (404).
      const m3 = merchants[3]!;
      const rolls = await Promise.all(Array.from({ length: 10 }, () => sessionClient(gw.baseUrl, m3).post(`/api-keys/${m3.keyId}/roll`, {})));
      tally.requests += rolls.length;
      tally.check(
        rolls.filter((r) => r.status === 201).length === 1 && rolls.every((r) => r.status === 201 || r.status === 404),
        `parallel rolls: ${rolls.map((r) => r.status).join(',')}`,
      );
      const m3Active = db.prepare('SELECT COUNT(*) AS n FROM api_keys WHERE merchant_id = ? AND revoked_at IS NULL').get(m3.id) as { n: number };
      tally.check(m3Active.n === 1, `parallel rolls left ${m3Active.n} active keys`);

      // 4. A webhook deleted while its deliveries are in flight (the receiver hangs).
      const m2 = merchants[2]!;
      const s2 = sessionClient(gw.baseUrl, m2);
      rx.answer('hang');
      const hook = (await s2.post('/webhooks', { url: rx.url('/slow') })).body.webhook;
      await Promise.all(Array.from({ length: 30 }, (_, i) => post(m2, `hook-${i}`, { merchant_order_id: `hook-${i}`, amount: '2', wallet_id: m2.walletId })));
      await rx.waitFor(1, 10_000).catch(() => undefined);
      const deleted = await s2.delete(`/webhooks/${hook.id}`);
      tally.requests += 1;
      tally.check(deleted.status === 200, `delete webhook: ${deleted.status}`);
      const inFlight = (db.prepare("SELECT COUNT(*) AS n FROM deliveries WHERE webhook_id = ? AND status = 'sending'").get(hook.id) as { n: number }).n;
      const seenAtDelete = rx.requests.length;
      const pendingLeft = (db.prepare("SELECT COUNT(*) AS n FROM deliveries WHERE webhook_id = ? AND status = 'pending'").get(hook.id) as { n: number }).n;
      tally.check(pendingLeft === 0, `delete: ${pendingLeft} deliveries still pending`);
      rx.answer(200);
      await sleep(4000); // the attempts in flight time out (2 s)
      const stuck = db.prepare('SELECT status, COUNT(*) AS n FROM deliveries WHERE webhook_id = ? GROUP BY status').all(hook.id) as Array<{
        status: string;
        n: number;
      }>;
      tally.check(!stuck.some((s) => s.status === 'sending' || s.status === 'pending'), `after delete: ${JSON.stringify(stuck)}`);
      tally.check(rx.requests.length - seenAtDelete <= inFlight, `after delete: ${rx.requests.length - seenAtDelete} new requests, ${inFlight} were in flight`);
      const total30 = (db.prepare('SELECT COUNT(*) AS n FROM deliveries WHERE webhook_id = ?').get(hook.id) as { n: number }).n;
      tally.check(total30 === 30, `deliveries of the deleted webhook: ${total30}, expected 30 (one per invoice.created)`);

      tally.check(integrityOk(db), 'integrity_check');
      checkNoUnhandledErrors(tally, gw.output());
    } finally {
      await teardown({ dir: prepared.dir, db, gw, servers: [rx] });
    }
    tally.finish();
  },
);
