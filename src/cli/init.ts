/**
 * `gatewayd init [--dir DIR] [--domain D] ...`: a commented gatewayd.toml with a fresh secret and the
 * data folder (0700); with a public domain also the systemd unit and a Caddy site (deploy-files.ts),
 * so that an instance goes live from flags or answers alone. Settings a flag leaves out are asked
 * on a terminal (or with --ask), and left at their defaults otherwise.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { caddyfile, SERVICE_USER, systemdUnit } from './deploy-files.js';
import { UsageError } from './usage.js';

/** What init writes into the template besides the secret; unset keys keep the template's line. */
export interface InitSettings {
  publicUrl?: string;
  trustProxy?: boolean;
  listen?: string;
  databasePath?: string;
  tronApiKey?: string;
  smtpUrl?: string;
  emailFrom?: string;
}

const toml = (value: string) => JSON.stringify(value);

/** The template with the given settings in place of their commented or default lines. */
export function configFile(secret: string, settings: InitSettings = {}): string {
  let text = configTemplate(secret);
  const set = (pattern: RegExp, line: string | undefined) => {
    if (line !== undefined) text = text.replace(pattern, line);
  };
  set(/^listen = .*$/m, settings.listen && `listen = ${toml(settings.listen)}`);
  set(/^# public_url = .*$/m, settings.publicUrl && `public_url = ${toml(settings.publicUrl)}`);
  set(/^trust_proxy = .*$/m, settings.trustProxy === undefined ? undefined : `trust_proxy = ${settings.trustProxy}`);
  set(/^path = "data\/gateway.db"$/m, settings.databasePath && `path = ${toml(settings.databasePath)}`);
  set(/^api_key = ""$/m, settings.tronApiKey && `api_key = ${toml(settings.tronApiKey)}`);
  set(/^smtp_url = ""$/m, settings.smtpUrl && `smtp_url = ${toml(settings.smtpUrl)}`);
  set(/^from = .*$/m, settings.emailFrom && `from = ${toml(settings.emailFrom)}`);
  return text;
}

export function configTemplate(secret: string): string {
  return `# gatewayd configuration. Every key may also be set through the environment as
# GATEWAYD_<SECTION>_<KEY>, e.g. GATEWAYD_EMAIL_SMTP_URL. Relative paths are relative to this file.

[server]
# host:port to bind. Keep it on loopback behind a reverse proxy that terminates HTTPS.
listen = "127.0.0.1:8080"
# The public origin: links in mail, checkout_url, the allowed Origin; cookies are Secure when https.
# Unset, it follows listen (http://127.0.0.1:8080 here); set it to the address people use.
# public_url = "https://pay.example.com"
# Take the client address from X-Forwarded-For (only behind your own reverse proxy).
trust_proxy = false
# Key material for cookie and token HMACs. Keep it secret; changing it signs everyone out.
secret = "${secret}"

[database]
# SQLite file (WAL mode). Back it up with \`gatewayd backup FILE\`.
path = "data/gateway.db"

[tron]
# "mainnet" (real money), or "nile" (TRON's test network: every page and mail says so). A database
# belongs to the network it was first used with and refuses any other.
network = "mainnet"
# TronGrid-compatible base URL. Empty: the network's own (https://api.trongrid.io, https://nile.trongrid.io).
api_url = ""
# TronGrid API key, sent as TRON-PRO-API-KEY. Strongly recommended in production.
api_key = ""
poll_interval_seconds = 5

# Other networks beside TRON: one table each, with its providers in order of preference (two for
# money that matters: nothing then moves on one provider's word). Uncomment and fill in to accept
# USDT and USDC there (docs/configuration.md, "EVM networks" and "Solana and TON networks").
# [[evm.networks]]
# id = "bsc-mainnet"             # ethereum-mainnet, bsc-mainnet, polygon-mainnet, arbitrum-mainnet, base-mainnet
# finality = "finalized"         # or "safe", or a number of confirmations
# providers = [{ url = "https://bsc-rpc.example/KEY" }, { url = "https://second-bsc-rpc.example" }]
#
# [[solana.networks]]
# id = "solana-mainnet"
# providers = [{ url = "https://solana-rpc.example/KEY" }, { url = "https://second-solana-rpc.example" }]
#
# [[ton.networks]]
# id = "ton-mainnet"
# providers = [{ url = "https://toncenter.com/api/v3", kind = "toncenter", api_key = "" }, { url = "https://tonapi.io", kind = "tonapi", api_key = "" }]

[invoices]
# Largest identification adjustment added to a price (a decimal string).
max_adjustment = "0.099999"

[pricing]
# Invoices may be priced in these currencies (ISO 4217); "amount" is then converted to USDT at the
# median of the fresh rates below, plus the merchant's markup, rounded up to round_to.
currencies = ["USD", "EUR", "CNY", "GBP", "RUB", "JPY", "TRY", "BRL", "INR"]
# A price is refused (503 rate_unavailable), never guessed, when fewer than min_sources rates are
# younger than max_age_seconds, or fewer than min_sources of them agree within max_spread_percent
# (a source outside the agreeing group is set aside and shown on /health; the others price).
min_sources = 1
max_age_seconds = 300
max_spread_percent = 2
round_to = "0.01"
# A rate that moves more than max_jump_percent from one accepted within jump_window_seconds is
# held (refused) until a read jump_confirm_seconds later agrees with it.
max_jump_percent = 10
jump_window_seconds = 600
jump_confirm_seconds = 120
# A source's 429 Retry-After is honoured up to this, then one request probes it.
retry_after_max_seconds = 300
# Each currency's rate must lie in a plausible range (built in: a tenth to ten times a reference
# rate, 0.8 to 1.25 for USD); replace it per currency, e.g. { ARS = { min = "500", max = "50000" } }.
# rate_bounds = {}

# Rate sources, asked about once a minute (public APIs, no key). Remove them all to price in USDT only.
[[pricing.sources]]
kind = "coingecko"

[[pricing.sources]]
kind = "kraken"

[[pricing.sources]]
kind = "coinbase"

[email]
# smtp:// or smtps:// URL, e.g. "smtps://user:password@smtp.example.com:465". Empty: no email
# (registration and password reset then answer 503; use \`gatewayd merchant create\`).
smtp_url = ""
# "required": smtps://, or smtp:// that must upgrade with STARTTLS (a server that does not offer it
# is refused, so nobody on the path can strip it and read reset links or the SMTP password).
# "opportunistic": STARTTLS only when offered; for a relay on this machine (smtp://127.0.0.1:25).
smtp_tls = "required"
from = "gatewayd <noreply@localhost>"
# Mail the support staff on new tickets and customer messages.
staff_notify = true
# Mail owners when an unmatched or late payment reaches their wallets (needs smtp_url).
payment_notices = true

[captcha]
# "turnstile", "hcaptcha" or "" (none).
provider = ""
site_key = ""
secret_key = ""
# Override of the provider's siteverify endpoint (tests, proxies). Empty: the provider's own.
verify_url = ""

[google]
# OAuth client id for "Sign in with Google". Empty: external sign-in is off.
client_id = ""
jwks_url = "https://www.googleapis.com/oauth2/v3/certs"
issuers = ["https://accounts.google.com", "accounts.google.com"]

[auth]
# true: support staff cannot use the support inbox until they turn on two-factor sign-in.
require_2fa_for_staff = false

[support]
# Accounts (by email) that may use the support inbox.
staff_emails = []
reference_prefix = "SUP"

[webhooks]
allowed_ports = [443]
# Address ranges exempted from the private-target block, e.g. ["10.0.0.0/8"] for a private receiver.
allow_private_cidrs = []
# Hostname to IP overrides, like curl --resolve: { "hooks.example.com" = "203.0.113.7" }
resolve = {}
# Extra trusted CA bundle (PEM) for webhook receivers.
ca_file = ""
timeout_seconds = 10

[log]
# fatal, error, warn, info, debug, trace or silent. JSON lines on stdout.
level = "info"

[metrics]
# Prometheus text format at http://<listen>/metrics, on its own listener (never the public one).
# Keep it on loopback unless your scraper needs it elsewhere; off by default.
enabled = false
listen = "127.0.0.1:9464"

[rate_limits]
# Requests per minute; 0 turns a limit off.
auth_per_ip = 20
auth_per_email = 10
# Two-factor codes tried per account (sign-in, setup, turning off), beside auth_per_ip per address.
two_factor_per_account = 5
public_per_ip = 10
chat_per_token = 30
api_per_key = 1200
# Invoice creations per merchant, over all its API keys and sessions.
invoices_per_merchant = 600

[api_keys]
# API keys per account that are neither revoked nor expired.
max_active = 20
`;
}

export interface InitOptions {
  dir?: string;
  /** The public domain (pay.example.com): public_url https://D, trust_proxy, a Caddy site, the unit. */
  domain?: string;
  publicUrl?: string;
  listen?: string;
  /** The data folder (default DIR/data); the database is DATA/gateway.db. */
  data?: string;
  smtpUrl?: string;
  emailFrom?: string;
  tronApiKey?: string;
  /**
   * The layout install.sh installs (SYSTEM_LAYOUT): the unit and the database path name those
   * places whatever DIR is, and no data folder is made here (install.sh makes it).
   */
  system?: boolean;
}

/** Where install.sh puts things; `init --system` writes files for that layout. */
export const SYSTEM_LAYOUT = { exe: '/usr/local/bin/gatewayd', config: '/etc/gatewayd/gatewayd.toml', data: '/var/lib/gatewayd' };

/** A bare domain name: letters, digits, hyphens and dots, no scheme, port or path. */
const DOMAIN = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/i;
const LISTEN = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/i;

export function checkInitOptions(o: InitOptions): void {
  if (o.domain !== undefined && !DOMAIN.test(o.domain)) {
    throw new UsageError(`--domain ${JSON.stringify(o.domain)} is not a domain name: give the bare name people type, e.g. pay.example.com`);
  }
  if (o.domain !== undefined && o.publicUrl !== undefined) throw new UsageError('--domain and --public-url say the same thing: give one');
  if (o.system && o.data !== undefined) throw new UsageError(`--system keeps the database in ${SYSTEM_LAYOUT.data}: leave out --data`);
  if (o.publicUrl !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(o.publicUrl)) {
    throw new UsageError(`--public-url ${JSON.stringify(o.publicUrl)} must be an origin such as https://pay.example.com`);
  }
  if (o.listen !== undefined && !LISTEN.test(o.listen)) throw new UsageError(`--listen ${JSON.stringify(o.listen)} must be host:port, e.g. 127.0.0.1:8080`);
  if (o.smtpUrl !== undefined && o.smtpUrl !== '' && !/^smtps?:\/\/\S+$/.test(o.smtpUrl)) {
    throw new UsageError('--smtp-url must be an smtp:// or smtps:// URL, e.g. smtps://user:password@smtp.example.com:465');
  }
  for (const [flag, value] of [
    ['--email-from', o.emailFrom],
    ['--tron-api-key', o.tronApiKey],
  ] as const) {
    if (value !== undefined && /[\u0000-\u001f"\\]/.test(value)) throw new UsageError(`${flag} may not contain quotes, backslashes or control characters`);
  }
}

/** The questions init asks for what its flags left out, in order; an empty answer keeps the default. */
export const QUESTIONS: { key: 'domain' | 'smtpUrl' | 'emailFrom' | 'tronApiKey'; ask: string }[] = [
  { key: 'domain', ask: 'Public domain for the checkout and console, e.g. pay.example.com (empty: local use only): ' },
  { key: 'smtpUrl', ask: 'SMTP URL for registration and reset mail, e.g. smtps://user:password@smtp.example.com:465 (empty: no mail): ' },
  { key: 'emailFrom', ask: 'From address of that mail, e.g. Shop payments <pay@example.com> (empty: gatewayd <noreply@localhost>): ' },
  { key: 'tronApiKey', ask: 'TronGrid API key, free at trongrid.io (empty: none, rate-limited): ' },
];

/** Asks each question whose flag was not given; reads one line per answer from ask(). */
export async function askMissing(o: InitOptions, ask: (question: string) => Promise<string>): Promise<InitOptions> {
  const filled = { ...o };
  for (const q of QUESTIONS) {
    if (filled[q.key] !== undefined || (q.key === 'domain' && filled.publicUrl !== undefined)) continue;
    const answer = (await ask(q.ask)).trim();
    if (answer !== '') filled[q.key] = answer;
  }
  return filled;
}

/** One line of stdin per question, the question on stderr (stdout stays the command's report). */
export function lineAsker(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stderr) {
  const lines = createInterface({ input, terminal: false })[Symbol.asyncIterator]();
  return {
    ask: async (question: string) => {
      output.write(question);
      const next = await lines.next();
      return next.done ? '' : (next.value as string);
    },
    close: () => void lines.return?.(),
  };
}

export function runInit(options: InitOptions | string | undefined, out: (line: string) => void, exe = defaultExe()): number {
  const o: InitOptions = typeof options === 'object' ? options : { dir: options };
  checkInitOptions(o);
  const dir = resolve(o.dir ?? '.');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'gatewayd.toml');
  if (existsSync(file)) throw new UsageError(`${file}: already exists; not overwriting it`);
  const data = o.system ? SYSTEM_LAYOUT.data : o.data === undefined ? join(dir, 'data') : resolve(o.data);
  const domain = o.domain?.toLowerCase();
  const publicUrl = domain ? `https://${domain}` : o.publicUrl?.replace(/\/$/, '');
  const settings: InitSettings = {
    publicUrl,
    // Behind the reverse proxy init writes, the client's address comes from X-Forwarded-For.
    trustProxy: domain ? true : undefined,
    listen: o.listen,
    databasePath: o.system || o.data !== undefined ? join(data, 'gateway.db') : undefined,
    tronApiKey: o.tronApiKey,
    smtpUrl: o.smtpUrl || undefined,
    emailFrom: o.emailFrom,
  };
  writeFileSync(file, configFile(randomBytes(32).toString('base64url'), settings), { mode: 0o600, flag: 'wx' });
  const unit = join(dir, 'gatewayd.service');
  const paths = o.system ? SYSTEM_LAYOUT : { exe, config: file, data };
  writeFileSync(unit, systemdUnit(paths), { mode: 0o644 });
  out(`wrote ${file} (mode 0600) with a fresh server.secret${publicUrl ? `, public_url ${publicUrl}` : ''}, and ${unit} (systemd unit)`);
  if (!o.system) {
    const existed = existsSync(data);
    mkdirSync(data, { recursive: true, mode: 0o700 });
    chmodSync(data, 0o700);
    // Say what really happened: an existing data folder is only narrowed to 0700.
    out(existed ? `${data} already exists; set its mode to 0700` : `created ${data} (mode 0700)`);
  }
  const site = join(dir, 'Caddyfile');
  if (domain) {
    writeFileSync(site, caddyfile(domain, o.listen ?? '127.0.0.1:8080'), { mode: 0o644 });
    out(`wrote ${site} (Caddy: HTTPS for ${domain} with an automatic certificate)`);
    if (!o.smtpUrl) out('no --smtp-url: nobody can confirm a registration or reset a password by mail until email.smtp_url is set');
    if (!o.tronApiKey) out('no --tron-api-key: the TRON watcher shares the public rate limit; a free TronGrid key is strongly recommended');
  }
  if (o.system || !domain) {
    out(
      `next: ${publicUrl ? '' : 'edit server.public_url, then '}run \`gatewayd migrate --config ${paths.config}\` and \`gatewayd serve --config ${paths.config}\``,
    );
    return 0;
  }
  out('next, to run it as a service (install.sh does all of this with the same flags):');
  out(`  sudo useradd --system --user-group --no-create-home --shell /usr/sbin/nologin ${SERVICE_USER}`);
  out(`  sudo chown -R ${SERVICE_USER}: ${data} && sudo chown root:${SERVICE_USER} ${file} && sudo chmod 0640 ${file}`);
  out(`  sudo cp ${unit} /etc/systemd/system/ && sudo systemctl daemon-reload && sudo systemctl enable --now gatewayd`);
  out(`  sudo apt install caddy && sudo cp ${site} /etc/caddy/Caddyfile && sudo systemctl reload caddy`);
  out(`  gatewayd doctor --config ${file}`);
  return 0;
}

/** The executable a unit written now should start: this single executable, or the clone's bin/gatewayd. */
function defaultExe(): string {
  return process.argv[1] && /gatewayd$/.test(process.argv[1]) ? resolve(process.argv[1]) : process.execPath;
}
