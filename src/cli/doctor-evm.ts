/**
 * The EVM checks of `gatewayd doctor`: for every `[[evm.networks]]` entry and each of its
 * providers, through the watcher's own JSON-RPC client and reader, with the provider's timeout:
 * the chain id, the block the network's finality rule names (believed only as the watcher would
 * believe it), and a one-block `eth_getLogs` for the pinned tokens' Transfer logs, which many public
 * nodes refuse. A provider is named by its host alone: hosted providers carry the API key in the
 * URL's path or query.
 */
import type { Config, EvmNetworkConfig } from '../config.js';
import { NETWORKS, type Network } from '../chains/networks.js';
import { ReadRefused, EvmReader, TRANSFER_TOPIC } from '../chains/evm/reader.js';
import { EvmRpcClient, RpcError } from '../chains/evm/rpc.js';
import type { ChainHead } from '../chains/family.js';
import { systemClock } from '../lib/clock.js';
import { describeFetchError } from './doctor-network.js';
import type { Finding } from './doctor-findings.js';

type Provider = EvmNetworkConfig['providers'][number];

const FIX_LOGS = 'use a provider that serves eth_getLogs: an own node or a keyed provider';
const FIX_RATE = 'run doctor again after the pause; if it recurs, lower requests_per_second or use a keyed provider';

/** Every EVM network's findings, its providers asked at once, reported in the configuration's order. */
export async function checkEvmNetworks(config: Config, timeoutCapMs?: number): Promise<Finding[]> {
  const perNetwork = await Promise.all(
    config.evmNetworks.map(async (entry) => {
      const perProvider = await Promise.all(entry.providers.map((p) => checkProvider(entry, p, timeoutCapMs)));
      return [...perProvider.flat(), ...checkProviderCount(entry)];
    }),
  );
  return perNetwork.flat();
}

/**
 * A real network with one provider: that provider is trusted as it answers, as on TRON (docs/operations.md,
 * What a second provider adds). A test network's worthless tokens need no second opinion.
 */
function checkProviderCount(entry: EvmNetworkConfig): Finding[] {
  if (entry.network.test || entry.providers.length !== 1) return [];
  return [
    {
      level: 'warn',
      check: 'evm trust',
      detail:
        `${entry.network.id}: one provider (${providerHost(entry.providers[0]!.url)}), trusted as it answers: no transfer is cross-checked, ` +
        'so a payment it leaves out is missed until a rescan and one it makes up would confirm; add a second provider to its [[evm.networks]] providers',
    },
  ];
}

/** The host (and port) of a provider URL: never its user, path or query, which may hold a key. */
export function providerHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid-url';
  }
}

/**
 * Removes from a text anything of the URL that is not its host: a provider's error message may echo
 * the path or query it was asked at, and with them the key. Pieces shorter than 6 characters
 * (`v1`, `rpc`) are left, as they hide nothing and would garble the message.
 */
export function withoutUrlSecrets(text: string, url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return text;
  }
  const pieces = [url, `${u.pathname}${u.search}`, u.username, u.password, ...u.pathname.split('/'), ...[...u.searchParams.values()]]
    .map((p) => p.trim())
    .filter((p) => p.length >= 6)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const piece of pieces) out = out.split(piece).join('…');
  for (const piece of pieces.map((p) => encodeURIComponent(p)).filter((p) => p.length >= 6)) out = out.split(piece).join('…');
  return out;
}

/** A failed fetch as the reason itself (ECONNREFUSED, ENOTFOUND), not "fetch failed"; a timeout stays one. */
const explainingFetch: typeof fetch = (input, init) =>
  fetch(input, init).catch((err: unknown) => {
    const named = new Error(describeFetchError(err));
    named.name = (err as Error).name;
    throw named;
  });

