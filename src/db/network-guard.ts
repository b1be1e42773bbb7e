/**
 * One database, one TRON network. The first start records the network a database is opened for
 * (migration 0013 records tron-mainnet for databases that already held accounts); every later start
 * compares it with the configured one and refuses another, so invoices, wallets and amounts of a
 * test network never mix with real ones, in either direction.
 */
import type { Config } from '../config.js';
import type { NetworkId } from '../lib/tron.js';
import { randomBytes } from 'node:crypto';
import type { Db, OpenedDatabase, Sqlite } from './database.js';
import { databaseMigrationStatus, isEmpty, migrateDatabase, MigrationError, type Migration } from './migrator.js';

export class NetworkMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetworkMismatchError';
  }
}

/** The network recorded in this database; undefined before migration 0013 or before a first start. */
export async function recordedNetwork(database: OpenedDatabase): Promise<NetworkId | undefined> {
  if (database.dialect === 'sqlite') return recordedSqliteNetwork(database.sqlite);
  const pool = await database.pool!();
  const { rows } = await pool
    .query<{ network: NetworkId }>(`SELECT network FROM instance_network WHERE id = 1 AND to_regclass('instance_network') IS NOT NULL`)
    .catch((err: { code?: string }) => {
      // 42P01: no such table (before migration 0013).
      if (err.code === '42P01') return { rows: [] };
      throw err;
    });
  return rows[0]?.network;
}

/** recordedNetwork on a bare SQLite handle (doctor). */
export function recordedSqliteNetwork(sqlite: Sqlite): NetworkId | undefined {
  const table = sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'instance_network'`).get();
  if (!table) return undefined;
  const row = sqlite.prepare('SELECT network FROM instance_network WHERE id = 1').get() as { network: NetworkId } | undefined;
  return row?.network;
}

export interface NetworkClaim {
  /** The network the command runs on. */
  network: NetworkId;
  /** How the user chose it, for the error line: `tron.network = "nile"`, or `gatewayd dev`. */
  chosenBy: string;
}

/** The claim of a command that runs on the configured network. */
export function configuredClaim(config: Config): NetworkClaim {
  return { network: config.network.id, chosenBy: `tron.network = "${config.tron.network}"` };
}

/**
 * Records `claim.network` on a database that has none yet, or checks that it is the recorded one.
 * Throws NetworkMismatchError (one line naming both networks) otherwise. The table must exist.
 */
export async function claimNetwork(database: OpenedDatabase, path: string, claim: NetworkClaim, now: number): Promise<void> {
  await database.db
    .insertInto('instance_network')
    .values({ id: 1, network: claim.network, recorded_at: now, database_id: randomBytes(8).toString('hex') })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const recorded = await recordedNetwork(database);
  if (recorded !== claim.network) {
    throw new NetworkMismatchError(
      `${path}: this database belongs to ${recorded}, but ${claim.chosenBy} runs ${claim.network}; a database never changes network: use another database${database.dialect === 'sqlite' ? ' file' : ''}`,
    );
  }
}

/**
 * Makes a database ready for a command that serves or writes: a brand-new file gets every
 * migration; an existing one with pending migrations is refused (`gatewayd migrate` applies them
 * deliberately, after a backup); then the network is claimed or checked. Returns what was applied.
 */
export async function prepareDatabase(database: OpenedDatabase, path: string, claim: NetworkClaim, created: boolean, now: number): Promise<Migration[]> {
  let applied: Migration[] = [];
  if (created || (await isEmpty(database))) {
    applied = await migrateDatabase(database, now);
  } else {
    const { pending } = await databaseMigrationStatus(database);
    if (pending.length > 0) {
      throw new MigrationError(`${path}: ${pending.length} pending migration(s) (${pending.map((m) => m.version).join(', ')}); run \`gatewayd migrate\` first`);
    }
  }
  await claimNetwork(database, path, claim, now);
  return applied;
}

/**
 * Which database this is: a random id written once, with the network claim (migration 0033 gave
 * one to a database claimed before it). Two processes on the same database give the same one;
 * another database gives another, even one prepared at the same moment. `GET /api/v1/health` shows
 * it, and `gatewayd chain status` compares it with the database it reads. Null before any claim.
 */
export async function databaseId(db: Db): Promise<string | null> {
  const row = await db.selectFrom('instance_network').select('database_id').where('id', '=', 1).executeTakeFirst();
  return row?.database_id ?? null;
}
