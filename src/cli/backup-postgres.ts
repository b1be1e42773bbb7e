/**
 * `gatewayd backup FILE` on PostgreSQL (database.url): pg_dump's custom format (restore with
 * pg_restore), written beside FILE under a temporary name with mode 0600 and renamed into place
 * when pg_dump succeeded. Without pg_dump on PATH it says what to install or use instead.
 */
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { redactUrl } from '../db/postgres.js';
import { BackupError, type BackupOptions } from './backup-error.js';

export function findPgDump(path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir && existsSync(join(dir, 'pg_dump'))) return join(dir, 'pg_dump');
  }
  return undefined;
}

export async function runPostgresBackup(config: Config, options: BackupOptions, out: (line: string) => void): Promise<number> {
  const pgDump = findPgDump();
  if (!pgDump) {
    throw new BackupError(
      `database.url is PostgreSQL (${redactUrl(config.database.url)}) and pg_dump is not on PATH: install the PostgreSQL client (Debian: apt install postgresql-client, the server's major version or newer), or back up with your provider's snapshots or point-in-time recovery`,
    );
  }
  const target = resolve(options.file);
  const partial = resolve(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  closeSync(openSync(partial, 'w', 0o600));
  const started = Date.now();
  try {
    const code = await new Promise<number>((done, fail) => {
      // The password goes through the environment, not the command line other users can read.
      const url = new URL(config.database.url);
      const password = decodeURIComponent(url.password);
      url.password = '';
      const env = password ? { ...process.env, PGPASSWORD: password } : process.env;
      const child = spawn(pgDump, ['--format=custom', '--no-owner', `--file=${partial}`, `--dbname=${url.toString()}`], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env,
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', fail);
      child.on('close', (status) =>
        status === 0 ? done(0) : fail(new BackupError(`pg_dump failed (exit ${status}): ${stderr.trim().split('\n').pop() ?? ''}`)),
      );
    });
    chmodSync(partial, 0o600);
    renameSync(partial, target);
    out(
      `backup: ${target} (${statSync(target).size} bytes, pg_dump custom format: restore with pg_restore) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return code;
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
}