function duration(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/** About as many confirmations as the network's finality time: what to choose where a provider has no finality tag. */
function suggestedConfirmations(network: Readonly<Network>): number {
  return Math.max(1, Math.ceil(network.finalityTimeMs / network.blockTimeMs));
}

function hex(n: bigint): string {
  return `0x${n.toString(16)}`;
}

class Probe {
  readonly where: string;
  readonly rpc: EvmRpcClient;
  readonly findings: Finding[] = [];
  readonly timeoutMs: number;

  constructor(
    readonly entry: EvmNetworkConfig,
    readonly provider: Provider,
    timeoutCapMs: number | undefined,
  ) {
    const host = providerHost(provider.url);
    this.where = `${entry.network.id}, ${host}`;
    this.timeoutMs = Math.min(provider.timeout_seconds * 1000, timeoutCapMs ?? Infinity);
    // No waiting on a 429: doctor reports the pause asked for instead of sitting it out.
    this.rpc = new EvmRpcClient({
      url: provider.url,
      name: host,
      clock: systemClock,
      fetch: explainingFetch,
      timeoutMs: this.timeoutMs,
      rateLimitRetries: 0,
    });
  }

  report(level: Finding['level'], check: string, what: string): void {
    this.findings.push({ level, check, detail: `${this.where}: ${what}` });
  }

  /** What the provider said, with nothing of its URL but the host (it may echo the path and the key). */
  quote(text: string): string {
    return withoutUrlSecrets(text, this.provider.url);
  }

  /** The error's own words, without the provider's name the client puts first. */
  reason(err: unknown): string {
    const message = err instanceof Error ? err.message : String(err);
    return this.quote(message.startsWith(`${this.rpc.name}: `) ? message.slice(this.rpc.name.length + 2) : message);
  }

  /**
   * Reports an error no check reads as its own finding: a rate limit (a warning with the pause
   * asked, the rest of this provider's checks skipped), no answer, or an HTTP refusal. False when
   * the error is the check's own to explain.
   */
  transport(check: string, err: unknown): boolean {
    if (!(err instanceof RpcError)) return false;
    if (err.kind === 'rate_limited') {
      const pause = err.retryAfterMs === undefined ? 'without a Retry-After' : `and asks for a pause of ${Math.ceil(err.retryAfterMs / 1000)} s (Retry-After)`;
      this.report('warn', check, `rate-limited (${this.reason(err)}) ${pause}; its remaining checks were skipped: ${FIX_RATE}`);
      return true;
    }
    if (err.kind === 'timeout') {
      this.report('fail', check, `no answer in ${Math.round(this.timeoutMs / 100) / 10} s (timeout_seconds = ${this.provider.timeout_seconds})`);
      return true;
    }
    if (err.kind === 'http' && err.code === undefined) {
      this.report('fail', check, `unreachable (${this.reason(err).replace(/^request failed: /, '')})`);
      return true;
    }
    if (err.kind === 'http' && (err.code === 401 || err.code === 403)) {
      this.report('fail', check, `refused (HTTP ${err.code}): the provider does not accept this URL's key, or none; check the url`);
      return true;
    }
    return false;
  }
}

async function checkProvider(entry: EvmNetworkConfig, provider: Provider, timeoutCapMs: number | undefined): Promise<Finding[]> {
  const probe = new Probe(entry, provider, timeoutCapMs);
  const url = new URL(provider.url);
  if (url.username || url.password) {
    // fetch refuses such a URL outright, so the watcher could never ask this provider.
    probe.report(
      'fail',
      'evm chain',
      'the url carries a user and password, which the JSON-RPC client cannot send: use the URL with the key in its path or query',
    );
    return probe.findings;
  }
  if (!(await checkChainId(probe))) return probe.findings;
  const final = await checkFinalHead(probe);
  if (final) await checkLogs(probe, final);
  return probe.findings;
}

/** eth_chainId is the registry's: a provider of another chain would never see a payment. */
async function checkChainId(probe: Probe): Promise<boolean> {
  const network = probe.entry.network;
  let answer: unknown;
  try {
    answer = await probe.rpc.call('eth_chainId', []);
  } catch (err) {
    if (!probe.transport('evm chain', err)) probe.report('fail', 'evm chain', `eth_chainId failed (${probe.reason(err)}): is this an EVM JSON-RPC endpoint?`);
    return false;
  }
  const id = typeof answer === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(answer) ? Number(BigInt(answer)) : undefined;
  if (id === undefined) {
    probe.report(
      'fail',
      'evm chain',
      `eth_chainId answered ${probe.quote(String(JSON.stringify(answer)).slice(0, 40))}, not a chain id: is this an EVM JSON-RPC endpoint?`,
    );
    return false;
  }
  if (id !== network.chainId) {
    const other = Object.values(NETWORKS).find((n) => n.chainId === id);
    probe.report(
      'fail',
      'evm chain',
      `serves chain id ${id} (${other ? other.id : 'no network gatewayd knows'}), not ${network.id} (chain id ${network.chainId}): ` +
        `fix this provider's url or the network's id`,
    );
    return false;
  }
  probe.report('ok', 'evm chain', `chain id ${id}`);
  return true;
}

/**
 * The block the network's finality rule names, read and believed as the watcher does (EvmReader's
 * plausibility checks: not above the latest, a `finalized` at least the network's least lag behind).
 */
async function checkFinalHead(probe: Probe): Promise<ChainHead | undefined> {
  const { network, finality } = probe.entry;
  const reader = new EvmReader({ network, rpc: probe.rpc, finality });
  let final: ChainHead;
  let latest: ChainHead;
  try {
    final = await reader.finalHead();
    latest = await reader.latestHead();
  } catch (err) {
    if (probe.transport('evm final', err)) return undefined;
    if (finality.kind === 'confirmations') {
      probe.report('fail', 'evm final', `cannot read the latest block or the one ${finality.blocks} below it (${probe.reason(err)}): choose another provider`);
      return undefined;
    }
    const implausible = err instanceof ReadRefused && err.reason === 'implausible_head';
    probe.report(
      'fail',
      'evm final',
      `${implausible ? `its ${finality.tag} block is not believable` : `no ${finality.tag} block`} (${probe.reason(err)}): ` +
        `this provider does not serve ${finality.tag} blocks: ` +
        `choose finality = ${suggestedConfirmations(network)} (confirmations, about ${duration(network.finalityTimeMs)} on ${network.id}) or another provider`,
    );
    return undefined;
  }
  probe.report(
    'ok',
    'evm final',
    finality.kind === 'tag'
      ? `${finality.tag} block ${final.number}, ${latest.number - final.number} behind the latest (${latest.number})`
      : `block ${final.number}, ${finality.blocks} confirmations below the latest (${latest.number})`,
  );
  return final;
}

/**
 * One block's Transfer logs of the pinned tokens: the smallest query the watcher makes. Public BSC
 * nodes refuse even this one (-32005 "limit exceeded"), others answer 403.
 */
async function checkLogs(probe: Probe, final: ChainHead): Promise<void> {
  const tokens = probe.entry.network.tokens;
  const block = hex(final.number);
  let logs: unknown;
  try {
    logs = await probe.rpc.call('eth_getLogs', [{ fromBlock: block, toBlock: block, address: tokens.map((t) => t.contract), topics: [TRANSFER_TOPIC] }]);
  } catch (err) {
    if (err instanceof RpcError && (err.kind === 'rate_limited' || (err.kind === 'http' && err.code === undefined))) {
      probe.transport('evm logs', err);
      return;
    }
    const why = err instanceof RpcError && err.kind === 'timeout' ? `no answer in ${Math.round(probe.timeoutMs / 100) / 10} s` : probe.reason(err);
    probe.report(
      'fail',
      'evm logs',
      `refuses a one-block eth_getLogs for the pinned ${tokens.map((t) => t.symbol).join(' and ')} (${why}): the watcher finds every payment with it; ${FIX_LOGS}`,
    );
    return;
  }
  if (!Array.isArray(logs)) {
    probe.report('fail', 'evm logs', `eth_getLogs answered ${probe.quote(String(JSON.stringify(logs)).slice(0, 40))}, not a list of logs; ${FIX_LOGS}`);
    return;
  }
  probe.report(
    'ok',
    'evm logs',
    `eth_getLogs served for block ${final.number} (${logs.length} Transfer log(s) of ${tokens.map((t) => t.symbol).join(' and ')})`,
  );
}
