/**
 * The control token of a `gatewayd dev` instance: /_dev/ answers only requests that carry it
 * (docs/test-networks.md). `gatewayd dev` makes a new one at each start, prints it, and writes it to
 * a file only this user can read, named after the instance's port, so the subcommands (`gatewayd
 * dev pay`, ...) of the same user find it by themselves: the tour in the README works unchanged.
 * A web page cannot read the file, so neither a page the developer visits nor a DNS-rebinding one
 * can call the control routes.
 */
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomToken } from '../lib/crypto.js';

/** Marks every /_dev/ answer, so a `gatewayd dev` client can tell a dev instance from any other server. */
export const DEV_HEADER = 'x-gatewayd-dev';

/** The request header that carries the token. */
export const DEV_TOKEN_HEADER = 'x-gatewayd-dev-token';

/** This user's folder of dev tokens (0700, refused when it is not this user's own, e.g. planted by another user). */
function tokenDir(create: boolean): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const dir = join(tmpdir(), `gatewayd-dev-${uid ?? 'user'}`);
  if (create) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private folder of this user; remove it and start again`);
  }
  return dir;
}

export function devTokenPath(port: number, create = false): string {
  return join(tokenDir(create), `port-${port}.token`);
}

/** A new token (made before the server listens, since its routes check it). */
export function newDevToken(): string {
  return randomToken(32);
}

/** Writes the token of the instance on `port` to its file (0600); returns the file's path. */
export function writeDevToken(port: number, token: string): string {
  const path = devTokenPath(port, true);
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** The token of the instance on `port`, if this user's file has one. */
export function readDevToken(port: number): string | undefined {
  try {
    return readFileSync(devTokenPath(port), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function removeDevToken(path: string): void {
  rmSync(path, { force: true });
}

/** Whether a Host header names this machine by a loopback literal or `localhost` (any port). */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  if (!host) return false;
  const m = /^(\[[^\]]+\]|[^:]+)(?::\d{1,5})?$/.exec(host.trim().toLowerCase());
  if (!m) return false;
  const name = m[1]!;
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
