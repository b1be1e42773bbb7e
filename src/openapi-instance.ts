/**
 * The served document is this instance's (docs/api.md, The OpenAPI document): the rules that follow
 * its configuration are written into the schemas the server checks them with, so a validating proxy
 * or a strict client accepts exactly what this server accepts. They are:
 *
 * - `webhook_url`: the webhook URL pattern (webhooks.allowed_ports; `gatewayd dev`'s own policy:
 *   http or https to any host and port);
 * - `price_currency`, `connection_currency`: USDT and pricing.currencies, as an enum (invoices) or
 *   a pattern in any case (shop connections, which take `usdt` as well);
 * - `price_decimals`: each of those currencies' own decimals on an invoice's amount (JPY none);
 * - `enabled_network`: the network ids this instance receives on (config.networks), as an enum;
 * - `wallet_address`: the address shapes of those networks' families (a TRON-only instance takes no
 *   EVM address);
 * - `wallet_families`: one `if`/`then` per family: an address of that shape names only that
 *   family's enabled networks.
 * - `invoice_network`: the networks this instance watches (config.networks), as the enum of an
 *   invoice's `network` and its options' (another is refused with 400 naming these), and
 *   `invoice_options_example`: an example of `options` on those networks.
 *
 * Everything else is the same on every instance of a version, and `servers` names this one.
 */
import type { Config } from './config.js';
import { minorUnits, priceCurrencies } from './pricing/currencies.js';
import { uriPattern } from './lib/uri.js';
import { webhookUriRule } from './webhooks/webhooks.schemas.js';
import { INSTANCE_MARK } from './http/openapi.js';
import { ADDRESS_PATTERNS, addressPatternOf, type AddressShape } from './chains/address-codec.js';
import type { FamilyName } from './chains/networks.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A pattern matching each code in any case: ECMA-262 patterns have no case-insensitive flag. */
function anyCase(codes: readonly string[]): string {
  const letters = (code: string) => [...code].map((ch) => (/[A-Za-z]/.test(ch) ? `[${ch.toUpperCase()}${ch.toLowerCase()}]` : ch)).join('');
  return `^(${codes.map(letters).join('|')})$`;
}

/** One `if`/`then` per number of decimals among the fiat currencies: the amount's own pattern. */
function decimalRules(currencies: readonly string[]): Doc[] {
  const byDigits = new Map<number, string[]>();
  for (const code of currencies) {
    const digits = minorUnits(code);
    if (digits !== undefined) byDigits.set(digits, [...(byDigits.get(digits) ?? []), code]);
  }
  return [...byDigits.entries()]
    .sort(([a], [b]) => a - b)
    .map(([digits, codes]) => ({
      if: { required: ['currency'], properties: { currency: { enum: codes } } },
      then: { properties: { amount: { pattern: digits === 0 ? '^[0-9]+$' : `^[0-9]+(\\.[0-9]{1,${digits}})?$` } } },
    }));
}

/** The families this instance receives on, each with its enabled network ids, in the configuration's order. */
function families(config: Config): Array<[AddressShape, string[]]> {
  const byFamily = new Map<FamilyName, string[]>();
  for (const n of config.networks) byFamily.set(n.family, [...(byFamily.get(n.family) ?? []), n.id]);
  return [...byFamily.entries()].filter((e): e is [AddressShape, string[]] => e[0] in ADDRESS_PATTERNS);
}

function apply(schema: Doc, rule: string, config: Config): void {
  const currencies = priceCurrencies(config.pricing.currencies);
  switch (rule) {
    case 'webhook_url':
      schema.pattern = uriPattern(webhookUriRule(config));
      return;
    case 'price_currency':
      delete schema.pattern;
      schema.enum = currencies;
      return;
    case 'connection_currency':
      schema.pattern = anyCase(currencies);
      return;
    case 'invoice_network':
      schema.enum = config.networks.map((n) => n.id);
      if (!schema.enum.includes(schema.example)) schema.example = schema.enum.at(-1);
      return;
    case 'invoice_options_example':
      schema.example = config.networks.slice(0, 3).map((n) => ({ network: n.id, token: n.tokens[0]!.symbol }));
      return;
    case 'price_decimals': {
      const rules = decimalRules(config.pricing.currencies);
      if (rules.length > 0) schema.allOf = [...((schema.allOf as Doc[] | undefined) ?? []), ...rules];
      return;
    }
    case 'enabled_network':
      schema.enum = config.networks.map((n) => n.id);
      return;
    case 'wallet_address':
      schema.pattern = addressPatternOf(families(config).map(([family]) => family));
      return;
    case 'wallet_families':
      schema.allOf = families(config).map(([family, ids]) => ({
        if: { required: ['address'], properties: { address: { pattern: ADDRESS_PATTERNS[family] } } },
        then: { properties: { networks: { items: { enum: ids } } } },
      }));
      return;
    default:
      throw new Error(`unknown instance rule ${rule}`);
  }
}

/** Writes this instance's rules where the schemas are marked, and removes the marks. */
export function instanceRules(doc: Doc, config: Config): Doc {
  const pending: unknown[] = [doc];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    const schema = node as Doc;
    if (typeof schema[INSTANCE_MARK] === 'string') {
      apply(schema, schema[INSTANCE_MARK], config);
      delete schema[INSTANCE_MARK];
    }
    pending.push(...Object.values(schema));
  }
  return doc;
}
