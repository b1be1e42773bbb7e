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
import { parseAmount } from './lib/amounts.js';
import { NETWORK_NAMES, NETWORKS, type TronNetwork } from './lib/tron.js';
import { pricingConfigSchema } from './pricing/pricing.config.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const listenSchema = z.string().refine((v) => parseListen(v) !== undefined, {
  message: 'expected host:port, e.g. 127.0.0.1:8080 or [::1]:8080',
});

const httpUrl = (message: string) =>
  z.string().refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, { message });

/**
 * server.public_url, parsed and normalised once here: lower-case scheme and host, no default port,
 * no trailing slash. Everything else (cookies' Secure flag, links, the allowed Origin) reads the
 * normalised value, so `HTTPS://Pay.Example.com/` behaves exactly like `https://pay.example.com`.
 */
const publicUrlSchema = z.string().transform((value, ctx) => {
  // "" (the default): follow server.listen (see finish()).
  if (value.trim() === '') return '';
  let url: URL | undefined;
  try {
    url = new URL(value.trim());
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    ctx.addIssue({ code: 'custom', message: 'expected an absolute http(s) URL such as https://pay.example.com' });
    return z.NEVER;
  }
  if (url.username || url.password || url.search || url.hash) {
    ctx.addIssue({ code: 'custom', message: 'expected a URL without credentials, query or fragment, such as https://pay.example.com' });
    return z.NEVER;
  }
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
});

const amountString = z.string().refine((v) => {
  const micro = parseAmount(v);
  return micro !== undefined && micro >= 1n && micro <= 999_999n;
}, { message: 'expected a decimal string between "0.000001" and "0.999999"' });

const perMinute = z.number().int().min(0).max(1_000_000);

