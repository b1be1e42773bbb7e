/**
 * Crash safety (issue 11): the real `gatewayd serve` runs under a steady load of invoice
 * creations, payments the chain watcher confirms and webhook deliveries, and is killed with
 * SIGKILL at random moments, then restarted on the same database. After every kill and restart
 * the invariants below are checked against the database file; at the end, once the load stops,
 * every payment is confirmed exactly once and every stored event has reached the receiver.
 */
import { test } from 'node:test';
import { startGateway, type GatewayProcess } from '../helpers/process.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { HttpClient } from '../helpers/http.js';
import {
  createInvoices,
  noteCreation,
  payAnswered,
  duplicatePayables,
  integrityOk,
  prepareDatabase,
  type PreparedMerchant,
  problemLines,
  reader,
  rng,
  sessionClient,
  size,
  sleep,
  statsDrift,
  Tally,
  teardown,
  checkAnsweredInvoices,
  type InvoiceAtRest,
} from './harness.js';

interface Answered {
  id: string;
  payable: string;
  address: string;
  merchant: PreparedMerchant;
}

test('crash safety: SIGKILL under load of creations, confirmations and deliveries', { timeout: 900_000 }, async () => {
  const tally = new Tally('crash');
  const random = rng();
  const kills = size(3, 24);
  const pace = size(60, 15);
  const payEveryMs = Number(process.env.RELIABILITY_PAY_MS ?? 250);
  // Blocks every 3 s, solidified one block later (mainnet: 19): a payment is put in the first
  // block after gateway time + 1 s, inside the invoice's window and in a block the watcher has
  // not read yet, as a fresh transfer always is on the real chain; it is final within seconds.
  const tg = await startTronGrid({ solidityLag: 1 });
  const rx = await startHttpsReceiver();
  const prepared = await prepareDatabase(6, { addresses: ['TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx'] });
  const config = {
    database: { path: prepared.dbPath },
    tron: { api_url: tg.url, poll_interval_seconds: 1 },
    webhooks: rx.webhookConfig({ timeout_seconds: 5 }),
    log: { level: 'warn' },
  };
  const answered = new Map<string, Answered>();
  /** Creations sent but not answered (the process died): retried with the same key after restart. */
  const unanswered = new Map<string, { merchant: PreparedMerchant; body: Record<string, unknown> }>();
  const paid = new Map<string, string>(); // invoice id -> tx id
  const confirmedSeen = new Map<string, string>(); // invoice id -> tx_hash
  let gw: GatewayProcess = await startGateway({ dir: prepared.dir, config });
  try {
    for (const m of prepared.merchants) {
      const res = await sessionClient(gw.baseUrl, m).post('/webhooks', { url: rx.url(`/m/${m.id}`) });
      tally.requests += 1;
      tally.check(res.status === 201, `webhook registration: ${res.status} ${res.text}`);
    }
    let seq = 0;
    let running = true;

    const create = async (m: PreparedMerchant, key: string, body: Record<string, unknown>): Promise<void> => {
      const client = new HttpClient(gw.baseUrl, null);
      tally.requests += 1;
      let res;
      try {
        res = await client.post('/invoices', body, { bearer: m.key, headers: { 'idempotency-key': key } });
      } catch {
        unanswered.set(key, { merchant: m, body });
        return;
      }
      unanswered.delete(key);
      noteCreation(tally, answered, key, res, { merchant: m });
    };

    const creator = () =>
      createInvoices({ running: () => running, paceMs: pace, random, merchants: prepared.merchants, next: () => `crash-${(seq += 1)}`, create });
    // At most about four a second (RELIABILITY_PAY_MS overrides).
    const payer = () =>
      payAnswered({
        running: () => running,
        everyMs: payEveryMs,
        random,
        answered,
        paid,
        pay: (to, amount) => tg.pay({ to, amount, blockTimestamp: Date.now() + 1000 }).txId,
      });

    const load = [creator(), creator(), payer()];
    for (let k = 0; k < kills; k++) {
      await sleep(400 + Math.floor(random() * 1600));
      await gw.kill();
      tally.faults += 1;
      const db = reader(prepared.dbPath);
      const sendingAtKill = (db.prepare("SELECT id FROM deliveries WHERE status = 'sending'").all() as Array<{ id: string }>).map((r) => r.id);
      tally.count('cut_deliveries', sendingAtKill.length);
      checkAtRest(db, tally, answered, confirmedSeen, `after kill ${k + 1}`);
      db.close();

      gw = await startGateway({ dir: prepared.dir, config });
      // Creations whose answer the crash swallowed: the same key makes at most one invoice.
      for (const [key, u] of [...unanswered]) await create(u.merchant, key, u.body);
      if (sendingAtKill.length > 0) {
        const db2 = reader(prepared.dbPath);
        const deliveryStatus = db2.prepare('SELECT status FROM deliveries WHERE id = ?');
        const stuck = await waitUntil(() => sendingAtKill.filter((id) => (deliveryStatus.get(id) as { status: string }).status !== 'delivered'), 15_000);
        tally.check(stuck.length === 0, `after restart ${k + 1}: deliveries cut by the kill not delivered: ${stuck.join(',')}`);
        db2.close();
      }
    }
    running = false;
    await Promise.all(load);

    // Settle: every payment confirms, every event reaches the receiver.
    const db = reader(prepared.dbPath);
    const statusOf = db.prepare('SELECT status FROM invoices WHERE id = ?');
    const unconfirmed = await waitUntil(
      () => [...paid.keys()].filter((id) => (statusOf.get(id) as { status: string } | undefined)?.status !== 'confirmed'),
      60_000,
    );
    tally.check(unconfirmed.length === 0, `paid but not confirmed: ${unconfirmed.slice(0, 10).join(',')}`);
    const txOf = db.prepare('SELECT tx_hash FROM invoices WHERE id = ?');
    for (const [id, tx] of paid) {
      const row = txOf.get(id) as { tx_hash: string | null } | undefined;
      // Unconfirmed ones are reported above; a confirmation must name the payment's own transaction.
      if (row?.tx_hash !== null) tally.check(row?.tx_hash === tx, `invoice ${id} confirmed by ${row?.tx_hash}, paid by ${tx}`);
    }
    const confirmedCount = (db.prepare("SELECT COUNT(*) AS n FROM invoices WHERE status = 'confirmed'").get() as { n: number }).n;
    tally.check(confirmedCount === paid.size, `confirmed ${confirmedCount} invoices for ${paid.size} payments`);
    const undelivered = await waitUntil(() => {
      const got = new Set(rx.requests.map((r) => String(r.headers['x-gateway-event-id'])));
      return (db.prepare('SELECT id FROM events').all() as Array<{ id: string }>).map((e) => e.id).filter((id) => !got.has(id));
    }, 60_000);
    tally.check(undelivered.length === 0, `events never received: ${undelivered.length} (${undelivered.slice(0, 5).join(',')})`);
    const sending = await waitUntil(() => db.prepare("SELECT id FROM deliveries WHERE status <> 'delivered'").all(), 30_000);
    tally.check(sending.length === 0, `deliveries not delivered at the end: ${JSON.stringify(sending.slice(0, 5))}`);
    checkAtRest(db, tally, answered, confirmedSeen, 'at the end');
    tally.count('invoices_answered', answered.size);
    tally.count('payments', paid.size);
    tally.count('events', (db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n);
    tally.count('receiver_requests', rx.requests.length);
    db.close();
    if (tally.violations.length > 0) for (const line of problemLines(gw.output())) console.log(`[reliability:crash] gatewayd: ${line}`);
    // A graceful stop with a backlog left for the watcher: it ends promptly and cleanly (a SIGTERM
    // once waited for a whole pass of paced receipt reads).
    const stopping = Date.now();
    const code = await gw.stop();
    tally.check(code === 0, `SIGTERM: exit code ${code}`);
    tally.check(Date.now() - stopping < 20_000, `SIGTERM took ${Date.now() - stopping} ms`);
  } finally {
    await teardown({ dir: prepared.dir, gw, servers: [rx, tg] });
  }
  tally.finish();
});

/** The invariants that hold for the database at rest (after a kill, or at the end). */
function checkAtRest(db: ReturnType<typeof reader>, tally: Tally, answered: Map<string, Answered>, confirmedSeen: Map<string, string>, when: string): void {
  tally.check(integrityOk(db), `${when}: PRAGMA integrity_check is not ok`);
  tally.check(duplicatePayables(db) === 0, `${when}: a payable amount is used twice on one reservation key`);
  tally.check(statsDrift(db) === 0, `${when}: the kept invoice stats differ from a recount`);
  const byId = db.prepare('SELECT payable_amount, wallet_address, status, tx_hash FROM invoices WHERE id = ?');
  checkAnsweredInvoices(tally, when, answered, confirmedSeen, (id) => byId.get(id) as InvoiceAtRest | undefined);
  // Reservation rows point at live invoices with the same amount.
  const orphan = db
    .prepare(
      'SELECT COUNT(*) AS n FROM amount_reservations r LEFT JOIN invoices i ON i.id = r.invoice_id WHERE i.id IS NULL OR i.payable_amount <> r.amount OR i.wallet_address <> r.address',
    )
    .get() as { n: number };
  tally.check(orphan.n === 0, `${when}: ${orphan.n} reservations do not match their invoice`);
}

/** Polls `pending()` until it returns an empty list or the time is up; returns the last list. */
async function waitUntil<T>(pending: () => T[], timeoutMs: number): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pending();
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(100);
  }
}
