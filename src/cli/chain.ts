/**
 * `gatewayd chain status [--network ID]` and `gatewayd chain rescan [--network ID] --from-block N | --from-time T`.
 *
 * status: per network the instance watches (or the one named), the watcher's cursor, unread ranges
 * and open disputes from the database, and (when the server on server.listen answers as the same
 * instance: the same network and database id) each provider's health from its /api/v1/health.
 * rescan: on the TRON network unless --network names another, records the range from N (or from
 * the block of time T, estimated low from the cursor)
 * up to the cursor as an unread range and keeps the scanner active for an hour; the running
 * server reads it with the time left in its passes. Idempotent: a transfer already recorded is
 * never recorded again (one row per transaction log), and asking twice merges the ranges.
 */
import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { ConfigError, localUrl } from '../config.js';
import { openDatabase, type OpenedDatabase } from '../db/database.js';
import { isEmpty } from '../db/migrator.js';
import { databaseId } from '../db/network-guard.js';
import { HOUR } from '../lib/clock.js';
import { insertGap, listGaps, listOpenDisputes, loadScanState, saveScanState } from '../payments/scan.repo.js';
import { UsageError } from './usage.js';
import type { Network } from '../chains/networks.js';

/** Blocks read before the block estimated for --from-time (missed slots make real numbers higher). */
const TIME_MARGIN_BLOCKS = 20;

type Out = (line: string) => void;

/**
 * The configured database, when an instance has used it: a missing SQLite file is not created
 * (these tools only read and add ranges), and an empty database is refused with what to do.
 */
async function instanceDatabase(config: Config): Promise<OpenedDatabase> {
  const where = config.database.url ? 'the configured PostgreSQL database' : config.database.path;
  const refusal = `${where} holds no gatewayd database yet: give --config of the instance whose chain you mean, or start it once (gatewayd serve)`;
  if (!config.database.url && !existsSync(config.database.path)) throw new ConfigError(refusal);
  const database = openDatabase(config.database, { max: 1 });
  if (await isEmpty(database)) {
    await database.close();
    throw new ConfigError(refusal);
  }
  return database;
}

/** What a gatewayd /api/v1/health answer says of its instance; undefined when the answer is not one. */
function instanceOf(health: unknown): { network: string; databaseId: string | null } | undefined {
  if (health === null || typeof health !== 'object') return undefined;
  const { network, database_id } = health as Record<string, unknown>;
  if (typeof network !== 'string' || !(typeof database_id === 'string' || database_id === null)) return undefined;
  return { network, databaseId: database_id };
}

/** The network of --network among those the instance watches (the TRON network when not given); a usage error otherwise. */
export function chosenNetwork(config: Config, id: string | undefined): Readonly<Network> {
  if (id === undefined) return config.networks[0]!;
  const found = config.networks.find((n) => n.id === id);
  if (!found) throw new UsageError(`--network: this instance does not watch "${id}"; it watches ${config.networks.map((n) => n.id).join(', ')}`);
  return found;
}

/** The block time a rescan estimates with: TRON's slot, or the network's own block time. */
function blockMs(config: Config, network: Readonly<Network>): number {
  return network.family === 'tron' ? config.network.blockIntervalMs : network.blockTimeMs;
}

export async function runChainStatus(config: Config, out: Out, only?: string): Promise<number> {
  const networks = only === undefined ? config.networks : [chosenNetwork(config, only)];
  const database = await instanceDatabase(config);
  let ownId: string | null = null;
  try {
    ownId = await databaseId(database.db);
    for (const network of networks) await statusOf(database, network, out);
  } finally {
    await database.close();
  }
  return serverStatus(config, ownId, networks, out);
}

