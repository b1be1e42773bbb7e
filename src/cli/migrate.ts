/** `gatewayd migrate [--status]`. */
import type { Config } from '../config.js';
import { ensureDatabaseFile, openSqlite } from '../db/database.js';
import { migrate, migrationStatus, pad } from '../db/migrator.js';
import { claimNetwork, configuredClaim, recordedNetwork } from '../db/network-guard.js';

export function runMigrate(config: Config, status: boolean, out: (line: string) => void): number {
  ensureDatabaseFile(config.database.path);
  const sqlite = openSqlite(config.database.path);
  try {
    if (status) {
      const s = migrationStatus(sqlite);
      out(`database: ${config.database.path}`);
      for (const m of s.applied) out(`applied  ${pad(m.version)}_${m.name}  ${new Date(m.applied_at).toISOString()}`);
      for (const m of s.pending) out(`pending  ${pad(m.version)}_${m.name}`);
      out(`${s.applied.length} applied, ${s.pending.length} pending`);
      out(`network: ${recordedNetwork(sqlite) ?? 'not recorded yet'}`);
      return 0;
    }
    const applied = migrate(sqlite, Date.now());
    for (const m of applied) out(`applied  ${pad(m.version)}_${m.name}`);
    // Migrating a database for one network never hands it to another.
    claimNetwork(sqlite, config.database.path, configuredClaim(config), Date.now());
    out(applied.length === 0 ? 'database is up to date' : `${applied.length} migration(s) applied to ${config.database.path}`);
    return 0;
  } finally {
    sqlite.close();
  }
}
