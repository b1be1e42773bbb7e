/**
 * The chain watcher (docs/payments.md, Chain watcher). One pass: read the solidified head once, then for
 * each address with open invoices that is due, page through its confirmed incoming USDT history
 * from its durable cursor, verify each candidate against its solidified receipt, record what it
 * finds, and move the cursor (and expire what the new coverage allows).
 *
 * Coverage: after a complete pass over an address (no page left), every confirmed transfer with a
 * block time <= min(solidified head, TronGrid's confirmed event index) - COVERAGE_MARGIN_MS is
 * known. The index position is the newest confirmed USDT event TronGrid lists (the account history
 * is built from that index, which may trail the solidity node); the margin absorbs the index
 * filling blocks slightly out of order. A transaction not settled yet (receipt not solidified, block
 * above the head read at the start of the pass) holds coverage back to just before it. A fault
 * while reading an address leaves that address's cursor where it was; only complete reads move
 * cursors, and only moved cursors expire invoices.
 */
import type { Config } from '../config.js';
import type { AppDeps } from '../deps.js';
import { MINUTE } from '../lib/clock.js';
import type { Worker } from '../lib/loop.js';
import { listWatchedAddresses, isTxRecorded, type WatchedAddress } from './chain.repo.js';
import { advanceCoverage, recordTransfers, type Coverage } from './chain.service.js';
import { DEFAULT_MAX_RPS, DEFAULT_TIMEOUT_MS, TronApiError, TronClient, type TronFaultKind, type Trc20Record } from './trongrid.client.js';
import { rejectRecord, verifyReceipt } from './verifier.js';

/** How far behind the solidified head coverage stays, for TronGrid's indexer lag. */
export const COVERAGE_MARGIN_MS = MINUTE;
/** Pages read per address per pass (200 records each); a longer backlog continues next pass. */
export const MAX_PAGES_PER_POLL = 10;
/** Requests in flight at once across addresses: TronGrid allows about 15 per second per key. */
export const POLL_CONCURRENCY = 4;
export const MAX_BACKOFF_MS = 5 * MINUTE;

export interface Backoff {
  until: number;
  failures: number;
}

/** The watcher's in-memory state across passes (durable state is the cursor table). */
export interface ChainRuntime {
  client: TronClient;
  intervalMs: number;
  lastPollAt: Map<string, number>;
  /** Set by faults of the provider as a whole: no request at all until it passes. */
  global: Backoff;
  /** Set by faults met while reading one address: that address waits, the others go on. */
  perAddress: Map<string, Backoff>;
  /** The fault condition last logged (kind:endpoint), so a repeating condition is logged once. */
  fault: string | undefined;
  /** Transactions already logged as waiting for solidification. */
  waitingLogged: Set<string>;
  /**
   * address:tx pairs whose solidified receipt was rejected for good. Records near the head are
   * listed again by the next passes (coverage trails the head); this spares their receipt reads
   * and repeated log lines. Losing it (restart) only repeats that work.
   */
  rejected: Set<string>;
  /**
   * Set when the server shuts down: the running pass stops reading at the next record or address
   * (one pass can hold thousands of paced receipt reads, which a SIGTERM must not wait for).
   * Coverage then stays before the first record not judged, so the next start reads it again.
   */
  stopping: boolean;
}

/**
 * Faults that say the provider is unusable for every address right now (rate limit, refused key,
 * unreachable): the pass stops. Others (5xx, timeouts, bad answers) may concern one address's
 * query, so only that address backs off: one bad address never stalls the rest.
 */
const GLOBAL_FAULTS: ReadonlySet<TronFaultKind> = new Set(['rate_limited', 'auth', 'network']);

/** Bound on the in-memory sets above; they are cleared when full. */
const MEMORY_LIMIT = 10_000;

export function createChainRuntime(config: Config, options: { timeoutMs?: number; maxRequestsPerSecond?: number } = {}): ChainRuntime {
  return {
    client: new TronClient({
      apiUrl: config.tron.api_url,
      apiKey: config.tron.api_key,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxRequestsPerSecond: options.maxRequestsPerSecond ?? DEFAULT_MAX_RPS,
    }),
    intervalMs: config.tron.poll_interval_seconds * 1000,
    lastPollAt: new Map(),
    global: { until: 0, failures: 0 },
    perAddress: new Map(),
    fault: undefined,
    waitingLogged: new Set(),
    rejected: new Set(),
    stopping: false,
  };
}

export function chainWorker(deps: AppDeps): Worker {
  return {
    name: 'chain',
    intervalMs: deps.chain.intervalMs,
    runOnce: () => runOnce(deps),
    onStop: () => {
      deps.chain.stopping = true;
    },
  };
}

