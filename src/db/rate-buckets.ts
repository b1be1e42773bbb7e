/**
 * Rate-limit buckets kept in the database (docs/operations.md, "Running several instances"): with
 * several gateways on one PostgreSQL database, every instance takes its tokens from the same row, so
 * a limit does not multiply with the number of instances. SQLite serves one process, whose buckets
 * stay in memory (src/http/rate-limit.ts), and never comes here.
 *
 * One take is one upsert on `rate_limit_buckets` (an UNLOGGED table: no WAL flush per request; see
 * its migration): the row is created full minus one, or refilled at per_minute a minute (never past
 * per_minute) since updated_at, then charged one token when it has one. The row lock of the
 * upsert serializes concurrent takes of the same bucket across instances; the math is the
 * in-memory bucket's. Time is the caller's clock; a clock behind the row's updated_at refills
 * nothing and never moves updated_at back.
 */
import { CompiledQuery, Kysely } from 'kysely';
import { MINUTE } from '../lib/clock.js';
import { isPgConn, type Conn, type Db, type PgConn } from './database.js';

export interface TakenToken {
  /** Tokens left after this take. */
  tokens: number;
  /** Whether this take found a token (false: refused, 429). */
  allowed: boolean;
}

/** The refill: LEAST(per_minute, tokens + elapsed * per_minute / 60 000), elapsed never negative. */
const REFILLED = `LEAST($3::double precision, b.tokens + GREATEST(0, $4::bigint - b.updated_at) * ($3::double precision / 60000.0))`;

// ON CONFLICT DO UPDATE takes no FROM, so the refill is spelled out where it is used.
const TAKE_SQL = `INSERT INTO rate_limit_buckets AS b (scope, subject, tokens, per_minute, allowed, updated_at)
VALUES ($1, $2, $3::double precision - 1, $3::double precision::bigint, 1, $4::bigint)
ON CONFLICT (scope, subject) DO UPDATE SET
  tokens = CASE WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1 ELSE ${REFILLED} END,
  allowed = CASE WHEN ${REFILLED} >= 1 THEN 1 ELSE 0 END,
  per_minute = $3::double precision::bigint,
  updated_at = GREATEST(b.updated_at, $4::bigint)
RETURNING tokens, allowed`;

const FORGET_SQL = `DELETE FROM rate_limit_buckets WHERE updated_at < $1::bigint`;

/**
 * Takes one token of (scope, subject)'s bucket. Outside a transaction pass the Db (one autocommit
 * statement on the pool); inside one pass its Tx, so the take runs on the connection the
 * transaction holds (a second pooled connection could be waited for while holding the first), and
 * is undone with the transaction's unit if that rolls back.
 */
export async function takeToken(on: Db | Conn, scope: string, subject: string, perMinute: number, now: number): Promise<TakenToken> {
  const values = [scope, subject, perMinute, now];
  const { rows } = isDb(on) ? await on.executeQuery<Row>(CompiledQuery.raw(TAKE_SQL, values)) : await pgConn(on).query<Row>(TAKE_SQL, values);
  const row = rows[0]!;
  return { tokens: Number(row.tokens), allowed: Number(row.allowed) === 1 };
}

/**
 * Forgets the buckets untouched for a minute: any bucket refills completely in one minute, so they
 * carry nothing. Idempotent; every instance's maintenance worker runs it. The number forgotten.
 */
export async function forgetFullBuckets(db: Db, now: number): Promise<number> {
  const result = await db.executeQuery(CompiledQuery.raw(FORGET_SQL, [now - MINUTE]));
  return Number(result.numAffectedRows ?? 0);
}

type Row = { tokens: number; allowed: number };

function pgConn(conn: Conn): PgConn {
  if (!isPgConn(conn)) throw new Error('shared rate-limit buckets are PostgreSQL-only');
  return conn;
}

function isDb(on: Db | Conn): on is Db {
  return on instanceof Kysely;
}
