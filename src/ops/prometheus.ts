/**
 * Prometheus metrics (prom-client), loaded only when metrics.enabled (src/ops/metrics.ts has the
 * interface and the stand-ins used otherwise). One registry per process (per app in tests), served
 * by `serve` on its own listener (metrics.listen, loopback by default): never on the public
 * listener, so a reverse proxy cannot expose it by accident.
 *
 * Built in: HTTP requests by route pattern (never the raw path: paths carry capability tokens),
 * invoices and deliveries by status read from the database at scrape time (registerCoreGauges in metrics.ts),
 * the watcher's state and lag, and Node's process figures. Features add their own through
 * counter()/gauge()/histogram() and onScrape().
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { parseListen } from '../config.js';
import type { Log } from '../lib/log.js';
import type { Metrics } from './metrics.js';

/** prom-client's registry behind the Metrics interface; startMetricsServer serves it. */
export interface PrometheusMetrics extends Metrics {
  readonly registry: Registry;
}

export function createPrometheusMetrics(opts: { version: string; log: Log }): PrometheusMetrics {
  const registry = new Registry();
  const hooks: Array<() => void | Promise<void>> = [];
  const existing = (name: string) => registry.getSingleMetric(name);

  const metrics: PrometheusMetrics = {
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
export async function startMetricsServer(metrics: PrometheusMetrics, listen: string, log: Log): Promise<MetricsServer> {
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
