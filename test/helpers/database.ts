/**
 * Which engine the suite runs on. Unset TEST_DATABASE_URL: each test app gets a fresh SQLite file
 * (the default). TEST_DATABASE_URL=postgres://user@host:port/db: each test app gets a fresh
 * PostgreSQL database created on that server (named gwt_<random>) and dropped when it closes, so the
 * same tests run on both engines. (Not GATEWAYD_…: the config refuses unknown GATEWAYD_ variables,
 * and gatewayd processes the tests start inherit the environment.)
 */
import { randomBytes } from 'node:crypto';
import { databaseName, serverUrl, withClient } from '../../src/db/postgres.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? '';
export const onPostgres = TEST_DATABASE_URL !== '';

/** For tests of SQLite-only tools (EXPLAIN QUERY PLAN, the backup's page copy, the statement cache): `{ skip: sqliteOnly }`. */
export const sqliteOnly = onPostgres ? 'SQLite only (TEST_DATABASE_URL selects PostgreSQL)' : false;

export interface ScratchDatabase {
  /** The database.url to give the app ('' on SQLite). */
  url: string;
  drop(): Promise<void>;
}

/** A fresh empty database on the test server (PostgreSQL), or nothing to do (SQLite). */
export async function scratchDatabase(): Promise<ScratchDatabase> {
  if (!onPostgres) return { url: '', drop: async () => undefined };
  const name = `gwt_${randomBytes(6).toString('hex')}`;
  const admin = serverUrl(TEST_DATABASE_URL, databaseName(TEST_DATABASE_URL) || 'postgres');
  await withClient(admin, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`));
  return {
    url: serverUrl(TEST_DATABASE_URL, name),
    drop: () => withClient(admin, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
