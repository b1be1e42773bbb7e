/**
 * Test harness: the real app on a freshly migrated database (a SQLite file, or a fresh PostgreSQL
 * database when TEST_DATABASE_URL is set: helpers/database.ts), served by the real HTTP server on a
 * loopback port, with a ManualClock and the log lines captured for assertions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { createApp, type App } from '../../src/app.js';
import { buildConfig, type Config } from '../../src/config.js';
import { openDatabase, type OpenedDatabase } from '../../src/db/database.js';
import { migrateDatabase } from '../../src/db/migrator.js';
import { scratchDatabase } from './database.js';
import { claimNetwork, configuredClaim } from '../../src/db/network-guard.js';
import { loadWatches } from '../../src/watches.js';
import { createDeps } from '../../src/deps.js';
import type { AppDeps } from '../../src/deps.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/log.js';
import { createPrometheusMetrics, type PrometheusMetrics } from '../../src/ops/prometheus.js';
import { VERSION } from '../../src/version.js';
import { HttpClient } from './http.js';

export type ConfigOverrides = Record<string, Record<string, unknown>>;

export interface TestApp {
  baseUrl: string;
  app: App;
  deps: AppDeps;
  /** deps.metrics: prom-client's, whatever metrics.enabled says (tests read them in process). */
  metrics: PrometheusMetrics;
  config: Config;
  clock: ManualClock;
  database: OpenedDatabase;
  dir: string;
  /** Every log line written so far, parsed. */
  logs: Array<Record<string, unknown>>;
  /** Raw log text, for "never contains" assertions. */
  logText(): string;
  /** A new client with its own cookie jar; sends Origin = the public origin by default. */
  client(options?: { origin?: string | null }): HttpClient;
  close(): Promise<void>;
}

export interface TestAppOptions {
  config?: ConfigOverrides;
  /** Start time of the ManualClock (ms). */
  now?: number;
  /** Lets a test adjust the dependencies before the app is built (e.g. add a mailer). */
  beforeCreate?: (deps: AppDeps) => void | Promise<void>;
  /** Lets a test add routes of its own before the server starts (before the first request). */
  beforeServe?: (app: App) => void;
  /** Listen on this port instead of a random one (browser tests set server.public_url to match). */
  port?: number;
  /** Config.devMode, as in a process started by `gatewayd dev`. */
  devMode?: boolean;
}

export function tempDir(prefix = 'gatewayd-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = tempDir();
  const overrides: ConfigOverrides = { ...options.config };
  // A test that names its own SQLite file (one a CLI command wrote) keeps it on either run.
  const scratch = overrides.database?.path === undefined ? await scratchDatabase() : { url: '', drop: async () => undefined };
  overrides.database = { path: join(dir, 'gateway.db'), url: scratch.url, ...(overrides.database ?? {}) };
  overrides.log = { level: 'debug', ...(overrides.log ?? {}) };
  const config = buildConfig(overrides, { devMode: options.devMode === true });
  const clock = new ManualClock(options.now ?? Date.UTC(2026, 0, 15, 12, 0, 0));
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(line);
      cb();
    },
  });
  const log = createLogger(config.log.level, sink);
  const database = openDatabase(config.database);
  await migrateDatabase(database, clock.now());
  await claimNetwork(database, database.path, configuredClaim(config), clock.now());
  const metrics = createPrometheusMetrics({ version: VERSION, log });
  const deps = createDeps({ config, database, log, clock, metrics, watches: await loadWatches(config) });
  if (options.beforeCreate) await options.beforeCreate(deps);
  const app = createApp(deps);
  options.beforeServe?.(app);
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: options.port ?? 0 }) as Server;
    s.once('listening', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    app,
    deps,
    metrics,
    config,
    clock,
    database,
    dir,
    get logs() {
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    logText: () => lines.join('\n'),
    client: (opts = {}) => new HttpClient(baseUrl, opts.origin === undefined ? config.publicOrigin : opts.origin),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await database.close();
      await scratch.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
