/**
 * Prometheus metrics (prom-client). One registry per process (per app in tests), served by
 * `serve` on its own listener (metrics.listen, loopback by default) only when metrics.enabled:
 * never on the public listener, so a reverse proxy cannot expose it by accident.
 *
 * Built in: HTTP requests by route pattern (never the raw path: paths carry capability tokens),
 * invoices and deliveries by status read from the database at scrape time, the watcher's state and
 * lag, and Node's process figures. Features add their own through counter()/gauge()/histogram()
 * and onScrape().
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { parseListen } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Log } from '../lib/log.js';
import { readOperationalFigures } from './ops.repo.js';

const INVOICE_STATUSES = ['pending', 'confirmed', 'expired', 'review'] as const;
const DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'failed', 'cancelled'] as const;
const WATCHER_STATES = ['stopped', 'idle', 'running', 'degraded'] as const;

/** The subset of the watcher status metrics reads (the same object /health shows). */
export interface WatcherFigures {
  state: (typeof WATCHER_STATES)[number];
  lagSeconds: number | null;
}

export interface Metrics {
  readonly registry: Registry;
  /** Get-or-create, so a feature can declare its metric where it is used. Names get no prefix. */
  counter<L extends string>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  gauge<L extends string>(name: string, help: string, labelNames?: readonly L[]): Gauge<L>;
  histogram<L extends string>(name: string, help: string, labelNames?: readonly L[], buckets?: number[]): Histogram<L>;
  /** Runs before every scrape (e.g. to set gauges from the database). Errors are logged, not fatal. */
  onScrape(fn: () => void | Promise<void>): void;
  /** Called by the request middleware. route is the matched pattern, e.g. /api/v1/invoices/:id. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** The exposition text after running the scrape hooks. */
  render(): Promise<{ contentType: string; body: string }>;
}

export function createMetrics(opts: { version: string; log: Log }): Metrics {
  const registry = new Registry();
  const hooks: Array<() => void | Promise<void>> = [];
  const existing = (name: string) => registry.getSingleMetric(name);

  const metrics: Metrics = {
    registry,
    counter(name, help, labelNames = []) {
      return (existing(name) as Counter<never>) ?? new Counter({ name, help, labelNames, registers: [registry] });
    },
    gauge(name, help, labelNames = []) {
      return (existing(name) as Gauge<never>) ?? new Gauge({ name, help, labelNames, registers: [registry] });
    },
    histogram(name, help, labelNames = [], buckets) {
      return (existing(name) as Histogram<never>) ?? new Histogram({ name, help, labelNames, registers: [registry], ...(buckets ? { buckets } : {}) });
    },
    onScrape(fn) {
      hooks.push(fn);
    },
    observeRequest(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
    async render() {
      for (const hook of hooks) {
        try {
          await hook();
        } catch (err) {
          opts.log.error({ err }, 'metrics: a scrape hook failed');
        }
      }
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };

  const requests = metrics.counter('gatewayd_http_requests_total', 'HTTP requests answered, by route pattern and status', ['method', 'route', 'status']);
  const duration = metrics.histogram(
    'gatewayd_http_request_duration_seconds',
    'Time to answer an HTTP request, by route pattern',
    ['method', 'route'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  metrics.gauge('gatewayd_info', 'Always 1; the version label names the running release', ['version']).set({ version: opts.version }, 1);
  return metrics;
}

/** The built-in scrape-time gauges: database figures and the watcher. */
export function registerCoreGauges(metrics: Metrics, deps: { db: Db; clock: Clock; watcherStatus: WatcherFigures }): void {
  const invoices = metrics.gauge('gatewayd_invoices', 'Invoices by status (all merchants)', ['status']);
  const lastConfirmed = metrics.gauge('gatewayd_last_confirmation_timestamp_seconds', 'When the newest confirmed invoice was confirmed (NaN when none)');
  const deliveries = metrics.gauge('gatewayd_webhook_deliveries', 'Webhook deliveries by status', ['status']);
  const backlog = metrics.gauge('gatewayd_webhook_delivery_backlog', 'Deliveries waiting to be sent (pending or sending), as /health reports');
  const oldest = metrics.gauge('gatewayd_webhook_delivery_oldest_waiting_seconds', 'Age of the oldest waiting delivery (0 when none)');
  const watcherState = metrics.gauge('gatewayd_watcher_state', 'Chain watcher state: 1 for the current one', ['state']);
  const watcherLag = metrics.gauge('gatewayd_watcher_lag_seconds', 'How far behind the chain the watcher is (NaN when nothing is watched)');

  metrics.onScrape(async () => {
    const f = await readOperationalFigures(deps.db);
    for (const s of INVOICE_STATUSES) invoices.set({ status: s }, f.invoicesByStatus[s] ?? 0);
    lastConfirmed.set(f.lastConfirmedAt === undefined ? Number.NaN : f.lastConfirmedAt / 1000);
    for (const s of DELIVERY_STATUSES) deliveries.set({ status: s }, f.deliveriesByStatus[s] ?? 0);
    backlog.set((f.deliveriesByStatus.pending ?? 0) + (f.deliveriesByStatus.sending ?? 0));
    const now = deps.clock.now();
    oldest.set(f.oldestWaitingDeliveryAt === undefined ? 0 : Math.max(0, (now - f.oldestWaitingDeliveryAt) / 1000));
    for (const s of WATCHER_STATES) watcherState.set({ state: s }, deps.watcherStatus.state === s ? 1 : 0);
    watcherLag.set(deps.watcherStatus.lagSeconds ?? Number.NaN);
  });
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

const withProcessMetrics = new WeakSet<Registry>();

/**
 * GET /metrics on its own listener; anything else is 404. Node's process figures (memory, CPU,
 * event-loop delay, GC) are collected only from here on: their observers cost something, and
 * nobody reads them while metrics are off.
 */
export async function startMetricsServer(metrics: Metrics, listen: string, log: Log): Promise<MetricsServer> {
  const address = parseListen(listen);
  if (!address) throw new Error(`metrics.listen: expected host:port (got ${JSON.stringify(listen)})`);
  if (!withProcessMetrics.has(metrics.registry)) {
    collectDefaultMetrics({ register: metrics.registry });
    withProcessMetrics.add(metrics.registry);
  }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: the metrics listener serves GET /metrics only\n');
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        log.error({ err }, 'metrics: rendering failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`metrics.listen ${listen}: ${err.code === 'EADDRINUSE' ? 'address already in use' : err.message}`)),
    );
    server.listen(address.port, address.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${host}:${bound.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
