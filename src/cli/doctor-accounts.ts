/**
 * The Solana and TON checks of `gatewayd doctor`: for every `[[solana.networks]]` and `[[ton.networks]]`
 * entry and each of its providers, through the watcher's own clients and readers, with the provider's
 * timeout: the network it serves (Solana's genesis hash, TON's global id), the head the watcher would
 * believe (Solana's finalized slot, TON's latest committed masterchain block), and the smallest read
 * the watcher makes of an account (Solana: one `getSignaturesForAddress`; toncenter: one
 * `/jetton/transfers`; tonapi: one `accounts/_bulk`). A 429 is a warning naming the pause asked; a
 * provider is named by its host alone, and neither the URL's path or query nor an api_key is printed.
 */
import type { SolanaNetworkConfig, TonNetworkConfig } from '../config.js';
import { NETWORKS } from '../chains/networks.js';
import { EvmRpcClient, RpcError } from '../chains/evm/rpc.js';
import { SOLANA_GENESIS_HASHES, SolanaReader } from '../chains/solana/reader.js';
import { SolanaRpc } from '../chains/solana/rpc.js';
import { toFriendlyAddress } from '../chains/ton/address.js';
import { TonHttpClient, TonHttpError } from '../chains/ton/rpc.js';
import { TonapiReader } from '../chains/ton/tonapi.js';
import { ToncenterReader } from '../chains/ton/toncenter.js';
import { systemClock } from '../lib/clock.js';
import { describeFetchError } from './doctor-network.js';
import { providerHost, withoutUrlSecrets } from './doctor-evm.js';
import type { Finding } from './doctor-findings.js';

const FIX_RATE = 'run doctor again after the pause; if it recurs, lower requests_per_second or use a keyed provider';

/** Every Solana and TON network's findings, its providers asked at once, in the configuration's order. */
export async function checkAccountNetworks(
  config: { solanaNetworks: readonly SolanaNetworkConfig[]; tonNetworks: readonly TonNetworkConfig[] },
  timeoutCapMs?: number,
): Promise<Finding[]> {
  const solana = config.solanaNetworks.map((entry) => Promise.all(entry.providers.map((p) => checkSolanaProvider(entry, p, timeoutCapMs))));
  const ton = config.tonNetworks.map((entry) => Promise.all(entry.providers.map((p) => checkTonProvider(entry, p, timeoutCapMs))));
  return (await Promise.all([...solana, ...ton])).flat(2);
}

/** A failed fetch as the reason itself (ECONNREFUSED, ENOTFOUND), not "fetch failed"; a timeout stays one. */
const explainingFetch: typeof fetch = (input, init) =>
  fetch(input, init).catch((err: unknown) => {
    const named = new Error(describeFetchError(err));
    named.name = (err as Error).name;
    throw named;
  });

/** What one provider's checks found, its words cleaned of the URL's secrets and the key. */
class Findings {
  readonly list: Finding[] = [];
  readonly where: string;

  constructor(
    network: string,
    readonly url: string,
    readonly timeoutMs: number,
    readonly timeoutSeconds: number,
    readonly secret?: string,
  ) {
    this.where = `${network}, ${providerHost(url)}`;
  }

  report(level: Finding['level'], check: string, what: string): void {
    this.list.push({ level, check, detail: `${this.where}: ${this.quote(what)}` });
  }

  quote(text: string): string {
    const cleaned = withoutUrlSecrets(text, this.url);
    return this.secret && this.secret.length >= 4 ? cleaned.split(this.secret).join('…') : cleaned;
  }

  rateLimited(check: string, retryAfterMs: number | undefined): void {
    const pause = retryAfterMs === undefined ? 'without a Retry-After' : `and asks for a pause of ${Math.ceil(retryAfterMs / 1000)} s (Retry-After)`;
    this.report('warn', check, `rate-limited (HTTP 429) ${pause}; its remaining checks were skipped: ${FIX_RATE}`);
  }

  noAnswer(check: string): void {
    this.report('fail', check, `no answer in ${Math.round(this.timeoutMs / 100) / 10} s (timeout_seconds = ${this.timeoutSeconds})`);
  }
}

function message(err: unknown, provider: string): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.startsWith(`${provider}: `) ? text.slice(provider.length + 2) : text;
}

