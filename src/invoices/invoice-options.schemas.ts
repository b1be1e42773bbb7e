/**
 * An invoice's networks and tokens in the API (docs/api.md, "Networks, tokens and options"): what
 * `POST /invoices` may ask (`network`, `token`, `options`) and the `options` every invoice answers
 * with, option 0 (the invoice's own fields) first, each with its payment link.
 */
import { z } from '@hono/zod-openapi';
import { INSTANCE_MARK } from '../http/openapi.js';
import { formatAmount } from '../lib/amounts.js';
import { findNetwork, findToken, NETWORK_IDS, tokenByContract, type NetworkId, type TokenSymbol } from '../chains/networks.js';
import { optionReference } from '../chains/payment-reference.js';
import { paymentUri } from '../chains/payment-uri.js';
import { ownOption, type Invoice, type InvoiceOption } from './invoice.model.js';

/** The most options one invoice may offer: each reserves an amount for 90 days on its own address. */
export const MAX_INVOICE_OPTIONS = 8;
export const TOKEN_SYMBOLS = ['USDT', 'USDC'] as const satisfies readonly TokenSymbol[];

export const MONEY = z
  .string()
  .regex(/^[0-9]+\.[0-9]{6}$/)
  .openapi({ example: '25.000000' });

/** A network id in a request: the enum is this instance's enabled networks (src/openapi-instance.ts). */
const requestNetwork = (description: string) =>
  z.enum(NETWORK_IDS).openapi({
    [INSTANCE_MARK]: 'invoice_network',
    description,
    example: 'bsc-mainnet',
  });

const requestToken = (description: string) => z.enum(TOKEN_SYMBOLS).openapi({ description, example: 'USDT' });

/** The networks that have only `symbol`, for the document's rule that a token must be one of its network's. */
function onlyWith(symbol: TokenSymbol): NetworkId[] {
  return NETWORK_IDS.filter((id) => {
    const tokens = findNetwork(id)!.tokens;
    return tokens.length === 1 && tokens[0]!.symbol === symbol;
  });
}

type Doc = Record<string, unknown>;

/**
 * The document's side of "a token the network has" (JSON Schema if/then, which a validator judges
 * and zod cannot say): on a network with one token, `token` is that one. `network` required where
 * the rule sits in an option (it always is), optional at the top.
 */
function tokenRules(): Doc[] {
  return TOKEN_SYMBOLS.map((symbol) => ({
    if: { required: ['network'], properties: { network: { enum: onlyWith(symbol) } } },
    // `network` named in `then` too: some linters judge `then` as if it closed the object.
    then: { properties: { network: { type: 'string' }, token: { const: symbol } } },
  })).filter((rule) => rule.if.properties.network.enum.length > 0);
}

export const InvoiceOptionRequestSchema = z
  .strictObject({
    network: requestNetwork("One of the networks this instance watches (the enum is this instance's)"),
    token: requestToken('USDT or USDC: one the network has (Base: USDC only; TRON: USDT only)'),
  })
  .openapi('InvoiceOptionRequest', nestedRules(tokenRules()) as unknown as Record<string, never>);

/** Rules of which at most one applies, as one if/then/else chain (one schema, no allOf). */
function nestedRules(rules: Doc[]): Doc {
  return rules.reduceRight<Doc>((rest, rule) => ({ ...rule, ...(Object.keys(rest).length > 0 ? { else: rest } : {}) }), {});
}

/**
 * The document's side of "network and token absent or those of options[0]": for each value
 * options[0] may hold, the top-level field equals it (JSON Schema has no way to compare two
 * values but by listing them).
 */
export function createInvoiceOptionRules(): Doc[] {
  const sameAsFirst = (field: 'network' | 'token', values: readonly string[]) =>
    values.map((value) => ({
      if: {
        required: ['options', field],
        properties: { [field]: { type: 'string' }, options: { prefixItems: [{ properties: { [field]: { const: value } } }] } },
      },
      then: { properties: { [field]: { const: value } } },
    }));
  return [...tokenRules(), ...sameAsFirst('network', NETWORK_IDS), ...sameAsFirst('token', TOKEN_SYMBOLS)];
}

