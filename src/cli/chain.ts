/**
 * `gatewayd chain status` and `gatewayd chain rescan --from-block N | --from-time T`.
 *
 * status: the scanner's cursor, unread ranges and open disputes from the database, and (when the
 * server answers on server.listen) each provider's health from its /health.
 * rescan: records the range from N (or from the block of time T, estimated low from the cursor)
 * up to the cursor as an unread range and keeps the scanner active for an hour; the running
 * server reads it with the time left in its passes. Idempotent: a transfer already recorded is
 * never recorded again (one row per transaction log), and asking twice merges the ranges.
 */
import type { Config } from '../config.js';
import { localUrl } from '../config.js';
import { openDatabase } from '../db/database.js';
import { databaseFingerprint } from '../db/network-guard.js';
import { HOUR } from '../lib/clock.js';
import { insertGap, listGaps, listOpenDisputes, loadScanState, saveScanState } from '../payments/scan.repo.js';
import { UsageError } from './usage.js';

/** Blocks read before the block estimated for --from-time (missed slots make real numbers higher). */
const TIME_MARGIN_BLOCKS = 20;

type Out = (line: string) => void;

export async function runChainStatus(config: Config, out: Out): Promise<number> {
  const database = openDatabase(config.database, { max: 1 });
  let databaseId: string | null = null;
  try {
    const network = config.network;
    const state = await loadScanState(database.db, network);
    const gaps = await listGaps(database.db, network);
    databaseId = await databaseFingerprint(database.db);
    out(`network: ${network.id}`);
    if (!state) out('cursor: none yet (the scanner has not run on this database)');
    else
      out(
        `cursor: block ${state.cursorBlock}, every block read up to ${new Date(state.cursorTime).toISOString()}; active until ${new Date(state.activeUntil).toISOString()}`,
      );
    out(`gaps: ${gaps.length === 0 ? 'none' : ''}`);
    for (const g of gaps)
      out(
        `  blocks ${g.fromBlock}-${g.toBlock} (${g.toBlock - g.fromBlock + 1}), ${new Date(g.afterTime).toISOString()} to ${new Date(g.beforeTime).toISOString()}`,
      );
    // Durable: shown whether or not the server answers.
    const disputes = await listOpenDisputes(database.db, network);
    out(`disputes: ${disputes.length === 0 ? 'none' : `${disputes.length} open (nothing from these blocks confirms until the providers agree)`}`);
    for (const d of disputes) {
      const mailed = d.notifiedAt === null ? 'not mailed' : `staff mailed ${new Date(d.notifiedAt).toISOString()}`;
      out(
        `  block ${d.block}${d.txHash ? ` (transaction ${d.txHash})` : ''} since ${new Date(d.since).toISOString()}, last seen ${new Date(d.lastSeen).toISOString()}, ${mailed}: ${d.reason}`,
      );
    }
  } finally {
    await database.close();
  }
  const url = `${localUrl(config.server.listen)}/api/v1/health`;
  let health: {
    network?: string;
    database_id?: string | null;
    watcher?: {
      state: string;
      scan?: Record<string, unknown>;
      providers?: Array<Record<string, unknown>>;
    };
  };
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    health = (await res.json()) as typeof health;
  } catch {
    out(`server: not answering on ${url}; provider health is known to the running server only`);
    return 0;
  }
  // The server on that address may be another instance (a dev server, another database): its providers are not this database's.
  const where = config.database.url ? 'the configured PostgreSQL database' : config.database.path;
  if (health.network !== undefined && health.network !== config.network.id) {
    out(
      `server: ${url} runs ${health.network}, this database is ${config.network.id}: another instance; its provider health is not shown (give --config of that instance)`,
    );
    return 0;
  }
  if (health.database_id !== undefined && health.database_id !== databaseId) {
    out(`server: ${url} uses another database than ${where}: another instance; its provider health is not shown (give --config of that instance)`);
    return 0;
  }
  out(`server: ${url}, the same instance (network ${config.network.id}, this database)`);
  const w = health.watcher;
  out(`watcher: ${w?.state ?? 'unknown'}${w?.scan?.reason ? ` (${String(w.scan.reason)})` : ''}`);
  for (const p of w?.providers ?? []) {
    out(
      `provider ${String(p.name)}: ${String(p.state)}, ${String(p.requests)} requests, ${String(p.failures)} failures, ${String(p.refused_heads ?? 0)} refused heads, ${String(p.malformed_reads ?? 0)} malformed reads, ${String(p.inconsistent_blocks)} inconsistent blocks, ${String(p.outvoted_blocks ?? 0)} outvoted blocks${p.set_aside_until ? ` (set aside until ${String(p.set_aside_until)})` : ''}${p.last_error ? `; last error: ${String(p.last_error)}` : ''}`,
    );
  }
  return 0;
}

export async function runChainRescan(config: Config, from: { block?: string; time?: string }, out: Out): Promise<number> {
  if ((from.block === undefined) === (from.time === undefined)) throw new UsageError('chain rescan needs exactly one of --from-block N or --from-time T');
  const database = openDatabase(config.database, { max: 1 });
  try {
    const network = config.network;
    const state = await loadScanState(database.db, network);
    if (!state) throw new UsageError('the scanner has not run on this database yet: there is nothing to rescan');
    let fromBlock: number;
    let afterTime: number;
    if (from.block !== undefined) {
      if (!/^\d{1,15}$/.test(from.block)) throw new UsageError(`--from-block must be a block number, not "${from.block}"`);
      fromBlock = Number(from.block);
      afterTime = state.cursorTime - (state.cursorBlock - fromBlock + TIME_MARGIN_BLOCKS) * network.blockIntervalMs;
    } else {
      const t = Date.parse(from.time!);
      if (!Number.isFinite(t)) throw new UsageError(`--from-time must be an ISO 8601 time such as 2026-01-15T12:00:00Z, not "${from.time}"`);
      fromBlock = state.cursorBlock - Math.ceil(Math.max(0, state.cursorTime - t) / network.blockIntervalMs) - TIME_MARGIN_BLOCKS;
      afterTime = t - TIME_MARGIN_BLOCKS * network.blockIntervalMs;
    }
    if (fromBlock > state.cursorBlock) throw new UsageError(`block ${fromBlock} is not read yet (the cursor is at ${state.cursorBlock}): nothing to rescan`);
    const now = Date.now();
    await insertGap(database.db, network, { fromBlock, toBlock: state.cursorBlock, afterTime, beforeTime: state.cursorTime });
    await saveScanState(database.db, network, { ...state, activeUntil: Math.max(state.activeUntil, now + HOUR) }, now);
    out(
      `rescan recorded: blocks ${fromBlock}-${state.cursorBlock} (${state.cursorBlock - fromBlock + 1}); the running server reads them with the time left in its passes`,
    );
    out('anything already recorded is not recorded again; `gatewayd chain status` shows the range shrink');
    return 0;
  } finally {
    await database.close();
  }
}