// --- Solana ------------------------------------------------------------------------------------

type SolanaProvider = SolanaNetworkConfig['providers'][number];

/** A transport error reported as its own finding (false when the check should explain it). */
function solanaTransport(f: Findings, check: string, err: unknown, name: string): boolean {
  if (!(err instanceof RpcError)) return false;
  if (err.kind === 'rate_limited') f.rateLimited(check, err.retryAfterMs);
  else if (err.kind === 'timeout') f.noAnswer(check);
  else if (err.kind === 'http' && err.code === undefined) f.report('fail', check, `unreachable (${message(err, name).replace(/^request failed: /, '')})`);
  else if (err.kind === 'http' && (err.code === 401 || err.code === 403)) {
    f.report('fail', check, `refused (HTTP ${err.code}): the provider does not accept this URL's key, or none; check the url`);
  } else return false;
  return true;
}

async function checkSolanaProvider(entry: SolanaNetworkConfig, provider: SolanaProvider, timeoutCapMs: number | undefined): Promise<Finding[]> {
  const timeoutMs = Math.min(provider.timeout_seconds * 1000, timeoutCapMs ?? Infinity);
  const f = new Findings(entry.network.id, provider.url, timeoutMs, provider.timeout_seconds);
  const name = providerHost(provider.url);
  // No waiting on a 429: doctor reports the pause asked for instead of sitting it out.
  const client = new EvmRpcClient({ url: provider.url, name, clock: systemClock, fetch: explainingFetch, timeoutMs, rateLimitRetries: 0 });
  const rpc = new SolanaRpc(client);
  const network = entry.network;

  const expected = SOLANA_GENESIS_HASHES[network.id];
  let genesis: string;
  try {
    genesis = await rpc.genesisHash();
  } catch (err) {
    if (!solanaTransport(f, 'solana network', err, name)) {
      f.report('fail', 'solana network', `getGenesisHash failed (${message(err, name)}): is this a Solana JSON-RPC endpoint?`);
    }
    return f.list;
  }
  if (genesis !== expected) {
    const other = Object.entries(SOLANA_GENESIS_HASHES).find(([, h]) => h === genesis)?.[0];
    f.report(
      'fail',
      'solana network',
      `serves another network (genesis hash ${genesis}, ${other ?? 'no network gatewayd knows'}), not ${network.id} (${expected}): ` +
        `fix this provider's url or the network's id`,
    );
    return f.list;
  }
  f.report('ok', 'solana network', `genesis hash ${genesis}`);

  const reader = new SolanaReader({ network, rpc });
  let slot: bigint;
  try {
    const head = await reader.finalHead();
    slot = head.number;
    f.report('ok', 'solana final', `finalized slot ${head.number}`);
  } catch (err) {
    if (!solanaTransport(f, 'solana final', err, name)) {
      f.report('fail', 'solana final', `no believable finalized slot (${message(err, name)}): choose another provider`);
    }
    return f.list;
  }

  // The watcher's own read: one account's signatures at finalized commitment, the node at least at that slot.
  const probe = network.tokens[0]!.contract;
  try {
    const list = await client.call('getSignaturesForAddress', [probe, { commitment: 'finalized', limit: 1, minContextSlot: Number(slot) }]);
    if (!Array.isArray(list)) throw new Error(`answered ${JSON.stringify(list)?.slice(0, 40)}, not a list of signatures`);
    f.report('ok', 'solana signatures', `getSignaturesForAddress served (${list.length} signature(s) of the ${network.tokens[0]!.symbol} mint)`);
  } catch (err) {
    if (!solanaTransport(f, 'solana signatures', err, name)) {
      f.report(
        'fail',
        'solana signatures',
        `refuses getSignaturesForAddress (${message(err, name)}): the watcher reads every payment with it; use a provider that serves it`,
      );
    }
  }
  return f.list;
}

// --- TON ---------------------------------------------------------------------------------------

type TonProvider = TonNetworkConfig['providers'][number];