/** One network's durable state: its cursor, unread ranges and open disputes. */
async function statusOf(database: OpenedDatabase, network: Readonly<Network>, out: Out): Promise<void> {
  const state = await loadScanState(database.db, network);
  const gaps = await listGaps(database.db, network);
  out(`network: ${network.id}`);
  if (!state) out('cursor: none yet (the scanner has not run on this database)');
  else
    out(
      `cursor: block ${state.cursorBlock}, every block read up to ${new Date(state.cursorTime).toISOString()}${network.family === 'tron' ? `; active until ${new Date(state.activeUntil).toISOString()}` : ''}`,
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
}

/** What the running server says of the providers, when it is this instance. */
async function serverStatus(config: Config, ownId: string | null, networks: readonly Readonly<Network>[], out: Out): Promise<number> {
  const url = `${localUrl(config.server.listen)}/api/v1/health`;
  let answered: unknown;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    answered = await res.json().catch(() => undefined);
  } catch {
    out(`server: not answering on ${url}; provider health is known to the running server only`);
    return 0;
  }
  // The server on that address may be another instance (a dev server, another database): its providers are not this database's.
  const where = config.database.url ? 'the configured PostgreSQL database' : config.database.path;
  const instance = instanceOf(answered);
  if (!instance) {
    out(
      `server: ${url} answers, but without the network and database of a gatewayd instance (another program, or a gatewayd older than this one): it may not be this instance; its provider health is not shown`,
    );
    return 0;
  }
  if (instance.network !== config.network.id) {
    out(
      `server: ${url} runs ${instance.network}, this database is ${config.network.id}: another instance; its provider health is not shown (give --config of that instance)`,
    );
    return 0;
  }
  if (instance.databaseId !== ownId) {
    out(`server: ${url} uses another database than ${where}: another instance; its provider health is not shown (give --config of that instance)`);
    return 0;
  }
  out(`server: ${url}, the same instance (network ${config.network.id}, this database)`);
  if (networks.some((n) => n.family === 'tron')) tronWatcherStatus(answered, out);
  const others = (answered as { networks?: Array<Record<string, unknown>> }).networks ?? [];
  for (const n of others) {
    if (n.family === 'tron' || !networks.some((m) => m.id === n.network)) continue;
    out(
      `watcher ${String(n.network)}: ${String(n.state)}${n.reason ? ` (${String(n.reason)})` : ''}, cursor ${String(n.cursor_block)}, final head ${String(n.final_head)}, ${String(n.behind_blocks ?? '?')} behind, ${String(n.disputes)} disputes`,
    );
    for (const p of (n.providers as Array<Record<string, unknown>> | undefined) ?? []) {
      const refuses = Array.isArray(p.refuses) && p.refuses.length > 0 ? `; refuses: ${p.refuses.join(', ')}` : '';
      out(
        `  provider ${String(p.name)}: ${String(p.state)}${p.range_cap !== null && p.range_cap !== undefined ? `, range cap ${String(p.range_cap)} blocks` : ''}${refuses}${p.last_error ? `; last error: ${String(p.last_error)}` : ''}`,
      );
    }
  }
  return 0;
}

function tronWatcherStatus(answered: unknown, out: Out): void {
  const w = (answered as { watcher?: { state: string; scan?: Record<string, unknown>; providers?: Array<Record<string, unknown>> } }).watcher;
  out(`watcher: ${w?.state ?? 'unknown'}${w?.scan?.reason ? ` (${String(w.scan.reason)})` : ''}`);
  for (const p of w?.providers ?? []) {
    out(
      `provider ${String(p.name)}: ${String(p.state)}, ${String(p.requests)} requests, ${String(p.failures)} failures, ${String(p.refused_heads ?? 0)} refused heads, ${String(p.malformed_reads ?? 0)} malformed reads, ${String(p.inconsistent_blocks)} inconsistent blocks, ${String(p.outvoted_blocks ?? 0)} outvoted blocks${p.set_aside_until ? ` (set aside until ${String(p.set_aside_until)})` : ''}${p.last_error ? `; last error: ${String(p.last_error)}` : ''}`,
    );
  }
}

/**
 * The arguments of chain rescan, checked before any database is opened (a wrong one is a usage
 * error whatever the database holds): the time of --from-time, or undefined for --from-block.
 */
export function checkRescanArgs(from: { block?: string; time?: string }): number | undefined {
  if ((from.block === undefined) === (from.time === undefined)) throw new UsageError('needs exactly one of --from-block N or --from-time T');
  if (from.block !== undefined && !/^\d{1,15}$/.test(from.block)) throw new UsageError(`--from-block must be a block number, not "${from.block}"`);
  const t = from.time === undefined ? undefined : Date.parse(from.time);
  if (t !== undefined && !Number.isFinite(t)) throw new UsageError(`--from-time must be an ISO 8601 time such as 2026-01-15T12:00:00Z, not "${from.time}"`);
  return t;
}

export async function runChainRescan(config: Config, from: { block?: string; time?: string }, out: Out, networkId?: string): Promise<number> {
  const t = checkRescanArgs(from);
  const network = chosenNetwork(config, networkId);
  const interval = blockMs(config, network);
  const database = await instanceDatabase(config);
  try {
    const state = await loadScanState(database.db, network);
    if (!state) throw new UsageError(`the watcher of ${network.id} has not run on this database yet: there is nothing to rescan`);
    let fromBlock: number;
    let afterTime: number;
    if (t === undefined) {
      fromBlock = Number(from.block);
      afterTime = state.cursorTime - (state.cursorBlock - fromBlock + TIME_MARGIN_BLOCKS) * interval;
    } else {
      fromBlock = state.cursorBlock - Math.ceil(Math.max(0, state.cursorTime - t) / interval) - TIME_MARGIN_BLOCKS;
      afterTime = t - TIME_MARGIN_BLOCKS * interval;
    }
    if (fromBlock > state.cursorBlock) throw new UsageError(`block ${fromBlock} is not read yet (the cursor is at ${state.cursorBlock}): nothing to rescan`);
    const now = Date.now();
    await insertGap(database.db, network, { fromBlock, toBlock: state.cursorBlock, afterTime, beforeTime: state.cursorTime });
    await saveScanState(database.db, network, { ...state, activeUntil: Math.max(state.activeUntil, now + HOUR) }, now);
    out(
      `rescan recorded on ${network.id}: blocks ${fromBlock}-${state.cursorBlock} (${state.cursorBlock - fromBlock + 1}); the running server reads them with the time left in its passes`,
    );
    out('anything already recorded is not recorded again; `gatewayd chain status` shows the range shrink');
    return 0;
  } finally {
    await database.close();
  }
}
