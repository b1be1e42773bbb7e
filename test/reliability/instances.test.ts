/**
 * Two instances on one PostgreSQL database (issue 31): two real `gatewayd serve` processes share a
 * throwaway PostgreSQL cluster of their own (test/helpers/pg-cluster.ts; never the shared server),
 * under a load of invoice creations sent to both at once, payments the scanner confirms and webhook
 * deliveries. Faults, in a seeded order: SIGKILL of either instance at a random moment, SIGKILL of
 * the instance that holds the scanner's lease, and a restart of the PostgreSQL server (an immediate
 * stop, recovered from the WAL). After every fault, and at the end:
 *
 * - 0 acknowledged invoices lost (every 201 is in the database, unchanged);
 * - 0 duplicate payable amounts on one reservation key;
 * - 0 payments confirmed twice (one transfer row per log, one invoice.confirmed per invoice, each
 *   paid invoice confirmed by its own transaction, never changed);
 * - 0 deliveries lost: every stored event reaches the receiver at least once (deduplicated by the
 *   event id, as a receiver does), every delivery ends delivered;
 * - the scanner resumes (its durable cursor moves again) within 10 s of its leader's death.
 *
 * A reduced seeded run inside `npm test` when a PostgreSQL is there (TEST_DATABASE_URL or a server
 * on 127.0.0.1:5432) and its binaries are installed; skipped otherwise. `RELIABILITY=full` for more.
 * RELIABILITY_DUMP=<folder> keeps every gatewayd's whole output there, killed ones included.
 */
