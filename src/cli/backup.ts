/**
 * `gatewayd backup FILE [--config FILE] [--force]`: a consistent copy of the live database through
 * SQLite's online backup API, safe while `serve` runs (WAL: readers and the writer are not blocked).
 * The copy is written next to FILE under a temporary name, checked (integrity and migrations),
 * flushed to disk and only then renamed into place, so FILE is either the old file or a whole,
 * verified backup. It holds password hashes and webhook secrets: mode 0600.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Config } from '../config.js';
import { openSqlite } from '../db/database.js';
import { migrationStatus } from '../db/migrator.js';
import { UsageError } from './usage.js';
import { BackupError, type BackupOptions } from './backup-error.js';
import { runPostgresBackup } from './backup-postgres.js';

export { BackupError, type BackupOptions } from './backup-error.js';

/** Pages copied per step: small enough that a serving process is never held up for long. */
const PAGES_PER_STEP = 256;

export async function runBackup(config: Config, options: BackupOptions, out: (line: string) => void): Promise<number> {
  if (config.database.url) {
    const target = resolve(options.file);
    if (!existsSync(dirname(target))) throw new UsageError(`${dirname(target)}: no such folder`);
    if (existsSync(target) && !options.force) throw new UsageError(`${target}: already exists; pass --force to replace it`);
    return runPostgresBackup(config, options, out);
  }
  const source = config.database.path;
  if (source === ':memory:' || !existsSync(source)) throw new BackupError(`${source}: no database to back up (run \`gatewayd migrate\` first)`);
  const target = resolve(options.file);
  if (target === resolve(source)) throw new UsageError(`${target}: that is the live database; name another file`);
  if (!existsSync(dirname(target))) throw new UsageError(`${dirname(target)}: no such folder`);
  if (existsSync(target)) {
    if (!options.force) throw new UsageError(`${target}: already exists; pass --force to replace it`);
    if (!statSync(target).isFile()) throw new UsageError(`${target}: not a regular file`);
  }

  const started = Date.now();
  const partial = resolve(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  // Created 0600 up front: SQLite keeps the mode of an existing file.
  closeSync(openSync(partial, 'w', 0o600));
  const tty = options.progress?.isTTY === true ? options.progress : undefined;
  const sqlite = openSqlite(source);
  let pages = 0;
  // SQLite starts the copy over whenever another connection (the serving process) writes to the
  // source. Under steady writes small steps could then go on for ever, so after the first restart
  // the rest is copied in one step: with WAL that step only holds a read snapshot, writers go on.
  let lastRemaining = Number.POSITIVE_INFINITY;
  let restarted = false;
  try {
    await sqlite.backup(partial, {
      progress({ totalPages, remainingPages }) {
        if (remainingPages > lastRemaining) restarted = true;
        lastRemaining = remainingPages;
        pages = totalPages;
        if (tty) {
          const pct = totalPages === 0 ? 100 : Math.floor(((totalPages - remainingPages) / totalPages) * 100);
          tty.write(`\rbackup: ${pct}% (${totalPages - remainingPages}/${totalPages} pages)`);
        }
        return restarted ? Math.max(totalPages, 1) : PAGES_PER_STEP;
      },
    });
    // SQLite reports progress before each step, not after the last one.
    if (tty) tty.write(`\rbackup: 100% (${pages}/${pages} pages)\n`);
    const verified = verifyCopy(partial);
    const fd = openSync(partial, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, target);
    syncFolder(dirname(target));
    const mb = (statSync(target).size / 1e6).toFixed(2);
    out(`backed up ${source} to ${target}: ${mb} MB, ${verified.migrations} migration(s), integrity ok, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    out('restore: stop gatewayd, copy the file over database.path, delete any stale -wal and -shm files beside it, start gatewayd');
    return 0;
  } catch (err) {
    if (tty) tty.write('\n');
    throw err instanceof UsageError || err instanceof BackupError ? err : new BackupError(`backup failed: ${(err as Error).message}`);
  } finally {
    sqlite.close();
    for (const f of [partial, `${partial}-wal`, `${partial}-shm`, `${partial}-journal`]) rmSync(f, { force: true });
  }
}

function verifyCopy(path: string): { migrations: number } {
  const copy = openSqlite(path);
  try {
    const result = copy.pragma('integrity_check', { simple: true });
    if (result !== 'ok') throw new BackupError(`the copy failed its integrity check (${String(result)}); the previous backup, if any, is untouched`);
    const status = migrationStatus(copy);
    return { migrations: status.applied.length };
  } finally {
    // Closing checkpoints the copy's WAL into the file, so the renamed file stands alone.
    copy.close();
  }
}

function syncFolder(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* some filesystems refuse to fsync a folder; the rename is still atomic */
  }
}
