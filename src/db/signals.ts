/**
 * Wake-ups between instances (PostgreSQL LISTEN/NOTIFY): new deliveries queued in one instance wake
 * the delivery workers of all of them, as the in-process Notifier wakes the local one. On SQLite
 * there is one process and nothing to do. Signals carry no data and are coalesced (at most one
 * NOTIFY per COALESCE_MS); a lost one costs only the receivers' next poll (1 s).
 */
import type pg from 'pg';
import { CompiledQuery } from 'kysely';
import type { Log } from '../lib/log.js';
import { dialectOf, postgresUrlOf, type Db } from './database.js';
import { createClient } from './postgres.js';

const COALESCE_MS = 10;

export interface Signal {
  send(): void;
  /** Calls onSignal at every signal sent by any instance (this one included) until close(). */
  listen(onSignal: () => void): Promise<void>;
  close(): Promise<void>;
}

export function crossInstanceSignal(db: Db, channel: string, log: Log): Signal {
  if (dialectOf(db) === 'sqlite') return { send: () => undefined, listen: async () => undefined, close: async () => undefined };
  const url = postgresUrlOf(db)!;
  let scheduled = false;
  let client: pg.Client | undefined;
  let closed = false;
  const notify = CompiledQuery.raw('SELECT pg_notify($1, $2)', [channel, '']);
  const connect = async (onSignal: () => void): Promise<void> => {
    const c = await createClient(url);
    c.on('notification', () => onSignal());
    c.on('error', (err: Error) => {
      log.warn({ channel, err: err.message }, 'wake-up connection lost: reconnecting');
      client = undefined;
      void c.end().catch(() => undefined);
      if (!closed) setTimeout(() => void connect(onSignal).catch(() => undefined), 1000).unref();
    });
    await c.connect();
    await c.query(`LISTEN ${channel}`);
    client = c;
  };
  return {
    send() {
      if (scheduled) return;
      scheduled = true;
      setTimeout(() => {
        scheduled = false;
        db.executeQuery(notify).catch(() => undefined);
      }, COALESCE_MS).unref();
    },
    listen: (onSignal) =>
      connect(onSignal).catch((err: Error) => {
        log.warn({ channel, err: err.message }, 'no wake-up connection: the workers poll instead');
      }),
    async close() {
      closed = true;
      await client?.end().catch(() => undefined);
    },
  };
}