/** The request fields, spread into CreateInvoiceSchema. */
export const optionRequestFields = {
  network: requestNetwork(
    "The network the invoice asks to be paid on; when absent, the wallet's first network. An option on a network the wallet does not receive on is " +
      'received by your newest wallet there. With `options`, absent or `options[0].network`',
  ).optional(),
  token: requestToken(
    "USDT or USDC; when absent USDT, or the network's only token (Base has USDC only). A token the network does not have is 400 `validation_error` naming its tokens. " +
      'With `options`, absent or `options[0].token`',
  ).optional(),
  options: z
    .array(InvoiceOptionRequestSchema)
    .min(1)
    .max(MAX_INVOICE_OPTIONS)
    .optional()
    .openapi({
      [INSTANCE_MARK]: 'invoice_options_example',
      uniqueItems: true,
      description:
        `The payer's choice: 1 to ${MAX_INVOICE_OPTIONS} networks and tokens, no pair twice; the first is option 0, what the invoice asks until paid. ` +
        'Each option gets its own unique payable amount on its own network, token and address, reserved at creation; the first verified exact payment ' +
        'on any option confirms the invoice and releases the others',
      example: [
        { network: 'tron-mainnet', token: 'USDT' },
        { network: 'bsc-mainnet', token: 'USDT' },
        { network: 'base-mainnet', token: 'USDC' },
      ],
    }),
};

/** The token an option gets when the request names none: USDT, or the network's only token. */
export function defaultToken(networkId: NetworkId): TokenSymbol {
  const network = findNetwork(networkId)!;
  return findToken(network, 'USDT') ? 'USDT' : network.tokens[0]!.symbol;
}

/** "base-mainnet has USDC only", "ethereum-mainnet has USDT and USDC". */
export function networkTokens(networkId: NetworkId): string {
  const symbols = findNetwork(networkId)!.tokens.map((t) => t.symbol);
  return `${networkId} has ${symbols.length === 1 ? `${symbols[0]} only` : symbols.join(' and ')}`;
}

export type OptionChoice = { network: NetworkId; token: TokenSymbol };

type OptionFields = { network?: NetworkId; token?: TokenSymbol; options?: Array<{ network: NetworkId; token: TokenSymbol }> };
type Issue = { path: PropertyKey[]; message: string };

/**
 * What is wrong with a request's network, token and options on every instance (the enabled
 * networks and the wallets are checked at creation). Refinements run on bodies that failed other
 * rules too, so anything not of its type is left to those.
 */
export function optionIssues(body: OptionFields): Issue[] {
  const issues: Issue[] = [];
  const known = (v: unknown): v is NetworkId => typeof v === 'string' && findNetwork(v) !== undefined;
  const tokenOn = (networkId: unknown, token: unknown, path: PropertyKey[]) => {
    if (known(networkId) && typeof token === 'string' && !findToken(findNetwork(networkId)!, token)) {
      issues.push({ path, message: `${networkTokens(networkId)}, not ${token}` });
    }
  };
  if (!Array.isArray(body.options) || body.options.length === 0) {
    tokenOn(body.network, body.token, ['token']);
    return issues;
  }
  const first = body.options[0]!;
  if (body.network !== undefined && first?.network !== undefined && body.network !== first.network) {
    issues.push({ path: ['network'], message: `with options, network must be absent or options[0].network (${first.network})` });
  }
  if (body.token !== undefined && first?.token !== undefined && body.token !== first.token) {
    issues.push({ path: ['token'], message: `with options, token must be absent or options[0].token (${first.token})` });
  }
  const seen = new Set<string>();
  body.options.forEach((o, i) => {
    if (o === null || typeof o !== 'object') return;
    tokenOn(o.network, o.token, ['options', i, 'token']);
    const key = `${o.network} ${o.token}`;
    if (seen.has(key)) issues.push({ path: ['options', i], message: `${o.network} with ${o.token} is offered twice` });
    seen.add(key);
  });
  return issues;
}

