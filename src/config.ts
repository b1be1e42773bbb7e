/**
 * Configuration: one TOML file validated by a strict zod schema (every key in docs/configuration.md).
 * Source order: --config, $GATEWAYD_CONFIG, ./gatewayd.toml when present, built-in defaults.
 * Every key may be overridden by GATEWAYD_<SECTION>_<KEY>. This is the only module that reads process.env.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { NETWORKS, type TronNetwork } from './lib/tron.js';
import { configSchema, parseListen, type ParsedConfig } from './config.schema.js';
import { NETWORKS as CHAIN_NETWORKS, type EvmNetworkId, type SolanaNetworkId, type TonNetworkId, type FinalityRule, type Network } from './chains/networks.js';

export { configSchema, parseListen, type ListenAddress } from './config.schema.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Config = ParsedConfig & {
  /** Where the configuration came from: a file path, or "built-in defaults". */
  readonly source: string;
  /** True when server.secret was absent and a random one was made for this process. */
  readonly secretGenerated: boolean;
  /** The public origin (scheme://host[:port]) derived from server.public_url. */
  readonly publicOrigin: string;
  /** True when server.public_url was not set and follows server.listen. */
  readonly publicUrlFollowsListen: boolean;
  /** The TRON network of tron.network: its API id, USDT contract and default provider. */
  readonly network: Readonly<TronNetwork>;
  /**
   * Every network this instance watches, its TRON network first, then [[evm.networks]] in the order
   * given; all real networks or all test networks, never both.
   */
  readonly networks: readonly Readonly<Network>[];
  /** The EVM networks of [[evm.networks]], each with its finality rule and poll interval resolved. */
  readonly evmNetworks: readonly EvmNetworkConfig[];
  /** The Solana networks of [[solana.networks]], each with its poll interval resolved. */
  readonly solanaNetworks: readonly SolanaNetworkConfig[];
  /** The TON networks of [[ton.networks]], each with its poll interval resolved. */
  readonly tonNetworks: readonly TonNetworkConfig[];
  /**
   * True only in a process started by `gatewayd dev` (never from a file or the environment): its
   * webhooks may go to http and to loopback or private addresses, such as a receiver on localhost.
   */
  readonly devMode: boolean;
  /** True when server.public_url is https: cookies carry the Secure flag. */
  readonly secureCookies: boolean;
};

/** Between two reads of an EVM network's newest blocks while an invoice waits there, unless poll_interval_seconds says otherwise. */
export const DEFAULT_EVM_POLL_MS = 5_000;

/** One enabled EVM network: the registry's entry, its providers, its finality rule and its poll interval. */
export interface EvmNetworkConfig {
  readonly network: Readonly<Network> & { readonly id: EvmNetworkId };
  readonly providers: ParsedConfig['evm']['networks'][number]['providers'];
  readonly finality: FinalityRule;
  readonly pollMs: number;
}

/** Between two reads of a Solana or TON network's watched accounts while an invoice waits there, unless poll_interval_seconds says otherwise. */
export const DEFAULT_ACCOUNT_POLL_MS = 10_000;

/** One enabled Solana network: the registry's entry, its JSON-RPC providers and its poll interval. */
export interface SolanaNetworkConfig {
  readonly network: Readonly<Network> & { readonly id: SolanaNetworkId };
  readonly providers: ParsedConfig['solana']['networks'][number]['providers'];
  readonly pollMs: number;
}

/** One enabled TON network: the registry's entry, its index providers and its poll interval. */
export interface TonNetworkConfig {
  readonly network: Readonly<Network> & { readonly id: TonNetworkId };
  readonly providers: ParsedConfig['ton']['networks'][number]['providers'];
  readonly pollMs: number;
}

/** An http URL that reaches a listen address from this machine (a wildcard address through loopback). */
/** Where the dev client commands look when not given --url: the default server.listen. */
export const DEFAULT_LOCAL_URL = 'http://127.0.0.1:8080';

/** " --url URL" for a printed dev client command when the instance is not at the default address, else "". */
export function devUrlFlag(url: string): string {
  return url === DEFAULT_LOCAL_URL ? '' : ` --url ${url}`;
}