import { test } from 'node:test';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { LOCK_KEYS } from '../../src/db/postgres.js';
import { startGateway, type GatewayProcess } from '../helpers/process.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { startTronGrid } from '../helpers/trongrid.js';
import { HttpClient } from '../helpers/http.js';
import { postgresAvailable, postgresBinaries, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import {
  createInvoices,
  noteCreation,
  payAnswered,
  prepareDatabase,
  type PreparedMerchant,
  problemLines,
  rng,
  sessionClient,
  size,
  sleep,
  Tally,
  checkAnsweredInvoices,
} from './harness.js';

interface Answered {
  id: string;
  payable: string;
  address: string;
}

const RESUME_WITHIN_MS = 10_000;

const skip =
  postgresBinaries() === undefined
    ? 'needs PostgreSQL binaries (/usr/lib/postgresql/*/bin)'
    : (await postgresAvailable())
      ? false
      : 'needs a PostgreSQL (TEST_DATABASE_URL or 127.0.0.1:5432)';

test(
  'two instances on PostgreSQL: SIGKILL of either instance and of the scanner leader, a database restart, under load',
  { skip, timeout: 900_000 },
  async () => {
    const tally = new Tally('instances');
    const random = rng();
    const faults = size(3, 18);
    const pace = size(40, 15);
    const tg = await startTronGrid({ solidityLag: 1 });
    const rx = await startHttpsReceiver();
    let cluster: PgCluster | undefined;
    let db: pg.Pool | undefined;
    const gws: GatewayProcess[] = [];
    /** Every process started, killed ones included (their output, for a report). */
    const started: GatewayProcess[] = [];
    const dirs: string[] = [];
    try {
      cluster = await startPgCluster();
      const prepared = await prepareDatabase(6, { url: cluster.url, addresses: ['TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx'] });
      dirs.push(prepared.dir);
      const config = {
        database: { url: cluster.url },
        tron: { api_url: tg.url, poll_interval_seconds: 1 },
        webhooks: rx.webhookConfig({ timeout_seconds: 5 }),
        log: { level: 'warn' },
      };
      const start = async (i: number) => {
        const dir = `${prepared.dir}/instance-${i}-${Date.now()}`;
        dirs.push(dir);
        mkdirSync(dir, { recursive: true });
        gws[i] = await startGateway({ dir, config });
        started.push(gws[i]!);
      };
      await start(0);
      await start(1);
      // A pool of one for the checks: a connection the database restart cut is replaced.
      db = new pg.Pool({ connectionString: cluster.url, max: 1 });
      db.on('error', () => undefined);
      const q = async <R extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> => (await db!.query<R>(text, values)).rows;

      for (const m of prepared.merchants) {
        const res = await sessionClient(gws[m === prepared.merchants[0] ? 0 : 1]!.baseUrl, m).post('/webhooks', { url: rx.url(`/m/${m.id}`) });
        tally.requests += 1;
        tally.check(res.status === 201, `webhook registration: ${res.status} ${res.text}`);
      }

      const answered = new Map<string, Answered>();
      const unanswered = new Map<string, { merchant: PreparedMerchant; body: Record<string, unknown> }>();
      const paid = new Map<string, string>();
      const confirmedSeen = new Map<string, string>();
      let seq = 0;
      let running = true;
      /** Until when a 5xx is the fault showing (a fault, and 3 s after it), not a bug. */
      let faultingUntil = 0;
      const faulting = () => Date.now() < faultingUntil;

      const create = async (m: PreparedMerchant, key: string, body: Record<string, unknown>): Promise<void> => {
        const gw = gws[Math.floor(random() * gws.length)]!;
        tally.requests += 1;
        let res;
        try {
          res = await new HttpClient(gw.baseUrl, null).post('/invoices', body, { bearer: m.key, headers: { 'idempotency-key': key } });
        } catch {
          unanswered.set(key, { merchant: m, body });
          return;
        }
        if (res.status >= 500) {
          // The database restarting (or the instance dying mid-request): not acknowledged, retried.
          tally.check(faulting() || res.status === 503, `create ${key}: ${res.status} outside a fault ${res.text.slice(0, 200)}`);
          tally.count('refused_during_faults');
          unanswered.set(key, { merchant: m, body });
          return;
        }
        unanswered.delete(key);
        noteCreation(tally, answered, key, res, {});
      };
      const creator = () =>
        createInvoices({ running: () => running, paceMs: pace, random, merchants: prepared.merchants, next: () => `inst-${(seq += 1)}`, create });
      const payer = () =>
        payAnswered({
          running: () => running,
          everyMs: 250,
          random,
          answered,
          paid,
          pay: (to, amount) => tg.pay({ to, amount, blockTimestamp: Date.now() + 1000 }).txId,
        });

      /** The instance (index in gws) whose connection holds the scanner's advisory lock, if any. */
      const leader = async (): Promise<number | undefined> => {
        const rows = await q<{ name: string }>(
          `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid::bigint = $1`,
          [LOCK_KEYS.SCANNER],
        );
        const pid = Number(/^gatewayd (\d+)@/.exec(rows[0]?.name ?? '')?.[1]);
        const i = gws.findIndex((g) => g.child.pid === pid);
        return i >= 0 ? i : undefined;
      };
      const cursor = async (): Promise<number> => Number((await q<{ c: number }>('SELECT max(cursor_block) AS c FROM chain_scan'))[0]?.c ?? 0);
      /** Milliseconds from `since` until the scanner's cursor moves past `from` (or -1 after 30 s). */
      const resumed = async (from: number, since: number): Promise<number> => {
        while (Date.now() - since < 30_000) {
          if ((await cursor().catch(() => from)) > from) return Date.now() - since;
          await sleep(100);
        }
        return -1;
      };
      const waitForLeader = async (): Promise<number | undefined> => {
        for (let i = 0; i < 100; i++) {
          const l = await leader().catch(() => undefined);
          if (l !== undefined) return l;
          await sleep(100);
        }
        return undefined;
      };

      const load = [creator(), creator(), payer()];
      await sleep(1500);
      tally.check((await waitForLeader()) !== undefined, 'no instance took the scanner lease');
      // The seeded order of faults: the leader, either instance, the database; at least one of each.
      const kinds = ['leader', 'database', 'either'] as const;
      let slowestResumeMs = 0;
      let slowestDatabaseResumeMs = 0;
      for (let f = 0; f < faults; f++) {
        const kind = f < kinds.length ? kinds[f]! : kinds[Math.floor(random() * kinds.length)]!;
        await sleep(800 + Math.floor(random() * 1800));
        tally.faults += 1;
        faultingUntil = Infinity;
        if (kind === 'database') {
          const before = await cursor();
          const at = Date.now();
          await cluster.restart('immediate');
          tally.count('database_restarts');
          const ms = await resumed(before, at);
          tally.check(ms >= 0, `after the database restart (fault ${f + 1}) the scanner never resumed`);
          slowestDatabaseResumeMs = Math.max(slowestDatabaseResumeMs, ms);
        } else {
          const lead = await waitForLeader();
          const victim = kind === 'leader' && lead !== undefined ? lead : Math.floor(random() * gws.length);
          const wasLeader = victim === lead;
          const before = await cursor();
          const at = Date.now();
          await gws[victim]!.kill();
          tally.count(wasLeader ? 'leader_kills' : 'follower_kills');
          if (wasLeader) {
            const ms = await resumed(before, at);
            tally.check(ms >= 0 && ms <= RESUME_WITHIN_MS, `fault ${f + 1}: the scanner resumed ${ms} ms after its leader's death (aim ${RESUME_WITHIN_MS})`);
            slowestResumeMs = Math.max(slowestResumeMs, ms);
          }
          await start(victim);
          // Creations whose answer the kill swallowed: the same key makes at most one invoice.
          for (const [key, u] of [...unanswered]) await create(u.merchant, key, u.body);
        }
        faultingUntil = Date.now() + 3000;
        await checkAtRest(q, tally, answered, confirmedSeen, `after fault ${f + 1} (${kind})`);
      }
      running = false;
      await Promise.all(load);
      for (const [key, u] of [...unanswered]) await create(u.merchant, key, u.body);
      tally.check(unanswered.size === 0, `creations never answered: ${unanswered.size}`);

      // Settle: every payment confirms once, every event reaches the receiver.
      const unconfirmed = await waitUntil(async () => {
        const rows = await q<{ id: string }>(`SELECT id FROM invoices WHERE status = 'confirmed' AND id = ANY($1)`, [[...paid.keys()]]);
        const done = new Set(rows.map((r) => r.id));
        return [...paid.keys()].filter((id) => !done.has(id));
      }, 60_000);
      tally.check(unconfirmed.length === 0, `paid but not confirmed: ${unconfirmed.slice(0, 10).join(',')}`);
      for (const r of await q<{ id: string; tx_hash: string }>(`SELECT id, tx_hash FROM invoices WHERE status = 'confirmed'`)) {
        tally.check(paid.get(r.id) === r.tx_hash, `invoice ${r.id} confirmed by ${r.tx_hash}, paid by ${paid.get(r.id)}`);
      }
      const twice = await q<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT tx_hash, log_index FROM chain_transfers GROUP BY tx_hash, log_index HAVING count(*) > 1) d`,
      );
      tally.check(twice[0]!.n === 0, `${twice[0]!.n} transfers recorded twice`);
      const doubleEvents = await q<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT invoice_id FROM events WHERE type = 'invoice.confirmed' GROUP BY invoice_id HAVING count(*) > 1) d`,
      );
      tally.check(doubleEvents[0]!.n === 0, `${doubleEvents[0]!.n} invoices confirmed twice (events)`);
      const undelivered = await waitUntil(async () => {
        const got = new Set(rx.requests.map((r) => String(r.headers['x-gateway-event-id'])));
        return (await q<{ id: string }>('SELECT id FROM events')).map((e) => e.id).filter((id) => !got.has(id));
      }, 60_000);
      tally.check(undelivered.length === 0, `events never received: ${undelivered.length} (${undelivered.slice(0, 5).join(',')})`);
      const pending = await waitUntil(async () => q(`SELECT id, status FROM deliveries WHERE status <> 'delivered'`), 90_000);
      tally.check(pending.length === 0, `deliveries not delivered at the end: ${JSON.stringify(pending.slice(0, 5))}`);
      await checkAtRest(q, tally, answered, confirmedSeen, 'at the end');
      tally.count('invoices_answered', answered.size);
      tally.count('payments', paid.size);
      tally.count('events', Number((await q<{ n: number }>('SELECT count(*)::int AS n FROM events'))[0]!.n));
      tally.count('receiver_requests', rx.requests.length);
      tally.count('slowest_leader_resume_ms', slowestResumeMs);
      tally.count('slowest_resume_after_database_restart_ms', slowestDatabaseResumeMs);
      if (tally.violations.length > 0) {
        for (const g of gws) {
          const health = await fetch(`${g.baseUrl}/api/v1/health`).then(
            (r) => r.text(),
            (e: Error) => e.message,
          );
          console.log(`[reliability:instances] instance ${g.child.pid} (exit ${g.child.exitCode}): health ${health.slice(0, 300)}`);
          for (const line of problemLines(g.output(), 8)) console.log(`[reliability:instances] gatewayd ${g.child.pid}: ${line.slice(0, 400)}`);
        }
      }
    } finally {
      if (process.env.RELIABILITY_DUMP) for (const g of started) writeFileSync(`${process.env.RELIABILITY_DUMP}/gw-${g.child.pid}.log`, g.output());
      await db?.end().catch(() => undefined);
      for (const g of gws) await g?.stop();
      await cluster?.destroy();
      await rx.close();
      await tg.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
    tally.finish();
  },
);