export const configSchema = z.strictObject({
  server: z.strictObject({
    listen: listenSchema.default('127.0.0.1:8080'),
    // "" = follows server.listen (http://127.0.0.1:8080 for the default listen).
    public_url: publicUrlSchema.default(''),
    trust_proxy: z.boolean().default(false),
    secret: z.string().default(''),
  }).prefault({}),
  database: z.strictObject({
    path: z.string().min(1).default('data/gateway.db'),
    /** postgres://user:password@host:port/db selects PostgreSQL (docs/operations.md); empty: the SQLite file at path. */
    url: z.union([z.literal(''), z.string().regex(/^postgres(ql)?:\/\/\S+$/i, { message: 'expected a postgres:// URL (or empty for the SQLite file at database.path)' })]).default(''),
  }).prefault({}),
  tron: z.strictObject({
    network: z.enum(NETWORK_NAMES, { message: `expected one of ${NETWORK_NAMES.map((n) => `"${n}"`).join(', ')}` }).default('mainnet'),
    // '' = the network's own TronGrid (api.trongrid.io on mainnet, nile.trongrid.io on Nile).
    api_url: z.union([z.literal(''), httpUrl('expected an absolute http(s) URL')]).default(''),
    api_key: z.string().default(''),
    /** Providers in order of preference; empty = one provider from api_url and api_key. */
    providers: z.array(z.strictObject({
      url: httpUrl('expected an absolute http(s) URL'),
      api_key: z.string().default(''),
      /** Requests started per second at most; 0 = unpaced (an own node). */
      requests_per_second: z.number().min(0).max(10_000).default(12),
      timeout_seconds: z.number().positive().max(300).default(10),
    })).default([]),
    poll_interval_seconds: z.number().positive().max(3600).default(5),
    /**
     * With two or more providers, what the second provider reads of each block: "ids" (the
     * default: every block in full by both, so no provider can hide a payment) or "count" (the
     * full read alternates between the providers; a block that pays a watched address is read in
     * full by the other too, any other block only counted: about half the bandwidth, and blind to
     * an omission padded with a made-up transaction). docs/operations.md says what each catches.
     */
    cross_check: z.enum(['count', 'ids']).default('ids'),
    /** How long scanning goes on after the last open invoice closes (late payments are still recorded). */
    linger_hours: z.number().min(0).max(24 * 365).default(24),
    /** Transfers below this amount are folded away in the console (still recorded). */
    dust_threshold: z.string().refine((v) => parseAmount(v) !== undefined, { message: 'expected a decimal USDT amount such as "0.01"' }).default('0.01'),
  }).prefault({}),
  invoices: z.strictObject({
    max_adjustment: amountString.default('0.099999'),
    // On an address that two or more accounts registered, the most of one price's amount pool one
    // account may hold (live reservations), in percent; 100 turns the rule off.
    shared_pool_max_percent: z.number().int().min(1).max(100).default(50),
  }).prefault({}),
  // Prices in fiat currencies (docs/configuration.md, Prices in fiat): rate sources and refusal limits.
  pricing: pricingConfigSchema.prefault({}),
  email: z.strictObject({
    smtp_url: z.string().refine((v) => v === '' || /^smtps?:\/\//.test(v), {
      message: 'expected an smtp:// or smtps:// URL, or "" to turn email off',
    }).default(''),
    // "required": smtps://, or smtp:// that must upgrade with STARTTLS (a server or a man in the
    // middle that does not offer it gets neither the message nor the credentials). "opportunistic":
    // STARTTLS when offered, else plain text; only for a relay on this machine or a trusted network.
    smtp_tls: z.enum(['required', 'opportunistic']).default('required'),
    from: z.string().min(1).default('gatewayd <noreply@localhost>'),
    staff_notify: z.boolean().default(true),
    payment_notices: z.boolean().default(true),
  }).prefault({}),
  notify: z.strictObject({
    // A Telegram bot's token (from @BotFather); "" = no Telegram notices.
    telegram_bot_token: z.string().regex(/^$|^\d{1,20}:[A-Za-z0-9_-]{20,100}$/, 'expected a bot token like 123456:ABC-DEF... or ""').default(''),
    // The Bot API's base URL: a self-hosted Bot API server, or a test's stand-in.
    telegram_api_url: httpUrl('expected an absolute http(s) URL').default('https://api.telegram.org'),
  }).prefault({}),
  captcha: z.strictObject({
    provider: z.enum(['', 'turnstile', 'hcaptcha']).default(''),
    site_key: z.string().default(''),
    secret_key: z.string().default(''),
    verify_url: z.string().default(''),
  }).prefault({}),
  google: z.strictObject({
    client_id: z.string().default(''),
    jwks_url: httpUrl('expected an absolute http(s) URL').default('https://www.googleapis.com/oauth2/v3/certs'),
    issuers: z.array(z.string().min(1)).default(['https://accounts.google.com', 'accounts.google.com']),
  }).prefault({}),
  auth: z.strictObject({
    // Support staff (support.staff_emails) cannot open the support inbox until two-factor sign-in is on.
    require_2fa_for_staff: z.boolean().default(false),
  }).prefault({}),
  support: z.strictObject({
    staff_emails: z.array(z.string().email()).default([]),
    reference_prefix: z.string().regex(/^[A-Z0-9]{1,10}$/, 'expected 1 to 10 uppercase letters or digits').default('SUP'),
  }).prefault({}),
  webhooks: z.strictObject({
    allowed_ports: z.array(z.number().int().min(1).max(65535)).min(1).default([443]),
    allow_private_cidrs: z.array(z.string()).default([]),
    resolve: z.record(z.string(), z.string()).default({}),
    ca_file: z.string().default(''),
    timeout_seconds: z.number().positive().max(300).default(10),
  }).prefault({}),
  console: z.strictObject({
    // Where a transaction hash links to: {tx} is replaced by the hash; "" shows hashes without links;
    // "auto" is the network's own explorer (none on the simulated chain).
    explorer_tx_url: z
      .string()
      .refine((v) => {
        if (v === '' || v === 'auto') return true;
        try {
          return new URL(v.replace('{tx}', 'x')).protocol === 'https:' && v.includes('{tx}');
        } catch {
          return false;
        }
      }, { message: 'expected an https URL containing {tx}, e.g. https://tronscan.org/#/transaction/{tx}, "auto" for the network\'s explorer, or "" for no links' })
      .default('auto'),
  }).prefault({}),
  log: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  }).prefault({}),
  metrics: z.strictObject({
    enabled: z.boolean().default(false),
    listen: listenSchema.default('127.0.0.1:9464'),
  }).prefault({}),
  // The simulated chain of `gatewayd dev` (never read by `gatewayd serve`).
  dev: z.strictObject({
    node_listen: listenSchema.default('127.0.0.1:0'),
    block_interval_ms: z.number().int().min(100).max(60_000).default(1000),
    solidity_lag: z.number().int().min(0).max(100).default(3),
    filler_per_block: z.number().int().min(0).max(1000).default(6),
  }).prefault({}),
  rate_limits: z.strictObject({
    auth_per_ip: perMinute.default(20),
    auth_per_email: perMinute.default(10),
    two_factor_per_account: perMinute.default(5),
    public_per_ip: perMinute.default(10),
    chat_per_token: perMinute.default(30),
    api_per_key: perMinute.default(1200),
    invoices_per_merchant: perMinute.default(600),
  }).prefault({}),
  api_keys: z.strictObject({
    max_active: z.number().int().min(1).max(10_000).default(20),
  }).prefault({}),
});

