/**
 * `gatewayd serve`: open the database (migrating a brand-new one), listen, start the workers,
 * and shut down gracefully on SIGTERM/SIGINT: stop accepting, finish in-flight requests, stop the
 * workers, close the database.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve as nodeServe } from '@hono/node-server';
import { createApp, type App } from './app.js';
import { parseListen, type Config } from './config.js';
import { ensureDatabaseFile, openDatabase } from './db/database.js';
import { configuredClaim, prepareDatabase, type NetworkClaim } from './db/network-guard.js';
import { createDeps } from './deps.js';
import { loadWatches } from './watches.js';
import type { AppDeps } from './app-deps.js';
import { createLogger, type Log } from './lib/log.js';
import { startLoop, type LoopHandle } from './lib/loop.js';
import { releaseStartupMemory } from './lib/memory.js';
import type { MetricsServer } from './ops/prometheus.js';
import { createWorkers, recoverAfterCrash } from './workers.js';
import { VERSION } from './version.js';

export class ServeError extends Error {}

/** What to do when the port is taken: the setting, its variable and the flag, with a free example. */
export function addressInUse(listen: string): string {
  const at = parseListen(listen);
  const other = at ? `${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port === 65535 ? at.port - 1 : at.port + 1}` : '127.0.0.1:8081';
  return `address already in use: another process listens there. Choose another address with --listen ${other}, GATEWAYD_SERVER_LISTEN=${other} or server.listen in the configuration file`;
}

/** When an idle process gives back what start-up grew (src/lib/memory.ts). */
const STARTUP_SETTLE_MS = 2000;

export interface RunningServer {
  url: string;
  deps: AppDeps;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The network the database must record (default: the configured one; `gatewayd dev` words its own). */
  claim?: NetworkClaim;
  /** Routes added to the app before it listens (`gatewayd dev`'s control routes). */
  extend?: (app: App, deps: AppDeps) => void;
}

export async function startServer(config: Config, log: Log = createLogger(config.log.level), options: StartOptions = {}): Promise<RunningServer> {
  const claim = options.claim ?? configuredClaim(config);
  if (config.secretGenerated) {
    log.warn('server.secret is not set: using a random secret for this process (run `gatewayd init` to write one)');
  }
  const created = !config.database.url && ensureDatabaseFile(config.database.path);
  const database = openDatabase(config.database);
  try {
    const applied = await prepareDatabase(database, database.path, claim, created, Date.now());
    if (applied.length > 0) log.info({ applied: applied.map((m) => m.version) }, 'new database: migrations applied');
  } catch (err) {
    await database.close();
    throw err;
  }

  // prom-client is loaded only when the metrics are served (src/ops/metrics.ts).
  const prometheus = config.metrics.enabled ? await import('./ops/prometheus.js') : undefined;
  const metrics = prometheus?.createPrometheusMetrics({ version: VERSION, log });
  // The EVM, Solana and TON watchers are loaded only for the networks configured (src/watches.ts).
  const watches = await loadWatches(config);
  const deps = createDeps({ config, database, log, metrics, watches });
  await recoverAfterCrash(deps);
  const app = createApp(deps);
  options.extend?.(app, deps);
  const listen = parseListen(config.server.listen)!;

  const server = await new Promise<Server>((resolve, reject) => {
    const s = nodeServe({ fetch: app.fetch, hostname: listen.host, port: listen.port }) as Server;
    s.once('error', (err: NodeJS.ErrnoException) => {
      reject(new ServeError(`server.listen ${config.server.listen}: ${err.code === 'EADDRINUSE' ? addressInUse(config.server.listen) : err.message}`));
    });
    s.once('listening', () => resolve(s));
  }).catch(async (err) => {
    await database.close();
    throw err;
  });
  let metricsServer: MetricsServer | undefined;
  if (prometheus && metrics) {
    try {
      metricsServer = await prometheus.startMetricsServer(metrics, config.metrics.listen, log);
    } catch (err) {
      server.close();
      await database.close();
      throw new ServeError((err as Error).message);
    }
    log.info({ url: metricsServer.url }, 'metrics listening');
  }
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;

  const loops: LoopHandle[] = createWorkers(deps, watches).map((w) => startLoop(w, log.child({ worker: w.name })));
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url, version: VERSION, database: config.database.path, public_url: config.server.public_url }, 'gatewayd listening');
  // Once start-up's garbage is garbage (the first watcher poll included): a few ms of one full collection.
  setTimeout(releaseStartupMemory, STARTUP_SETTLE_MS).unref();

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      log.info('shutting down: no new connections, finishing in-flight requests');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), 10_000);
      await closed;
      clearTimeout(force);
      await metricsServer?.close();
      await Promise.all(loops.map((l) => l.stop()));
      deps.mailer.close();
      await database.close();
      log.info('stopped');
    })());
  return { url, deps, stop };
}

/** Runs until a signal; resolves with the exit code. */
export async function runServe(config: Config): Promise<number> {
  const log = createLogger(config.log.level);
  const running = await startServer(config, log);
  return untilSignal(log, () => running.stop());
}

/** Waits for SIGTERM or SIGINT, then stops; resolves with 0 when the stop went well, else 1. */
export function untilSignal(log: Log, stop: () => Promise<void>): Promise<number> {
  return new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'signal received');
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      stop().then(
        () => resolve(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
