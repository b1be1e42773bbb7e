/**
 * The configuration's schema (src/config.ts loads, overrides and checks it): every key of
 * docs/configuration.md with its type, bounds and default, as one strict zod object that
 * configSchema() builds when a configuration is read.
 */
import { z } from 'zod';
import { parseAmount } from './lib/amounts.js';
import { NETWORK_NAMES } from './lib/tron.js';
import { evmNetworksSchema, httpUrl, providerUrl, solanaNetworksSchema, tonNetworksSchema, TRON_KEY_FORM } from './config.networks.schema.js';
import { pricingConfigSchema } from './pricing/pricing.config.js';

const listenSchema = () =>
  z.string().refine((v) => parseListen(v) !== undefined, {
    message: 'expected host:port, e.g. 127.0.0.1:8080 or [::1]:8080',
  });

const publicUrlSchema = () =>
  z.string().transform((value, ctx) => {
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

const amountString = () =>
  z.string().refine(
    (v) => {
      const micro = parseAmount(v);
      return micro !== undefined && micro >= 1n && micro <= 999_999n;
    },
    { message: 'expected a decimal string between "0.000001" and "0.999999"' },
  );

const perMinute = () => z.number().int().min(0).max(1_000_000);

function buildConfigSchema() {
  return z.strictObject({
    server: z
      .strictObject({
        listen: listenSchema().default('127.0.0.1:8080'),
        // "" = follows server.listen (http://127.0.0.1:8080 for the default listen).
        public_url: publicUrlSchema().default(''),
        trust_proxy: z.boolean().default(false),
        secret: z.string().default(''),
      })
      .prefault({}),
    database: z
      .strictObject({
        path: z.string().min(1).default('data/gateway.db'),
        /** postgres://user:password@host:port/db selects PostgreSQL (docs/operations.md); empty: the SQLite file at path. */
        url: z
          .union([
            z.literal(''),
            z.string().regex(/^postgres(ql)?:\/\/\S+$/i, { message: 'expected a postgres:// URL (or empty for the SQLite file at database.path)' }),
          ])
          .default(''),
        /**
         * PostgreSQL: the hot path's queries as named prepared statements, parsed and planned once per
         * connection (docs/operations.md, "Prepared statements"). false behind a pooler that cannot keep
         * them (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).
         */
        prepared_statements: z.boolean().default(true),
      })
      .prefault({}),
    tron: z
      .strictObject({
        network: z.enum(NETWORK_NAMES, { message: `expected one of ${NETWORK_NAMES.map((n) => `"${n}"`).join(', ')}` }).default('mainnet'),
        // '' = the network's own TronGrid (api.trongrid.io on mainnet, nile.trongrid.io on Nile).
        api_url: z.union([z.literal(''), providerUrl(TRON_KEY_FORM)]).default(''),
        api_key: z.string().default(''),
        /** Providers in order of preference; empty = one provider from api_url and api_key. */
        providers: z
          .array(
            z.strictObject({
              url: providerUrl(TRON_KEY_FORM),
              api_key: z.string().default(''),
              /** Requests started per second at most; 0 = unpaced (an own node). */
              requests_per_second: z.number().min(0).max(10_000).default(12),
              timeout_seconds: z.number().positive().max(300).default(10),
            }),
          )
          .default([]),
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
        linger_hours: z
          .number()
          .min(0)
          .max(24 * 365)
          .default(24),
        /** Transfers below this amount are folded away in the console (still recorded). */
        dust_threshold: z
          .string()
          .refine((v) => parseAmount(v) !== undefined, { message: 'expected a decimal USDT amount such as "0.01"' })
          .default('0.01'),
      })
      .prefault({}),
    evm: evmNetworksSchema(),
    solana: solanaNetworksSchema(),
    ton: tonNetworksSchema(),
    invoices: z
      .strictObject({
        max_adjustment: amountString().default('0.099999'),
        // On an address that two or more accounts registered, the most of one price's amount pool one
        // account may hold (live reservations), in percent; 100 turns the rule off.
        shared_pool_max_percent: z.number().int().min(1).max(100).default(50),
      })
      .prefault({}),
    // Prices in fiat currencies (docs/configuration.md, Prices in fiat): rate sources and refusal limits.
    pricing: pricingConfigSchema().prefault({}),
    email: z
      .strictObject({
        smtp_url: z
          .string()
          .refine((v) => v === '' || /^smtps?:\/\//.test(v), {
            message: 'expected an smtp:// or smtps:// URL, or "" to turn email off',
          })
          .default(''),
        // "required": smtps://, or smtp:// that must upgrade with STARTTLS (a server or a man in the
        // middle that does not offer it gets neither the message nor the credentials). "opportunistic":
        // STARTTLS when offered, else plain text; only for a relay on this machine or a trusted network.
        smtp_tls: z.enum(['required', 'opportunistic']).default('required'),
        from: z.string().min(1).default('gatewayd <noreply@localhost>'),
        staff_notify: z.boolean().default(true),
        payment_notices: z.boolean().default(true),
      })
      .prefault({}),
    notify: z
      .strictObject({
        // A Telegram bot's token (from @BotFather); "" = no Telegram notices.
        telegram_bot_token: z
          .string()
          .regex(/^$|^\d{1,20}:[A-Za-z0-9_-]{20,100}$/, 'expected a bot token like 123456:ABC-DEF... or ""')
          .default(''),
        // The Bot API's base URL: a self-hosted Bot API server, or a test's stand-in.
        telegram_api_url: httpUrl('expected an absolute http(s) URL').default('https://api.telegram.org'),
      })
      .prefault({}),
    captcha: z
      .strictObject({
        provider: z.enum(['', 'turnstile', 'hcaptcha']).default(''),
        site_key: z.string().default(''),
        secret_key: z.string().default(''),
        verify_url: z.string().default(''),
      })
      .prefault({}),
    google: z
      .strictObject({
        client_id: z.string().default(''),
        jwks_url: httpUrl('expected an absolute http(s) URL').default('https://www.googleapis.com/oauth2/v3/certs'),
        issuers: z.array(z.string().min(1)).default(['https://accounts.google.com', 'accounts.google.com']),
      })
      .prefault({}),
    auth: z
      .strictObject({
        // Support staff (support.staff_emails) cannot open the support inbox until two-factor sign-in is on.
        require_2fa_for_staff: z.boolean().default(false),
      })
      .prefault({}),
    support: z
      .strictObject({
        staff_emails: z.array(z.string().email()).default([]),
        reference_prefix: z
          .string()
          .regex(/^[A-Z0-9]{1,10}$/, 'expected 1 to 10 uppercase letters or digits')
          .default('SUP'),
      })
      .prefault({}),
    webhooks: z
      .strictObject({
        allowed_ports: z.array(z.number().int().min(1).max(65535)).min(1).default([443]),
        allow_private_cidrs: z.array(z.string()).default([]),
        resolve: z.record(z.string(), z.string()).default({}),
        ca_file: z.string().default(''),
        timeout_seconds: z.number().positive().max(300).default(10),
      })
      .prefault({}),
    console: z
      .strictObject({
        // Where a transaction hash links to: {tx} is replaced by the hash; "" shows hashes without links;
        // "auto" is the network's own explorer (none on the simulated chain).
        explorer_tx_url: z
          .string()
          .refine(
            (v) => {
              if (v === '' || v === 'auto') return true;
              try {
                return new URL(v.replace('{tx}', 'x')).protocol === 'https:' && v.includes('{tx}');
              } catch {
                return false;
              }
            },
            {
              message:
                'expected an https URL containing {tx}, e.g. https://tronscan.org/#/transaction/{tx}, "auto" for the network\'s explorer, or "" for no links',
            },
          )
          .default('auto'),
      })
      .prefault({}),
    log: z
      .strictObject({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      })
      .prefault({}),
    metrics: z
      .strictObject({
        enabled: z.boolean().default(false),
        listen: listenSchema().default('127.0.0.1:9464'),
      })
      .prefault({}),
    // The simulated chain of `gatewayd dev` (never read by `gatewayd serve`).
    dev: z
      .strictObject({
        node_listen: listenSchema().default('127.0.0.1:0'),
        block_interval_ms: z.number().int().min(100).max(60_000).default(1000),
        solidity_lag: z.number().int().min(0).max(100).default(3),
        filler_per_block: z.number().int().min(0).max(1000).default(6),
        // The simulated EVM devnets: where their JSON-RPC listens, how far `finalized` trails the
        // latest block (`safe` half as far), and the widest eth_getLogs range they answer (0 = any).
        evm_listen: listenSchema().default('127.0.0.1:0'),
        evm_finality_lag: z.number().int().min(1).max(1000).default(8),
        evm_max_block_range: z.number().int().min(0).max(1_000_000).default(1000),
      })
      .prefault({}),
    rate_limits: z
      .strictObject({
        auth_per_ip: perMinute().default(20),
        auth_per_email: perMinute().default(10),
        two_factor_per_account: perMinute().default(5),
        public_per_ip: perMinute().default(10),
        chat_per_token: perMinute().default(30),
        api_per_key: perMinute().default(1200),
        invoices_per_merchant: perMinute().default(600),
      })
      .prefault({}),
    api_keys: z
      .strictObject({
        max_active: z.number().int().min(1).max(10_000).default(20),
      })
      .prefault({}),
  });
}

export type ConfigSchema = ReturnType<typeof buildConfigSchema>;
export type ParsedConfig = z.infer<ConfigSchema>;

let built: WeakRef<ConfigSchema> | undefined;

/**
 * The schema, built when a configuration is read and then held only weakly: a server reads its
 * configuration once, at start, after which the schema (about 0.4 MB with what zod compiles for
 * it) is garbage rather than kept for good (issue 32); code that reads several configurations in a
 * row (tools, tests) reuses one between collections.
 */
export function configSchema(): ConfigSchema {
  let schema = built?.deref();
  if (!schema) {
    schema = buildConfigSchema();
    built = new WeakRef(schema);
  }
  return schema;
}

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