type ParsedConfig = z.infer<typeof configSchema>;

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
   * True only in a process started by `gatewayd dev` (never from a file or the environment): its
   * webhooks may go to http and to loopback or private addresses, such as a receiver on localhost.
   */
  readonly devMode: boolean;
  /** True when server.public_url is https: cookies carry the Secure flag. */
  readonly secureCookies: boolean;
};

export interface ListenAddress {
  host: string;
  port: number;
}

export function parseListen(value: string): ListenAddress | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/.exec(value);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { host: (m[1] ?? m[2])!, port };
}

/** An http URL that reaches a listen address from this machine (a wildcard address through loopback). */
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
      const first = String((err as Error).message).split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      const line = (err as { line?: number }).line;
      throw new ConfigError(`${path}: invalid TOML${line ? ` at line ${line}` : ''}: ${first}`);
    }
  }
  applyEnvOverrides(raw, env);
  for (const [section, keys] of Object.entries(options.overrides ?? {})) {
    const current = raw[section];
    raw[section] = { ...(typeof current === 'object' && current !== null && !Array.isArray(current) ? current : {}), ...keys };
  }
  const result = configSchema.safeParse(raw);
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
      throw new ConfigError(`${source}: tron.api_url: tron.network = "${network.name}" has no public provider; give the simulated node's URL, or run \`gatewayd dev\` (which sets it)`);
    }
    parsed.tron.api_url = network.defaultApiUrl;
  }
  const { pricing } = parsed;
  if (pricing.sources.length > 0 && pricing.min_sources > pricing.sources.length) {
    throw new ConfigError(`${source}: pricing.min_sources: ${pricing.min_sources} is more than the ${pricing.sources.length} configured [[pricing.sources]]; every fiat price would be refused`);
  }
  const publicUrlFollowsListen = parsed.server.public_url === '';
  if (publicUrlFollowsListen) parsed.server.public_url = localUrl(parsed.server.listen);
  if (parsed.console.explorer_tx_url === 'auto') parsed.console.explorer_tx_url = EXPLORERS[network.name];
  const secretGenerated = parsed.server.secret === '';
  if (secretGenerated) parsed.server.secret = randomBytes(32).toString('base64url');
  return deepFreeze({ ...parsed, source, secretGenerated, publicUrlFollowsListen, ...derived(parsed), network, devMode });
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
 * (smtps://user:password@...). Those are named, never echoed, whatever the error.
 */
export function isSecretKey(path: ReadonlyArray<PropertyKey>): boolean {
  return path.some((part) => typeof part === 'string' && /secret|password|token|api_key$|_url$/i.test(part));
}

function shown(path: ReadonlyArray<PropertyKey>, value: unknown): string {
  if (value === undefined) return '';
  return isSecretKey(path) ? ' (value not shown: it may be secret)' : ` (got ${JSON.stringify(value)})`;
}

/** GATEWAYD_<SECTION>_<KEY> overrides; the value is coerced to the type of the key's default. */
function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const defaults = configSchema.parse({}) as Record<string, Record<string, unknown>>;
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
  const result = configSchema.safeParse(overrides);
  if (!result.success) throw new ConfigError(`overrides: ${describeIssue(result.error.issues[0]!, overrides)}`);
  return finish(result.data, 'overrides', options.devMode === true);
}
