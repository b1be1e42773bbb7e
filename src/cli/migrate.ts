/** `gatewayd migrate [--status]`: SQLite (database.path) or PostgreSQL (database.url) alike. */
import type { Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { databaseMigrationStatus, migrateDatabase, pad } from '../db/migrator.js';
import { claimNetwork, configuredClaim, recordedNetwork } from '../db/network-guard.js';

export async function runMigrate(config: Config, status: boolean, out: (line: string) => void): Promise<number> {
  const database = openDatabase(config.database, { max: 1 });
  try {
    if (status) {
      const s = await databaseMigrationStatus(database);
      out(`database: ${database.path}`);
      for (const m of s.applied) out(`applied  ${pad(m.version)}_${m.name}  ${new Date(m.applied_at).toISOString()}`);
      for (const m of s.pending) out(`pending  ${pad(m.version)}_${m.name}`);
      out(`${s.applied.length} applied, ${s.pending.length} pending`);
      out(`network: ${(await recordedNetwork(database)) ?? 'not recorded yet'}`);
      return 0;
    }
    const applied = await migrateDatabase(database, Date.now());
    for (const m of applied) out(`applied  ${pad(m.version)}_${m.name}`);
    // Migrating a database for one network never hands it to another.
    await claimNetwork(database, database.path, configuredClaim(config), Date.now());
    out(applied.length === 0 ? 'database is up to date' : `${applied.length} migration(s) applied to ${database.path}`);
    return 0;
  } finally {
    await database.close();
  }
}
