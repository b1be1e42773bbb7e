/** Starts the real `gatewayd serve` (bin/gatewayd) for the benchmarks and times its start-up. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ConfigOverrides } from '../../test/helpers/app.js';
import { cleanEnv, freePort, GATEWAYD_BIN, writeConfig } from '../../test/helpers/process.js';
import { cpuMs } from './measure.js';

export interface BenchGateway {
  baseUrl: string;
  api: string;
  pid: number;
  /** Milliseconds from spawn to the first 200 from /api/v1/health (polled every 5 ms). */
  startupMs: number;
  /** CPU time the process used until then (ms): what the start-up costs whatever else runs on the machine. */
  startupCpuMs: number;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Runs gatewayd on `dir/gateway.db` (already seeded) with rate limits off and warn-level logs. */
/**
 * BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") is passed to node for profiling.
 * `binary`: run that single executable (npm run build:binary) instead of node bin/gatewayd.
 */
export async function startBenchGateway(dir: string, config: ConfigOverrides = {}, binary?: string): Promise<BenchGateway> {
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const port = await freePort();
  const full: ConfigOverrides = {
    ...config,
    server: { listen: `127.0.0.1:${port}`, public_url: `http://127.0.0.1:${port}`, secret: 'bench-secret-0123456789abcdef', ...(config.server ?? {}) },
    database: { path: join(dir, 'gateway.db') },
    rate_limits: { api_per_key: 0, public_per_ip: 0, invoices_per_merchant: 0, ...(config.rate_limits ?? {}) },
    log: { level: 'warn', ...(config.log ?? {}) },
  };
  const configPath = writeConfig(dir, full);
  const started = performance.now();
  const [command, args] = binary
    ? [binary, ['serve', '--config', configPath]]
    : [process.execPath, [...nodeArgs, GATEWAYD_BIN, 'serve', '--config', configPath]];
  const child = spawn(command, args, { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gatewayd exited with ${child.exitCode}: ${out}`);
    try {
      if ((await fetch(`${baseUrl}/api/v1/health`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gatewayd did not become healthy: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const startupMs = performance.now() - started;
  const startupCpuMs = cpuMs(child.pid!);
  return {
    baseUrl,
    api: `${baseUrl}/api/v1`,
    pid: child.pid!,
    startupMs,
    startupCpuMs,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
