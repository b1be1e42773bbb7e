/** `gatewayd version`: the program's version and the Node.js and SQLite it runs on, on one line. */
import { VERSION } from '../version.js';

export async function versionLine(): Promise<string> {
  // Loaded here, not at the top: the other commands that never open SQLite do not pay for it.
  const { default: SqliteDatabase } = await import('better-sqlite3');
  const probe = new SqliteDatabase(':memory:');
  try {
    const sqlite = probe.prepare('SELECT sqlite_version()').pluck().get() as string;
    return `gatewayd ${VERSION} (Node.js ${process.versions.node}, SQLite ${sqlite})`;
  } finally {
    probe.close();
  }
}
