/** The chain watcher's figures as /health and the metrics show them. */
import { iso, isoOrNull } from '../lib/clock.js';
import type { Metrics } from '../ops/metrics.js';
import { listOpenDisputes } from '../payments/scan.repo.js';
import type { WatcherStatus } from '../core/watcher-status.js';
import type { ChainRuntime } from './chain.runtime.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'db' | 'config' | 'clock'> & { watcherStatus: WatcherStatus; chain: ChainRuntime };

/**
 * The `watcher` object of GET /health. The disputes come from the database (chain_disputes): the
 * same in every instance, whichever one runs the scanner, and after a restart.
 */
export async function watcherHealth(deps: Pick<Deps, 'watcherStatus' | 'chain' | 'db' | 'config' | 'clock'>) {
  const disputes = await listOpenDisputes(deps.db, deps.config.network);
  return {
    state: deps.watcherStatus.state,
    lag_seconds: deps.watcherStatus.lagSeconds,
    scan: { ...deps.chain.figures, disputed_blocks: disputes.length },
    disputes: disputes.map((d) => ({
      block: d.block,
      tx_hash: d.txHash,
      reason: d.reason,
      since: iso(d.since),
      last_seen_at: iso(d.lastSeen),
      mailed_at: isoOrNull(d.notifiedAt),
    })),
    providers: deps.chain.pool
      .health(deps.clock.now())
      .map((p) => ({ ...p, last_ok_at: isoOrNull(p.last_ok_at), retry_at: isoOrNull(p.retry_at), set_aside_until: isoOrNull(p.set_aside_until) })),
  };
}

/** Scrape-time gauges of the block scanner and of each provider. */
export function registerChainMetrics(metrics: Metrics, deps: Pick<Deps, 'chain' | 'db' | 'config' | 'clock'>): void {
  const block = metrics.gauge('gatewayd_chain_scan_block', 'The newest block the head follower has read (NaN before the first)');
  const head = metrics.gauge('gatewayd_chain_solid_head_block', 'The newest solidified block known (NaN before the first)');
  const behind = metrics.gauge('gatewayd_chain_scan_behind_blocks', 'Solidified blocks the head follower has not read yet');
  const gap = metrics.gauge('gatewayd_chain_scan_gap_blocks', 'Blocks behind the follower still to be backfilled');
  const inconsistent = metrics.gauge('gatewayd_chain_inconsistent_blocks', 'Blocks whose two reads disagreed since the start (never trusted)');
  const disputed = metrics.gauge(
    'gatewayd_chain_disputed_blocks',
    'Blocks held as disputed now (the providers disagree; nothing from them confirms); from the database',
  );
  const oldest = metrics.gauge('gatewayd_chain_oldest_dispute_seconds', 'Age of the oldest open dispute in seconds (0 when none)');
  const failedPasses = metrics.gauge('gatewayd_chain_failed_passes', 'Scanner passes in a row that ended in an exception');
  const refused = metrics.gauge('gatewayd_chain_provider_refused_heads', 'Heads a TRON provider served that were refused as not credible', ['provider']);
  const malformed = metrics.gauge('gatewayd_chain_provider_malformed_reads', 'Answers of a TRON provider refused as malformed', ['provider']);
  const up = metrics.gauge('gatewayd_chain_provider_up', 'A TRON provider answers (1) or is backing off or set aside (0)', ['provider']);
  const setAside = metrics.gauge(
    'gatewayd_chain_provider_set_aside',
    'A TRON provider is set aside (1: the others outvoted its answer about a block; asked after them) or not (0)',
    ['provider'],
  );
  const outvoted = metrics.gauge(
    'gatewayd_chain_provider_outvoted_blocks',
    'Blocks about which the other TRON providers outvoted this one (its block answer, or its answer by transaction id) since the start',
    ['provider'],
  );
  const requests = metrics.gauge('gatewayd_chain_provider_requests', 'Requests made to a TRON provider since the start', ['provider']);
  const failures = metrics.gauge('gatewayd_chain_provider_failures', 'Failed requests to a TRON provider since the start', ['provider']);
  const bytes = metrics.gauge('gatewayd_chain_provider_received_bytes', 'Body bytes received from a TRON provider since the start', ['provider']);
  metrics.onScrape(async () => {
    const open = await listOpenDisputes(deps.db, deps.config.network);
    disputed.set(open.length);
    oldest.set(open.length === 0 ? 0 : Math.max(0, Math.round((deps.clock.now() - Math.min(...open.map((d) => d.since))) / 1000)));
    const f = deps.chain.figures;
    block.set(f.block ?? Number.NaN);
    head.set(f.solid_head ?? Number.NaN);
    behind.set(f.behind_blocks ?? Number.NaN);
    gap.set(f.gap_blocks);
    inconsistent.set(f.inconsistent_blocks);
    failedPasses.set(deps.chain.failedPasses);
    deps.chain.pool.health(deps.clock.now());
    for (const p of deps.chain.pool.providers) {
      const labels = { provider: p.health.name };
      up.set(labels, p.health.state === 'ok' ? 1 : 0);
      requests.set(labels, p.client.stats.requests);
      failures.set(labels, p.health.failures);
      bytes.set(labels, p.client.stats.bytes);
      refused.set(labels, p.health.refused_heads);
      malformed.set(labels, p.health.malformed_reads);
      setAside.set(labels, p.health.state === 'set_aside' ? 1 : 0);
      outvoted.set(labels, p.health.outvoted_blocks);
    }
  });
}
