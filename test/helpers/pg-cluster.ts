/**
 * A throwaway PostgreSQL cluster of its own (initdb + pg_ctl on a free loopback port, as .ci/run
 * starts one), for tests that restart the database server under load: never the shared server. Run
 * as the `postgres` user when the tests run as root (initdb refuses root).
 */
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TEST_DATABASE_URL } from './database.js';
import { freePort } from './process.js';

const run = promisify(execFile);
const ROOT = '/usr/lib/postgresql';

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:<port>/gatewayd (created empty). */
  url: string;
  /** Stops the server (`immediate`: as a crash, recovered from the WAL on start) and starts it again. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): Promise<void>;
}

/** The newest installed PostgreSQL's bin folder, or undefined. */
export function postgresBinaries(): string | undefined {
  if (!existsSync(ROOT)) return undefined;
  const versions = readdirSync(ROOT)
    .filter((v) => existsSync(join(ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length > 0 ? join(ROOT, versions.at(-1)!, 'bin') : undefined;
}

/** Whether a PostgreSQL is there for the suite: TEST_DATABASE_URL, or a server on 127.0.0.1:5432. */
export async function postgresAvailable(): Promise<boolean> {
  if (TEST_DATABASE_URL) return true;
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 5432 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = postgresBinaries();
  if (!bin) throw new Error(`no PostgreSQL under ${ROOT}`);
  const asRoot = userInfo().uid === 0;
  const as = (cmd: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args));
  const dir = mkdtempSync(join(tmpdir(), 'gatewayd-pg-'));
  chmodSync(dir, 0o700);
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c max_connections=100`;
  const start = () => as('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-o', options, 'start']);
  await start();
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { withClient } = await import('../../src/db/postgres.js');
  await withClient(admin, (c) => c.query(`CREATE DATABASE gatewayd TEMPLATE template0 ENCODING 'UTF8'`));
  return {
    url: `postgres://postgres@127.0.0.1:${port}/gatewayd`,
    async restart(mode = 'immediate') {
      await as('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      await start();
    },
    async destroy() {
      await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