function tonTransport(f: Findings, check: string, err: unknown, name: string): boolean {
  if (!(err instanceof TonHttpError)) return false;
  if (err.kind === 'rate_limited') f.rateLimited(check, err.retryAfterMs);
  else if (err.kind === 'timeout') f.noAnswer(check);
  else if (err.kind === 'http' && err.status === undefined) f.report('fail', check, `unreachable (${message(err, name).replace(/^request failed: /, '')})`);
  else if (err.status === 401 || err.status === 403) {
    f.report('fail', check, `refused (HTTP ${err.status}): the provider does not accept this api_key, or none; check api_key`);
  } else return false;
  return true;
}

async function checkTonProvider(entry: TonNetworkConfig, provider: TonProvider, timeoutCapMs: number | undefined): Promise<Finding[]> {
  const timeoutMs = Math.min(provider.timeout_seconds * 1000, timeoutCapMs ?? Infinity);
  const f = new Findings(entry.network.id, provider.url, timeoutMs, provider.timeout_seconds, provider.api_key || undefined);
  const name = providerHost(provider.url);
  const network = entry.network;
  const tonapi = provider.kind === 'tonapi';
  const client = new TonHttpClient({
    url: provider.url,
    name,
    ...(provider.api_key ? { apiKey: provider.api_key, keyHeader: tonapi ? ('bearer' as const) : ('x-api-key' as const) } : {}),
    requestsPerSecond: provider.requests_per_second > 0 ? provider.requests_per_second : 1_000_000,
    clock: systemClock,
    fetch: explainingFetch,
    timeoutMs,
    rateLimitRetries: 0,
  });
  const reader = tonapi ? new TonapiReader({ network, client }) : new ToncenterReader({ network, client });

  let globalId: unknown;
  try {
    const answer = await client.get<Record<string, any>>(tonapi ? '/v2/blockchain/masterchain-head' : '/api/v3/masterchainInfo');
    globalId = tonapi ? answer?.global_id : answer?.last?.global_id;
  } catch (err) {
    if (!tonTransport(f, 'ton network', err, name)) {
      f.report('fail', 'ton network', `the masterchain head failed (${message(err, name)}): is this a ${provider.kind} API root (kind = "${provider.kind}")?`);
    }
    return f.list;
  }
  if (globalId !== network.chainId) {
    const other = Object.values(NETWORKS).find((n) => n.family === 'ton' && n.chainId === globalId);
    f.report(
      'fail',
      'ton network',
      `serves another network (global id ${String(JSON.stringify(globalId)).slice(0, 20)}, ${other ? other.id : 'no network gatewayd knows'}), ` +
        `not ${network.id} (global id ${network.chainId}): fix this provider's url or the network's id`,
    );
    return f.list;
  }
  f.report('ok', 'ton network', `global id ${globalId}`);

  try {
    const head = await reader.finalHead();
    f.report('ok', 'ton final', `committed masterchain block ${head.number}`);
  } catch (err) {
    if (!tonTransport(f, 'ton final', err, name))
      f.report('fail', 'ton final', `no believable masterchain head (${message(err, name)}): choose another provider`);
    return f.list;
  }

  const token = network.tokens[0]!;
  const check = tonapi ? 'ton accounts' : 'ton transfers';
  try {
    if (tonapi) {
      const answer = await client.post<Record<string, any>>('/v2/blockchain/accounts/_bulk', { account_ids: [token.contract] });
      if (!Array.isArray(answer?.accounts)) throw new Error('answered no list of accounts');
      f.report('ok', check, `accounts/_bulk served (${answer.accounts.length} account(s))`);
    } else {
      const answer = await client.get<Record<string, any>>('/api/v3/jetton/transfers', {
        owner_address: [toFriendlyAddress(token.contract, { bounceable: false })],
        direction: 'in',
        jetton_master: toFriendlyAddress(token.contract, { bounceable: true }),
        sort: 'asc',
        limit: 1,
      });
      if (!Array.isArray(answer?.jetton_transfers)) throw new Error('answered no list of jetton_transfers');
      f.report('ok', check, `/jetton/transfers served (${answer.jetton_transfers.length} ${token.symbol} transfer(s))`);
    }
  } catch (err) {
    if (!tonTransport(f, check, err, name)) {
      f.report(
        'fail',
        check,
        `refuses ${tonapi ? 'accounts/_bulk' : '/jetton/transfers'} (${message(err, name)}): the watcher reads every payment with it; check the url and kind`,
      );
    }
  }
  return f.list;
}