/** One watcher pass. Never returns true: each address is polled at most once per interval. */
export async function runOnce(deps: AppDeps): Promise<boolean> {
  const rt = deps.chain;
  const now = deps.clock.now();
  const watched = await listWatchedAddresses(deps.db);
  if (watched.length === 0) {
    setStatus(deps, 'idle', null);
    return false;
  }
  // Forget addresses no longer watched (their state would only grow, or keep /health degraded).
  const watchedSet = new Set(watched.map((w) => w.address));
  for (const map of [rt.lastPollAt, rt.perAddress]) for (const address of map.keys()) if (!watchedSet.has(address)) map.delete(address);
  const waiting = (address: string) => (rt.perAddress.get(address)?.until ?? 0) > now;
  const due = now < rt.global.until ? [] : watched.filter((w) => (rt.lastPollAt.get(w.address) ?? -Infinity) + rt.intervalMs <= now && !waiting(w.address));
  if (due.length === 0) {
    const backingOff = now < rt.global.until || watched.some((w) => waiting(w.address));
    setStatus(deps, backingOff || deps.watcherStatus.state === 'degraded' ? 'degraded' : 'running', lagSeconds(watched, now));
    return false;
  }

  let globalFault: TronApiError | undefined;
  let addressFault: { err: TronApiError; backoff: Backoff } | undefined;
  const coverage: Coverage[] = [];
  try {
    const solid = await rt.client.solidHead();
    const indexed = await rt.client.indexedUpTo();
    const head: Head = { number: solid.number, coverableUntil: Math.min(solid.timestamp, indexed) - COVERAGE_MARGIN_MS };
    const queue = [...due];
    // Anything but a TRON API fault (a database error, a bug) stops every lane before it is
    // rethrown, so no lane outlives the pass.
    let crash: { err: unknown } | undefined;
    const lane = async (): Promise<void> => {
      for (let w = queue.shift(); w && !globalFault && !crash && !rt.stopping; w = queue.shift()) {
        rt.lastPollAt.set(w.address, now);
        try {
          const covered = await pollAddress(deps, head, w);
          if (covered !== undefined) coverage.push({ address: w.address, coveredUntil: covered });
          rt.perAddress.delete(w.address);
        } catch (err) {
          if (!(err instanceof TronApiError)) {
            crash ??= { err };
          } else if (GLOBAL_FAULTS.has(err.kind)) {
            globalFault ??= err;
          } else {
            const backoff = rt.perAddress.get(w.address) ?? { until: 0, failures: 0 };
            rt.perAddress.set(w.address, backoff);
            backOff(deps, backoff, err);
            addressFault ??= { err, backoff };
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(POLL_CONCURRENCY, queue.length) }, lane));
    if (crash) throw crash.err;
  } catch (err) {
    if (!(err instanceof TronApiError)) throw err;
    globalFault = err;
  }
  // Addresses read completely keep their progress whatever happened to the others.
  for (const inv of await advanceCoverage(deps, coverage)) deps.log.info({ invoice_id: inv.id }, 'chain: invoice expired');
  if (globalFault) backOff(deps, rt.global, globalFault);
  else rt.global = { until: 0, failures: 0 };
  if (globalFault) logFault(deps, globalFault, rt.global);
  else if (addressFault) logFault(deps, addressFault.err, addressFault.backoff);
  const healthy = !globalFault && !addressFault && rt.perAddress.size === 0;
  if (healthy && rt.fault !== undefined) {
    deps.log.info('chain: TRON API reachable again');
    rt.fault = undefined;
  }
  setStatus(deps, healthy ? 'running' : 'degraded', lagSeconds(await listWatchedAddresses(deps.db), deps.clock.now()));
  return false;
}

/** Reads and records one address's new history; returns how far it is now covered (undefined: no progress). */
interface Head {
  /** The solidified head block: receipts above it are not judged yet. */
  number: number;
  /** The most a complete read of an address can cover (ms). */
  coverableUntil: number;
}

async function pollAddress(deps: AppDeps, head: Head, w: WatchedAddress): Promise<number | undefined> {
  const rt = deps.chain;
  const { client } = rt;
  const minTimestamp = w.coveredUntil === null ? w.earliestCreatedAt : Math.min(w.coveredUntil + 1, w.rewindTo ?? Infinity);

  // Read the whole window first: a fault on any page leaves the address untouched.
  const records: Trc20Record[] = [];
  const fingerprints = new Set<string>();
  let fingerprint: string | undefined;
  let complete = false;
  for (let page = 0; page < MAX_PAGES_PER_POLL; page++) {
    const result = await client.trc20Page(w.address, minTimestamp, fingerprint);
    records.push(...result.records);
    if (result.fingerprint === undefined) {
      complete = true;
      break;
    }
    if (fingerprints.has(result.fingerprint)) throw new TronApiError('bad_response', 'trc20', 'pagination fingerprint repeated');
    fingerprints.add(result.fingerprint);
    fingerprint = result.fingerprint;
  }

  let heldBackTo: number | undefined;
  const seen = new Set<string>();
  for (const [i, record] of records.entries()) {
    if (rt.stopping) {
      // Shutting down: what is not judged yet is read again at the next start.
      for (const rest of records.slice(i)) heldBackTo = Math.min(heldBackTo ?? Infinity, rest.block_timestamp - 1);
      break;
    }
    const reason = rejectRecord(record, w.address);
    if (reason) {
      deps.log.debug({ address: w.address, tx_hash: record.transaction_id, reason }, 'chain: record ignored');
      continue;
    }
    const txHash = record.transaction_id.toLowerCase();
    // Pages overlap and one transaction can carry several logs: its receipt is read once.
    if (seen.has(txHash)) continue;
    seen.add(txHash);
    const key = `${w.address}:${txHash}`;
    if (rt.rejected.has(key) || (await isTxRecorded(deps.db, txHash, w.address))) continue;
    const receipt = await client.solidReceipt(txHash);
    const verdict = receipt ? verifyReceipt(receipt, txHash, w.address, head.number) : undefined;
    if (!verdict || (!verdict.ok && !verdict.final)) {
      // Not settled yet: coverage stays before it, so the next pass looks again.
      heldBackTo = Math.min(heldBackTo ?? Infinity, record.block_timestamp - 1);
      if (!rt.waitingLogged.has(key)) {
        remember(rt.waitingLogged, key);
        deps.log.info({ address: w.address, tx_hash: txHash, reason: verdict ? verdict.reason : 'receipt not solidified yet' }, 'chain: transfer not settled yet; will retry');
      }
      continue;
    }
    rt.waitingLogged.delete(key);
    if (!verdict.ok) {
      remember(rt.rejected, key);
      deps.log.info({ address: w.address, tx_hash: txHash, reason: verdict.reason }, 'chain: transfer rejected');
      continue;
    }
    for (const r of await recordTransfers(deps, verdict.transfers)) {
      deps.log.info({ tx_hash: r.transfer.txHash, log_index: r.transfer.logIndex, kind: r.kind, invoice_id: r.invoiceId }, 'chain: transfer recorded');
    }
  }

  let covered = head.coverableUntil;
  if (!complete) {
    // An incomplete read covers only the blocks strictly before the last one it reached (that
    // block may continue on the next page).
    const last = records.at(-1);
    const pagesCovered = last ? last.block_timestamp - 1 : minTimestamp - 1;
    if (pagesCovered <= minTimestamp - 1) {
      deps.log.warn({ address: w.address, min_timestamp: minTimestamp }, 'chain: more records in one block than a pass reads; coverage cannot advance');
    }
    covered = Math.min(covered, pagesCovered);
  }
  if (heldBackTo !== undefined) covered = Math.min(covered, heldBackTo);
  return covered > minTimestamp - 1 ? covered : undefined;
}

function remember(set: Set<string>, key: string): void {
  if (set.size >= MEMORY_LIMIT) set.clear();
  set.add(key);
}

function backOff(deps: AppDeps, b: Backoff, err: TronApiError): void {
  b.failures += 1;
  const exponential = Math.min(MAX_BACKOFF_MS, deps.chain.intervalMs * 2 ** (b.failures - 1));
  b.until = deps.clock.now() + Math.max(exponential, err.retryAfterMs ?? 0);
}

function logFault(deps: AppDeps, err: TronApiError, b: Backoff): void {
  const rt = deps.chain;
  const condition = `${err.kind}:${err.endpoint}`;
  const fields = { kind: err.kind, endpoint: err.endpoint, status: err.status, detail: err.message, retry_in_ms: b.until - deps.clock.now(), failures: b.failures };
  if (condition !== rt.fault) {
    rt.fault = condition;
    deps.log.warn(fields, 'chain: TRON API fault; nothing confirmed or expired; retrying with backoff');
  } else {
    deps.log.debug(fields, 'chain: TRON API fault persists');
  }
}

/** Seconds between now and the least covered watched address (its first poll counts from its oldest invoice). */
function lagSeconds(watched: WatchedAddress[], now: number): number | null {
  if (watched.length === 0) return null;
  const oldest = watched.reduce((min, w) => Math.min(min, w.coveredUntil ?? w.earliestCreatedAt), Infinity);
  return Math.max(0, Math.round((now - oldest) / 1000));
}

function setStatus(deps: AppDeps, state: 'idle' | 'running' | 'degraded', lag: number | null): void {
  deps.watcherStatus.state = state;
  deps.watcherStatus.lagSeconds = lag;
}
