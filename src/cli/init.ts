/** `gatewayd init [--dir DIR]`: a commented gatewayd.toml with a fresh secret, and the data folder (0700). */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from './usage.js';

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

export function runInit(dirArg: string | undefined, out: (line: string) => void): number {
  const dir = resolve(dirArg ?? '.');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'gatewayd.toml');
  if (existsSync(file)) throw new UsageError(`${file}: already exists; not overwriting it`);
  writeFileSync(file, configTemplate(randomBytes(32).toString('base64url')), { mode: 0o600, flag: 'wx' });
  const data = join(dir, 'data');
  const existed = existsSync(data);
  mkdirSync(data, { recursive: true, mode: 0o700 });
  chmodSync(data, 0o700);
  out(`wrote ${file} (mode 0600) with a fresh server.secret`);
  // Say what really happened: an existing data folder is only narrowed to 0700.
  out(existed ? `${data} already exists; set its mode to 0700` : `created ${data} (mode 0700)`);
  out(`next: edit server.public_url, then run \`gatewayd migrate --config ${file}\` and \`gatewayd serve --config ${file}\``);
  return 0;
}