/** server.listen given as a flag (--listen HOST:PORT), as a configuration override. */
export function listenOverride(listen: string | undefined): Record<string, Record<string, unknown>> {
  return listen === undefined ? {} : { server: { listen } };
}

export function localUrl(listen: string): string {
  const at = parseListen(listen)!;
  const host = at.host === '0.0.0.0' ? '127.0.0.1' : at.host === '::' ? '[::1]' : at.host.includes(':') ? `[${at.host}]` : at.host;
  return `http://${host}:${at.port}`;
}

export interface LoadConfigOptions {
  /** --config FILE */
  path?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Keys a command sets itself (`gatewayd dev`), over the file and the environment. */
  overrides?: Record<string, Record<string, unknown>>;
  /** Set by `gatewayd dev` alone: see Config.devMode. */
  devMode?: boolean;
}

/** The file to read, following the documented order; undefined means built-in defaults. */
export function resolveConfigPath(options: LoadConfigOptions = {}): string | undefined {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  if (options.path) return resolve(cwd, options.path);
  if (env.GATEWAYD_CONFIG) return resolve(cwd, env.GATEWAYD_CONFIG);
  const local = resolve(cwd, 'gatewayd.toml');
  return existsSync(local) ? local : undefined;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const path = resolveConfigPath(options);
  let raw: Record<string, unknown> = {};
  if (path) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`${path}: cannot read the configuration file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    try {
      raw = parseToml(text) as Record<string, unknown>;
    } catch (err) {
      // The first line only: smol-toml quotes the offending source lines after it, secrets included.
      const first = String((err as Error).message)
        .split('\n')[0]!
        .replace(/^Invalid TOML document: /, '');
      const line = (err as { line?: number }).line;
      throw new ConfigError(`${path}: invalid TOML${line ? ` at line ${line}` : ''}: ${first}`);
    }
  }
  applyEnvOverrides(raw, env);
  for (const [section, keys] of Object.entries(options.overrides ?? {})) {
    const current = raw[section];
    raw[section] = { ...(typeof current === 'object' && current !== null && !Array.isArray(current) ? current : {}), ...keys };
  }
  const result = configSchema().safeParse(raw);
  const where = path ?? 'built-in defaults';
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(`${where}: ${describeIssue(issue, raw)}`);
  }
  const parsed = result.data;
  const baseDir = path ? dirname(path) : cwd;
  if (!isAbsolute(parsed.database.path)) parsed.database.path = resolve(baseDir, parsed.database.path);
  if (parsed.webhooks.ca_file && !isAbsolute(parsed.webhooks.ca_file)) {
    parsed.webhooks.ca_file = resolve(baseDir, parsed.webhooks.ca_file);
  }
  return finish(parsed, where, options.devMode === true);
}

/** console.explorer_tx_url = "auto": each network's own explorer; the simulated chain has none. */
const EXPLORERS: Record<TronNetwork['name'], string> = {
  mainnet: 'https://tronscan.org/#/transaction/{tx}',
  nile: 'https://nile.tronscan.org/#/transaction/{tx}',
  devnet: '',
};

/** Derived values and the checks that span keys; the result is frozen. */
function finish(parsed: ParsedConfig, source: string, devMode = false): Config {
  const named = NETWORKS[parsed.tron.network];
  // The simulated chain runs as fast as [dev] says; real networks make a block every 3 s.
  const network = named.name === 'devnet' ? { ...named, blockIntervalMs: parsed.dev.block_interval_ms } : named;
  if (parsed.tron.api_url === '') {
    if (network.defaultApiUrl === '') {
      throw new ConfigError(
        `${source}: tron.api_url: tron.network = "${network.name}" has no public provider; give the simulated node's URL, or run \`gatewayd dev\` (which sets it)`,
      );
    }
    parsed.tron.api_url = network.defaultApiUrl;
  }
  const { networks, evmNetworks, solanaNetworks, tonNetworks } = enabledNetworks(parsed, source, network.id);
  const { pricing } = parsed;
  if (pricing.sources.length > 0 && pricing.min_sources > pricing.sources.length) {
    throw new ConfigError(
      `${source}: pricing.min_sources: ${pricing.min_sources} is more than the ${pricing.sources.length} configured [[pricing.sources]]; every fiat price would be refused`,
    );
  }
  const publicUrlFollowsListen = parsed.server.public_url === '';
  if (publicUrlFollowsListen) parsed.server.public_url = localUrl(parsed.server.listen);
  if (parsed.console.explorer_tx_url === 'auto') parsed.console.explorer_tx_url = EXPLORERS[network.name];
  const secretGenerated = parsed.server.secret === '';
  if (secretGenerated) parsed.server.secret = randomBytes(32).toString('base64url');
  return deepFreeze({
    ...parsed,
    source,
    secretGenerated,
    publicUrlFollowsListen,
    ...derived(parsed),
    network,
    networks,
    evmNetworks,
    solanaNetworks,
    tonNetworks,
    devMode,
  });
}