/**
 * The options a request names, tokens filled in, or undefined when it names no network (the
 * wallet's first network then, with `token` or its default). Fingerprinted as `options`, so
 * `network: X` alone, with its default token, or as `options: [{network: X}]` are one request.
 */
export function requestedChoices(body: OptionFields): OptionChoice[] | undefined {
  if (body.options !== undefined) return body.options.map((o) => ({ network: o.network, token: o.token }));
  return body.network !== undefined ? [{ network: body.network, token: body.token ?? defaultToken(body.network) }] : undefined;
}

export const InvoiceOptionSchema = z
  .object({
    network: z.enum(NETWORK_IDS).openapi({ example: 'bsc-mainnet' }),
    token: z.enum(TOKEN_SYMBOLS).openapi({ example: 'USDT' }),
    token_contract: z.string().openapi({
      description: "The token's pinned contract on that network (base58 on TRON, EIP-55 on EVM, the mint on Solana, the jetton master's raw form on TON)",
      example: '0x55d398326f99059fF775485246999027B3197955',
    }),
    address: z.string().openapi({ description: 'The receiving address on that network', example: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' }),
    payable_amount: MONEY.openapi({
      description: 'The exact amount to send on this option, six decimals on every token (an 18-decimal token gets it × 10^12)',
      example: '25.000002',
    }),
    status: z.enum(['open', 'paid', 'released']).openapi({
      description:
        'open: payable; paid: this option paid the invoice; released: another option paid it, or the invoice expired or was cancelled (a transfer on it then is a late payment)',
      example: 'open',
    }),
    payment_uri: z.string().openapi({
      description:
        'The link a wallet opens to pay exactly this: EIP-681 on EVM networks (`ethereum:<token>@<chain id>/transfer?address=<to>&uint256=<raw amount>`), ' +
        '`tron:<address>?token=<contract>&amount=<amount>` on TRON, Solana Pay on Solana (`solana:<owner>?amount=<amount>&spl-token=<mint>&reference=<key>`, ' +
        "and `&label=<the shop's name>` in the checkout's view), `ton://transfer/<owner, UQ form>?jetton=<master>&amount=<raw amount>&text=<comment>` on TON. " +
        'The Solana reference and the TON comment name this option of this invoice; they help match a payment, but the exact amount is what counts.',
      example:
        'ethereum:0x55d398326f99059fF775485246999027B3197955@56/transfer?address=0x8ba1f109551bD432803012645Ac136ddd64DBA72&uint256=25000002000000000000',
    }),
  })
  .openapi('InvoiceOption');

/** Option 0 and the stored ones, as the invoice offers them now. */
export function invoiceOptions(inv: Invoice): InvoiceOption[] {
  const stored = inv.options.find((o) => o.position === 0);
  const paid = inv.txHash !== null || inv.status === 'confirmed';
  const own = stored ?? ownOption(inv, paid ? 'paid' : inv.status === 'expired' ? 'released' : 'open');
  return [own, ...inv.options.filter((o) => o.position !== 0)];
}

/**
 * One option as the API answers it. `invoiceId` names the reference a Solana or TON link carries
 * (payment-reference.ts); `label`, the shop's name, is added to a Solana Pay link where it is known
 * (the payer's checkout view).
 */
export function toOptionResponse(o: InvoiceOption, invoiceId: string, label?: string) {
  const network = findNetwork(o.network);
  const token = network && tokenByContract(network, o.tokenContract);
  if (!network || !token) throw new Error(`invoice option on ${o.network} ${o.tokenContract}: not a network and token of this version`);
  return {
    network: network.id,
    token: token.symbol,
    token_contract: o.tokenContract,
    address: o.walletAddress,
    payable_amount: formatAmount(o.payableAmount),
    status: o.status,
    payment_uri: paymentUri(network, token, o.walletAddress, o.payableAmount, { reference: optionReference(network, invoiceId, o.position), label }),
  };
}
