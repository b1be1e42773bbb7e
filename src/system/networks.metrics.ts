/**
 * The Prometheus gauges of the networks beside TRON (TRON's own, `gatewayd_chain_*`, are
 * src/chain/chain.health.ts's), one series per network and provider, set at scrape time from what
 * GET /health shows of them (networks.health.ts): every family's watcher that reports there is
 * measured here, with no metric of its own to declare. docs/operations.md lists them.
 */
import { networksHealth } from './networks.health.js';

/** What this needs of the metrics (src/ops/metrics.ts's Metrics has it): a gauge to set, and a hook before each scrape. */
interface GaugeSink {
  gauge<L extends string>(name: string, help: string, labelNames?: readonly L[]): { set(labels: Partial<Record<L, string>>, value: number): void };
  onScrape(fn: () => Promise<void>): void;
}

const STATES = ['stopped', 'idle', 'running', 'degraded'] as const;

export function registerNetworkMetrics(metrics: GaugeSink, deps: Parameters<typeof networksHealth>[0]): void {
  const labels = ['network'] as const;
  const state = metrics.gauge('gatewayd_network_state', "A network's watcher is in this state (1) or not (0)", ['network', 'state']);
  const cursor = metrics.gauge('gatewayd_network_cursor_block', 'Every block up to this one is read as final (NaN before the first read)', labels);
  const head = metrics.gauge('gatewayd_network_final_head_block', 'The newest final block the providers show (NaN before the first)', labels);
  const behind = metrics.gauge('gatewayd_network_behind_blocks', 'Final blocks not read yet (NaN before the first read)', labels);
  const disputes = metrics.gauge(
    'gatewayd_network_disputes',
    'Open disputes: blocks held because the providers disagree about them; from the database',
    labels,
  );
  const up = metrics.gauge('gatewayd_network_provider_up', 'A provider answers (1) or is backing off or failing (0)', ['network', 'provider']);
  const refusals = metrics.gauge(
    'gatewayd_network_provider_refusals',
    'What a provider refused, counted once each kind (a large range, bursts, eth_getLogs...)',
    ['network', 'provider'],
  );
  metrics.onScrape(async () => {
    for (const n of await networksHealth(deps)) {
      if (n.family === 'tron') continue;
      const network = { network: n.network };
      for (const s of STATES) state.set({ ...network, state: s }, n.state === s ? 1 : 0);
      cursor.set(network, n.cursor_block ?? Number.NaN);
      head.set(network, n.final_head ?? Number.NaN);
      behind.set(network, n.behind_blocks ?? Number.NaN);
      disputes.set(network, n.disputes);
      for (const p of n.providers) {
        up.set({ ...network, provider: p.name }, p.state === 'ok' ? 1 : 0);
        refusals.set({ ...network, provider: p.name }, p.refuses.length);
      }
    }
  });
}
