/** Starts the real `gatewayd` executable (bin/gatewayd) as a child process for end-to-end tests. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { stringify } from 'smol-toml';
import { tempDir, type ConfigOverrides } from './app.js';

export const GATEWAYD_BIN = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../../bin/gatewayd');

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a gatewayd command to completion. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, [GATEWAYD_BIN, ...args], {
    cwd: options.cwd,
    env: options.env ?? cleanEnv(),
    input: options.input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The parent's environment without GATEWAYD_* variables (so a developer's settings do not leak in). */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GATEWAYD_')) env[k] = v;
  return { ...env, ...extra };
}

export interface GatewayProcess {
  baseUrl: string;
  port: number;
  dir: string;
  configPath: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

export function writeConfig(dir: string, config: ConfigOverrides): string {
  const path = join(dir, 'gatewayd.toml');
  writeFileSync(path, stringify(config));
  return path;
}

/**
 * Starts `gatewayd serve` (or another long-running command, such as `dev`) on a free loopback port
 * and waits until /api/v1/health answers.
 */
export async function startGateway(
  options: { config?: ConfigOverrides; dir?: string; env?: Record<string, string>; command?: string[] } = {},
): Promise<GatewayProcess> {
  const dir = options.dir ?? tempDir('gatewayd-proc-');
  const port = await freePort();
  const config: ConfigOverrides = { ...options.config };
  config.server = { listen: `127.0.0.1:${port}`, public_url: `http://127.0.0.1:${port}`, secret: 'test-secret-0123456789abcdef', ...(config.server ?? {}) };
  config.database = { path: join(dir, 'gateway.db'), ...(config.database ?? {}) };
  const configPath = writeConfig(dir, config);
  const child = spawn(process.execPath, [GATEWAYD_BIN, ...(options.command ?? ['serve']), '--config', configPath], {
    env: cleanEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gatewayd exited with ${child.exitCode}: ${out}`);
    try {
      const res = await fetch(`${baseUrl}/api/v1/health`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gatewayd did not become healthy: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    baseUrl,
    port,
    dir,
    configPath,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
