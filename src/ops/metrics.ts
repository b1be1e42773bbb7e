/**
 * Prometheus metrics as features see them. Features declare their metrics through
 * counter()/gauge()/histogram() and onScrape(), whether or not metrics are enabled: with
 * metrics.enabled they are prom-client's (src/ops/prometheus.ts, loaded only then, served by `serve`
 * on its own listener), otherwise the stand-ins of disabledMetrics(), which keep nothing. Nobody can
 * read metrics that are off, so an idle server then neither loads prom-client (with
 * `@opentelemetry/api`, about 1 MB of memory, issue 32) nor counts every request.
 */
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { readOperationalFigures } from './ops.repo.js';

const INVOICE_STATUSES = ['pending', 'confirmed', 'expired', 'review'] as const;
const DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'failed', 'cancelled'] as const;
const WATCHER_STATES = ['stopped', 'idle', 'running', 'degraded'] as const;

/** The subset of the watcher status metrics reads (the same object /health shows). */
export interface WatcherFigures {
  state: (typeof WATCHER_STATES)[number];
  lagSeconds: number | null;
}

type LabelValues<L extends string> = Partial<Record<L, string | number>>;

/** What features call on a metric (prom-client's Counter, Gauge and Histogram have these). */
export interface CounterMetric<L extends string> {
  inc(labels: LabelValues<L>, value?: number): void;
  inc(value?: number): void;
}
export interface GaugeMetric<L extends string> {
  set(labels: LabelValues<L>, value: number): void;
  set(value: number): void;
}
export interface HistogramMetric<L extends string> {
  observe(labels: LabelValues<L>, value: number): void;
  observe(value: number): void;
}

export interface Metrics {
  /** Get-or-create, so a feature can declare its metric where it is used. Names get no prefix. */
  counter<L extends string>(name: string, help: string, labelNames?: readonly L[]): CounterMetric<L>;
  gauge<L extends string>(name: string, help: string, labelNames?: readonly L[]): GaugeMetric<L>;
  histogram<L extends string>(name: string, help: string, labelNames?: readonly L[], buckets?: number[]): HistogramMetric<L>;
  /** Runs before every scrape (e.g. to set gauges from the database). Errors are logged, not fatal. */
  onScrape(fn: () => void | Promise<void>): void;
  /** Called by the request middleware. route is the matched pattern, e.g. /api/v1/invoices/:id. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** The exposition text after running the scrape hooks. */
  render(): Promise<{ contentType: string; body: string }>;
}

const IGNORED = { inc() {}, set() {}, observe() {} };

/** Metrics with metrics.enabled false: every metric ignores what it is given and no hook ever runs. */
export function disabledMetrics(): Metrics {
  return {
    counter: () => IGNORED,
    gauge: () => IGNORED,
    histogram: () => IGNORED,
    onScrape() {},
    observeRequest() {},
    render() {
      return Promise.reject(new Error('metrics are disabled (metrics.enabled = false)'));
    },
  };
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
