/**
 * Work that must run in exactly one instance at a time (docs/architecture.md, "Once or everywhere"):
 * the chain scanner (and the expiry it does), the payment-notice mailer. On SQLite there is one
 * process, always the leader. On PostgreSQL the leader holds a session advisory lock on a dedicated
 * connection: the lock goes with the connection, so when the leader's process dies (or its machine:
 * TCP keepalives) the server releases it, and another instance, which tries every `pollMs`, takes
 * over and resumes from the durable cursor in the database.
 */
import type pg from 'pg';
import type { Log } from '../lib/log.js';
import type { Worker } from '../lib/loop.js';
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { dialectOf, postgresUrlOf, type Db } from './database.js';
import { createClient } from './postgres.js';

export interface Lease {
  readonly held: boolean;
  /** True when this instance holds the lease now (taking it when free). */
  acquire(): Promise<boolean>;
  release(): Promise<void>;
}

export function createLease(db: Db, key: number, name: string, log: Log): Lease {
  if (dialectOf(db) === 'sqlite') return { held: true, acquire: async () => true, release: async () => undefined };
  const url = postgresUrlOf(db)!;
  let client: pg.Client | undefined;
  let held = false;
  const drop = (why: string) => {
    if (held) log.warn({ lease: name, why }, 'leader lease lost: this instance stops that work until it holds the lease again');
    held = false;
    const c = client;
    client = undefined;
    void c?.end().catch(() => undefined);
  };
  return {
    get held() {
      return held;
    },
    async acquire() {
      try {
        let c = client;
        if (!c) {
          c = await createClient(url);
          c.on('error', (err: Error) => drop(err.message));
          await c.connect();
          client = c;
        }
        if (held) {
          // Still connected means still held: the lock lives exactly as long as this session.
          await c.query('SELECT 1');
          return true;
        }
        const { rows } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key]);
        held = rows[0]!.ok;
        if (held) log.info({ lease: name }, 'leader lease taken: this instance runs it');
        return held;
      } catch (err) {
        drop((err as Error).message);
        return false;
      }
    },
    async release() {
      const c = client;
      client = undefined;
      held = false;
      // Ending the session releases the lock.
      await c?.end().catch(() => undefined);
    },
  };
}

/** The worker, run only while this instance holds the lease; the others try every pollMs. */
export function leaderOnly(worker: Worker, lease: Lease, pollMs = 2000): Worker {
  return {
    ...worker,
    // The worker's own period; while another instance leads, nextDelayMs asks again every pollMs.
    intervalMs: worker.intervalMs,
    runOnce: async () => {
      if (!(await lease.acquire())) return false;
      return worker.runOnce();
    },
    nextDelayMs: () => (lease.held ? worker.nextDelayMs?.() : pollMs),
    drain: async () => {
      await worker.drain?.();
      await lease.release();
    },
  };
}

/**
 * The worker, run only while this instance holds a lease another worker takes (leaderOnly): work
 * that belongs with the leader's in-process state (the Telegram watcher-down notice reads the
 * scanner's status). It never takes the lease itself.
 */
export function whileHeld(worker: Worker, lease: Lease): Worker {
  return {
    ...worker,
    runOnce: async () => (lease.held ? worker.runOnce() : false),
  };
}

/**
 * The instances connected to this PostgreSQL database now (their application_name, src/db/postgres.ts
 * INSTANCE_NAME); undefined on SQLite (one process). An instance whose process or machine died has
 * none once the server notices (at once for a killed process, by TCP keepalive for a vanished machine).
 */
export async function liveInstances(db: Db): Promise<string[] | undefined> {
  if (dialectOf(db) === 'sqlite') return undefined;
  const { rows } = await sql<{ name: string }>`SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE datname = current_database()`.execute(db);
  return rows.map((r) => r.name);
}

/**
 * Which rows left in `sending` (deliveries, shop_notifies: both carry updated_at and claimed_by)
 * no instance can still be sending: claimed before `claimedBefore` (longer ago than any attempt can
 * take), or claimed by an instance that is not among `live` (its process or machine is gone). For
 * an UPDATE of one of those tables (unqualified column names).
 */
export function abandonedClaim(claimedBefore: number, live?: readonly string[]): RawBuilder<SqlBool> {
  if (!live || live.length === 0) return sql<SqlBool>`updated_at < ${claimedBefore}`;
  return sql<SqlBool>`(updated_at < ${claimedBefore} OR (claimed_by IS NOT NULL AND claimed_by NOT IN (${sql.join([...live])})))`;
}
