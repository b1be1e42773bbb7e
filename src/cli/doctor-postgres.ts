/**
 * `gatewayd doctor` on PostgreSQL (database.url): the connection, the server's version (13 or
 * newer), the privileges the gateway needs, that autovacuum keeps the planner's statistics, the
 * migration state and the recorded network.
 */
import type pg from 'pg';
import type { Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { databaseMigrationStatus } from '../db/migrator.js';
import { recordedNetwork } from '../db/network-guard.js';
import { redactUrl } from '../db/postgres.js';
import { checkRecordedNetwork, type Finding } from './doctor-findings.js';

/** The oldest server the product supports (advisory locks, EXECUTE FUNCTION, DROP DATABASE … FORCE in the tests). */
export const MIN_SERVER_VERSION = 130000;

export async function checkPostgres(config: Config): Promise<Finding[]> {
  const shown = redactUrl(config.database.url);
  const database = openDatabase(config.database, { max: 1 });
  const findings: Finding[] = [];
  try {
    let version: { v: number; text: string };
    try {
      const { rows } = await (
        await database.pool!()
      ).query<{ v: string; text: string }>(`SELECT current_setting('server_version_num') AS v, current_setting('server_version') AS text`);
      version = { v: Number(rows[0]!.v), text: rows[0]!.text };
    } catch (err) {
      return [{ level: 'fail', check: 'database', detail: `${shown}: cannot connect (${(err as Error).message})` }];
    }
    findings.push(
      version.v >= MIN_SERVER_VERSION
        ? { level: 'ok', check: 'database', detail: `${shown}: PostgreSQL ${version.text}` }
        : { level: 'fail', check: 'database', detail: `${shown}: PostgreSQL ${version.text} is too old: 13 or newer is needed` },
    );
    findings.push(await checkPrivileges(await database.pool!()));
    findings.push(await checkStatistics(await database.pool!()));
    try {
      const s = await databaseMigrationStatus(database);
      findings.push(
        s.applied.length === 0
          ? { level: 'fail', check: 'migrations', detail: 'no migration was ever applied: run `gatewayd migrate`' }
          : s.pending.length === 0
            ? { level: 'ok', check: 'migrations', detail: `${s.applied.length} applied, none pending` }
            : {
                level: 'fail',
                check: 'migrations',
                detail: `${s.pending.length} pending (${s.pending.map((m) => m.version).join(', ')}): run \`gatewayd migrate\``,
              },
      );
      if (s.applied.length > 0) findings.push(checkRecordedNetwork(config, await recordedNetwork(database)));
    } catch (err) {
      findings.push({ level: 'fail', check: 'migrations', detail: (err as Error).message });
    }
    return findings;
  } finally {
    await database.close();
  }
}

/** Connect and create in the database (migrations), and read/write on every table already there (none in a new database). */
async function checkPrivileges(pool: pg.Pool): Promise<Finding> {
  const { rows } = await pool.query<{ who: string; create_schema: boolean; tables: string[] | null }>(
    `SELECT current_user AS who,
            has_schema_privilege(current_schema(), 'CREATE') AS create_schema,
            (SELECT array_agg(c.relname::text ORDER BY c.relname) FROM pg_class c
              WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relkind = 'r'
                AND NOT (has_table_privilege(c.oid, 'SELECT') AND has_table_privilege(c.oid, 'INSERT')
                  AND has_table_privilege(c.oid, 'UPDATE') AND has_table_privilege(c.oid, 'DELETE'))) AS tables`,
  );
  const r = rows[0]!;
  const missing: string[] = [];
  if (!r.create_schema) missing.push('CREATE on the schema (migrations add tables)');
  if (r.tables && r.tables.length > 0) missing.push(`SELECT, INSERT, UPDATE, DELETE on ${r.tables.join(', ')}`);
  return missing.length === 0
    ? { level: 'ok', check: 'privileges', detail: `role ${r.who} may migrate, read and write` }
    : { level: 'fail', check: 'privileges', detail: `role ${r.who} lacks ${missing.join('; ')}` };
}

/**
 * Autovacuum's ANALYZE keeps the planner's statistics, and each one makes every connection plan its
 * prepared statements again. Without it they keep the plans made while the tables were new and
 * small, which may walk all of a merchant's invoices for one lookup (docs/operations.md, "Planner
 * statistics"). Off for the server (autovacuum, track_counts) or for one of the gateway's tables.
 */
async function checkStatistics(pool: pg.Pool): Promise<Finding> {
  const { rows } = await pool.query<{ autovacuum: string; track_counts: string; tables: string[] | null }>(
    `SELECT current_setting('autovacuum') AS autovacuum, current_setting('track_counts') AS track_counts,
            (SELECT array_agg(c.relname::text ORDER BY c.relname) FROM pg_class c
              WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relkind = 'r'
                AND c.reloptions @> ARRAY['autovacuum_enabled=false']) AS tables`,
  );
  const r = rows[0]!;
  const off = [
    ...(r.autovacuum === 'on' ? [] : ['autovacuum is off']),
    ...(r.track_counts === 'on' ? [] : ['track_counts is off']),
    ...(r.tables ? [`autovacuum_enabled = false on ${r.tables.join(', ')}`] : []),
  ];
  return off.length === 0
    ? { level: 'ok', check: 'statistics', detail: 'autovacuum keeps the planner statistics' }
    : {
        level: 'warn',
        check: 'statistics',
        detail: `${off.join('; ')}: the planner's statistics go stale and lookups may scan a merchant's invoices; turn it on, or run ANALYZE after loads`,
      };
}