type Query = <R extends Record<string, unknown>>(text: string, values?: unknown[]) => Promise<R[]>;

/** The invariants that hold for the database at rest (after a fault, or at the end). */
async function checkAtRest(q: Query, tally: Tally, answered: Map<string, Answered>, confirmedSeen: Map<string, string>, when: string): Promise<void> {
  const dup = await q<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT network, token_contract, wallet_address, payable_amount FROM invoices
       GROUP BY network, token_contract, wallet_address, payable_amount HAVING count(*) > 1) d`,
  );
  tally.check(dup[0]!.n === 0, `${when}: a payable amount is used twice on one reservation key`);
  // The load goes on meanwhile: check the invoices answered before the query, not those answered during it.
  const known = [...answered];
  const rows = await q<{ id: string; payable_amount: number; wallet_address: string; status: string; tx_hash: string | null }>(
    'SELECT id, payable_amount, wallet_address, status, tx_hash FROM invoices WHERE id = ANY($1)',
    [known.map(([, a]) => a.id)],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  checkAnsweredInvoices(tally, when, known, confirmedSeen, (id) => byId.get(id));
  const orphan = await q<{ n: number }>(
    `SELECT count(*)::int AS n FROM amount_reservations r LEFT JOIN invoices i ON i.id = r.invoice_id
      WHERE i.id IS NULL OR i.payable_amount <> r.amount OR i.wallet_address <> r.address`,
  );
  tally.check(orphan[0]!.n === 0, `${when}: ${orphan[0]!.n} reservations do not match their invoice`);
}

/** Polls `pending()` until it returns an empty list or the time is up; returns the last list. */
async function waitUntil<T>(pending: () => Promise<T[]>, timeoutMs: number): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = await pending();
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(200);
  }
}