/**
 * The networks of tron.network and [[evm.networks]]: each EVM network once, with a provider, and on
 * the same side as the TRON network (a test network's worthless tokens never share a database with
 * real money, as docs/configuration.md says).
 */
function enabledNetworks(
  parsed: ParsedConfig,
  source: string,
  tronId: Network['id'],
): Pick<Config, 'networks' | 'evmNetworks' | 'solanaNetworks' | 'tonNetworks'> {
  const tron = CHAIN_NETWORKS[tronId];
  const seen = new Set<string>();
  /** The registry's entry of one [[family.networks]] table, checked: listed once, on the TRON network's side, with a provider. */
  const checked = <N extends Network>(family: string, i: number, entry: { id: N['id']; providers: readonly unknown[] }, hint: string): N => {
    const key = `${source}: ${family}.networks[${i}]`;
    const network = CHAIN_NETWORKS[entry.id] as N;
    if (seen.has(entry.id)) throw new ConfigError(`${key}.id: "${entry.id}" is listed twice; give each network once`);
    seen.add(entry.id);
    if (network.test !== tron.test) {
      throw new ConfigError(
        `${key}.id: "${entry.id}" is a ${network.test ? 'test' : 'real'} network and tron.network = "${parsed.tron.network}" a ${tron.test ? 'test' : 'real'} one; ` +
          'one instance runs real networks or test networks, never both (run a second instance with its own database for the other)',
      );
    }
    if (entry.providers.length === 0) throw new ConfigError(`${key}.providers: give at least one ${hint}`);
    return network;
  };
  const evmNetworks: EvmNetworkConfig[] = parsed.evm.networks.map((entry, i) => {
    const network = checked<EvmNetworkConfig['network']>('evm', i, entry, 'JSON-RPC provider ({ url = "https://…" })');
    const finality: FinalityRule =
      typeof entry.finality === 'number' ? { kind: 'confirmations', blocks: entry.finality } : { kind: 'tag', tag: entry.finality };
    // 5 s by default on every network: a payment in the latest block is seen within about 5 s, at one
    // eth_getLogs a poll (17 280 a day, docs/payments.md "What it costs"), whatever the block time.
    const pollMs = entry.poll_interval_seconds > 0 ? entry.poll_interval_seconds * 1000 : DEFAULT_EVM_POLL_MS;
    return { network, providers: entry.providers, finality, pollMs };
  });
  const accountPollMs = (seconds: number) => (seconds > 0 ? seconds * 1000 : DEFAULT_ACCOUNT_POLL_MS);
  const solanaNetworks: SolanaNetworkConfig[] = parsed.solana.networks.map((entry, i) => ({
    network: checked<SolanaNetworkConfig['network']>('solana', i, entry, 'Solana JSON-RPC provider ({ url = "https://…" })'),
    providers: entry.providers,
    pollMs: accountPollMs(entry.poll_interval_seconds),
  }));
  const tonNetworks: TonNetworkConfig[] = parsed.ton.networks.map((entry, i) => ({
    network: checked<TonNetworkConfig['network']>('ton', i, entry, 'index provider ({ url = "https://toncenter.com/api/v3", kind = "toncenter" })'),
    providers: entry.providers,
    pollMs: accountPollMs(entry.poll_interval_seconds),
  }));
  const networks = [tron, ...evmNetworks.map((e) => e.network), ...solanaNetworks.map((e) => e.network), ...tonNetworks.map((e) => e.network)];
  return { networks, evmNetworks, solanaNetworks, tonNetworks };
}

function derived(parsed: ParsedConfig): Pick<Config, 'publicOrigin' | 'secureCookies'> {
  const url = new URL(parsed.server.public_url);
  return { publicOrigin: url.origin, secureCookies: url.protocol === 'https:' };
}

function describeIssue(issue: z.core.$ZodIssue, raw: Record<string, unknown>): string {
  if (issue.code === 'unrecognized_keys') {
    const prefix = issue.path.length ? `${issue.path.join('.')}.` : '';
    return `unknown key ${issue.keys.map((k) => `"${prefix}${k}"`).join(', ')}`;
  }
  const key = issue.path.join('.');
  let value: unknown = raw;
  for (const part of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[part as PropertyKey];
  return `${key}: ${issue.message}${shown(issue.path, value)}`;
}

/**
 * Configuration errors quote the offending value to help, except where it may be a secret: keys
 * named like one (secret, password, token, api_key) and URLs, which may carry credentials
 * (smtps://user:password@..., a provider's url). Those are named, never echoed, whatever the error.
 */
export function isSecretKey(path: ReadonlyArray<PropertyKey>): boolean {
  return path.some((part) => typeof part === 'string' && /secret|password|token|api_key$|_url$|^url$/i.test(part));
}

function shown(path: ReadonlyArray<PropertyKey>, value: unknown): string {
  if (value === undefined) return '';
  return isSecretKey(path) ? ' (value not shown: it may be secret)' : ` (got ${JSON.stringify(value)})`;
}

/** GATEWAYD_<SECTION>_<KEY> overrides; the value is coerced to the type of the key's default. */
function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const defaults = configSchema().parse({}) as Record<string, Record<string, unknown>>;
  const known = new Map<string, [string, string]>();
  for (const [section, keys] of Object.entries(defaults)) {
    for (const key of Object.keys(keys)) known.set(`GATEWAYD_${section}_${key}`.toUpperCase(), [section, key]);
  }
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('GATEWAYD_') || name === 'GATEWAYD_CONFIG' || value === undefined) continue;
    const target = known.get(name);
    if (!target) throw new ConfigError(`environment: unknown variable ${name}`);
    const [section, key] = target;
    const example = defaults[section]![key];
    const current = (raw[section] ??= {});
    if (typeof current !== 'object' || current === null || Array.isArray(current)) continue;
    (current as Record<string, unknown>)[key] = coerceEnv(name, value, example, [section, key]);
  }
}

function coerceEnv(name: string, value: string, example: unknown, path: string[]): unknown {
  const got = shown(path, value);
  if (typeof example === 'number') {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new ConfigError(`environment: ${name}: expected a number${got}`);
    return n;
  }
  if (typeof example === 'boolean') {
    if (/^(true|1|yes|on)$/i.test(value)) return true;
    if (/^(false|0|no|off)$/i.test(value)) return false;
    throw new ConfigError(`environment: ${name}: expected true or false${got}`);
  }
  if (Array.isArray(example) || (typeof example === 'object' && example !== null)) {
    const trimmed = value.trim();
    if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
      try {
        return JSON.parse(trimmed);
      } catch {
        throw new ConfigError(`environment: ${name}: invalid JSON${got}`);
      }
    }
    if (Array.isArray(example)) {
      const items = trimmed === '' ? [] : trimmed.split(',').map((s) => s.trim());
      return typeof example[0] === 'number' ? items.map(Number) : items;
    }
    throw new ConfigError(`environment: ${name}: expected a JSON object${got}`);
  }
  return value;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A configuration for tests and tools: defaults with the given sections merged in. */
export function buildConfig(overrides: Record<string, Record<string, unknown>> = {}, options: { devMode?: boolean } = {}): Config {
  const result = configSchema().safeParse(overrides);
  if (!result.success) throw new ConfigError(`overrides: ${describeIssue(result.error.issues[0]!, overrides)}`);
  return finish(result.data, 'overrides', options.devMode === true);
}
