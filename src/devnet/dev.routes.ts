/**
 * The control routes of `gatewayd dev` (under /_dev/, outside the API and its OpenAPI document;
 * they exist only in a process started by `gatewayd dev`). They let a shell script or a test,
 * from another process, do what a wallet would do on the simulated chains:
 *   POST /_dev/merchant {email, name?, password}         a confirmed account and an API key
 *   POST /_dev/pay {invoice_id, option? | network? token?, amount?, late?, from?, fake_token?, failed?}
 *   POST /_dev/transfer {network?, token?, to, amount, from?, fake_token?, failed?}
 * A payment is only a transaction put into a block of a simulated chain: on tron-devnet (the
 * default) the simulated TRON node, on an EVM devnet a Transfer log of its token in the simulated
 * EVM chain (the raw value in the token's own decimals: payable x 10^(decimals - 6)), on
 * solana-devnet a transferChecked into the owner's token account carrying the option's Solana Pay
 * reference, on ton-devnet a jetton transfer carrying the option's comment. The gateway
 * then finds it through its real watcher and verifier, exactly as on a real chain (or, for a fake
 * token or a failed transaction, rightly does not). `/_dev/pay` pays the invoice's own network and
 * token, or the option a request names by its position or network.
 * They accept JSON only: a cross-site form cannot send it without a preflight, so a web page a
 * developer visits cannot make payments on their dev instance. And they answer only a request
 * whose Host is a loopback literal or `localhost` (a DNS-rebinding page's requests carry its own
 * host name) and that carries the control token printed at start (src/cli/dev-token.ts).
 */
import { z } from 'zod';
import type { App } from '../app.js';
import { emailField } from '../lib/email-rule.js';
import { insertKey } from '../api-keys/api-keys.repo.js';
import { DEV_HEADER, DEV_TOKEN_HEADER, isLoopbackHostHeader } from '../cli/dev-token.js';
import { safeEqual } from '../lib/crypto.js';
import { createConfirmedMerchant, passwordProblem } from '../cli/merchant.js';
import type { AppDeps } from '../app-deps.js';
import { SCOPES } from '../http/context.js';
import { zodIssuesToDetails } from '../http/openapi.js';
import { findInvoiceAnyMerchant } from '../invoices/invoices.repo.js';
import type { Network, Token } from '../chains/networks.js';
import { formatAmount, micros } from '../lib/amounts.js';
import { iso } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { invoiceOptions } from '../invoices/invoice-options.schemas.js';
import { addressOn, exactRaw, formatRaw, payTargets, pickTarget, rawAmount, refuse, shownAddress, simulatedNetwork, tokenOn } from './dev-targets.js';
import { FAKE_EVM_CONTRACTS, type SimulatedEvm } from './evm-node.js';
import { FAKE_USDT_CONTRACTS, type SimulatedTron } from './tron-node.js';
import { FAKE_SOLANA_MINT, type SimulatedSolana } from './solana-node.js';
import { FAKE_TON_MASTER, type SimulatedTon } from './ton-index.js';
import { optionReference } from '../chains/payment-reference.js';

/** Any amount a wallet could send, as a decimal string (0 included: zero-value transfers are spam that exists); its token's decimals are checked next. */
const AMOUNT_RE = /^(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$/;
const amount = z.string().regex(AMOUNT_RE, 'expected a decimal string, e.g. "12.5"');
const address = z.string().min(1).max(100);
const networkId = z.string().min(1).max(40);
const tokenSymbol = z.string().min(1).max(10);

const transferOptions = {
  /** The payer, in the network's address form. */
  from: address.optional(),
  /** The transfer is emitted by a token that calls itself USDT (or USDC) but is not the network's. */
  fake_token: z.boolean().optional(),
  /** The transaction fails (TRON: out of energy; EVM: reverted): it is in a block, but moves nothing. */
  failed: z.boolean().optional(),
};

const MerchantBody = z.strictObject({ email: emailField(), name: z.string().min(1).max(100).optional(), password: z.string() });
const PayBody = z.strictObject({
  invoice_id: z.string().min(1).max(100),
  /** Which of the invoice's options to pay: its position (0 = the invoice's own network), or its network and token. */
  option: z.number().int().min(0).max(100).optional(),
  network: networkId.optional(),
  token: tokenSymbol.optional(),
  amount: amount.optional(),
  late: z.boolean().optional(),
  ...transferOptions,
});
const TransferBody = z.strictObject({ network: networkId.optional(), token: tokenSymbol.optional(), to: address, amount, ...transferOptions });

export interface DevChain {
  node: SimulatedTron;
  /** The simulated EVM devnets, when this instance runs them. */
  evm?: SimulatedEvm;
  /** The simulated solana-devnet and ton-devnet, when this instance runs them. */
  solana?: SimulatedSolana;
  ton?: SimulatedTon;
  /** Blocks between a block and its solidification, and the block interval: when a payment can be seen. */
  solidityLag: number;
  blockIntervalMs: number;
}

/** One transfer to put on a chain, checked. */
interface Payment {
  network: Readonly<Network>;
  token: Readonly<Token>;
  to: string;
  raw: bigint;
  from: string | undefined;
  fake: boolean;
  failed: boolean;
  at?: number;
  /** The Solana Pay reference or the TON comment the payer's wallet adds (an invoice option's). */
  reference?: string;
}

async function readJson<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
  if (!/^application\/json\b/i.test(req.headers.get('content-type') ?? '')) {
    throw new AppError('validation_error', 'Send a JSON body with Content-Type: application/json');
  }
  let body: unknown;
  try {
    body = JSON.parse(await req.text());
  } catch {
    throw new AppError('invalid_json', 'The body is not valid JSON');
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new AppError('validation_error', 'The request is not valid', zodIssuesToDetails(parsed.error.issues));
  return parsed.data;
}

export function devRoutes(app: App, deps: AppDeps, chain: DevChain, token: string): void {
  app.use('/_dev/*', async (c, next) => {
    await next();
    c.header(DEV_HEADER, deps.config.network.id);
  });
  app.use('/_dev/*', async (c, next) => {
    if (!isLoopbackHostHeader(c.req.header('host'))) {
      throw new AppError('invalid_origin', 'The control routes answer only requests to a loopback address or localhost (the Host header)');
    }
    const given = c.req.header(DEV_TOKEN_HEADER);
    if (given === undefined || !safeEqual(given, token)) {
      throw new AppError('unauthorized', `Send the control token that \`gatewayd dev\` printed at start in the ${DEV_TOKEN_HEADER} header`);
    }
    await next();
  });
  const simulated = (id: string) =>
    id === deps.config.network.id ||
    chain.evm?.chain(id) !== undefined ||
    (id === 'solana-devnet' && chain.solana !== undefined) ||
    (id === 'ton-devnet' && chain.ton !== undefined);
  /** Puts the payment on its chain; the answer says where it landed and when the watcher can take it as final. */
  const inject = async (p: Payment) =>
    p.network.family === 'evm' ? injectEvm(p) : p.network.family === 'solana' ? injectSolana(p) : p.network.family === 'ton' ? injectTon(p) : injectTron(p);
  const injectSolana = (p: Payment) => {
    const solana = chain.solana!;
    const mint = p.fake ? FAKE_SOLANA_MINT : p.token.contract;
    const r = solana.pay({ owner: p.to, mint, decimals: p.token.decimals, raw: p.raw, reference: p.reference, from: p.from, failed: p.failed });
    return {
      network: p.network.id,
      token: p.token.symbol,
      tx_id: r.signature,
      to: p.to,
      token_account: r.tokenAccount,
      ...(p.from === undefined ? {} : { from: p.from }),
      amount: formatRaw(p.token, p.raw),
      raw_amount: p.raw.toString(),
      token_contract: mint,
      ...(p.reference === undefined ? {} : { reference: p.reference }),
      result: p.failed ? 'FAILED' : 'SUCCESS',
      block_number: r.slot,
      block_timestamp: iso(r.blockTimeMs),
      // When the slot is finalized: from then on the watcher can confirm it.
      finalized_at: iso(r.finalizedAtMs),
    };
  };
  const injectTon = async (p: Payment) => {
    const master = p.fake ? FAKE_TON_MASTER : p.token.contract;
    const r = await chain.ton!.pay({ owner: p.to, raw: p.raw, comment: p.reference, from: p.from, master, failed: p.failed });
    return {
      network: p.network.id,
      token: p.token.symbol,
      tx_id: r.txHash,
      ...(r.receiptHash === undefined ? {} : { receipt_tx_id: r.receiptHash }),
      to: p.to,
      jetton_wallet: r.jettonWallet,
      ...(p.from === undefined ? {} : { from: p.from }),
      amount: formatRaw(p.token, p.raw),
      raw_amount: p.raw.toString(),
      token_contract: master,
      ...(p.reference === undefined ? {} : { comment: p.reference }),
      result: p.failed ? 'ABORTED' : 'SUCCESS',
      block_number: r.seqno,
      block_timestamp: iso(r.sentAtMs),
      // When the masterchain block committing the receiving wallet's transaction comes.
      finalized_at: iso(r.committedAtMs),
    };
  };
  const injectTron = (p: Payment) => {
    const contract = p.fake ? FAKE_USDT_CONTRACTS[0]! : p.token.contract;
    const r = chain.node.transfer({ to: p.to, amount: p.raw, from: p.from, contract, result: p.failed ? 'FAILED' : 'SUCCESS', at: p.at });
    return {
      network: p.network.id,
      tx_id: r.txId,
      to: p.to,
      amount: formatAmount(micros(p.raw)),
      token_contract: contract,
      result: p.failed ? 'FAILED' : 'SUCCESS',
      block_number: r.blockNumber,
      block_timestamp: iso(r.blockTimestamp),
      // When the solidity node serves the block: from then on the watcher can see it.
      solidified_at: iso(r.blockTimestamp + chain.solidityLag * chain.blockIntervalMs),
    };
  };
  const injectEvm = (p: Payment) => {
    const evm = chain.evm!.chain(p.network.id)!;
    const contract = p.fake ? FAKE_EVM_CONTRACTS[0]! : p.token.contract;
    const r = evm.transfer({ to: p.to, raw: p.raw, from: p.from, contract, failed: p.failed, at: p.at });
    return {
      network: p.network.id,
      token: p.token.symbol,
      tx_id: r.txHash,
      to: p.to,
      ...(p.from === undefined ? {} : { from: p.from }),
      amount: formatRaw(p.token, p.raw),
      raw_amount: p.raw.toString(),
      token_contract: shownAddress(p.network, contract),
      result: p.failed ? 'REVERTED' : 'SUCCESS',
      block_number: r.blockNumber,
      block_hash: r.blockHash,
      block_timestamp: iso(r.blockTimeMs),
      log_index: r.logIndex,
      // When the block is `finalized`: from then on the watcher can confirm it (it sees it at once).
      finalized_at: iso(r.blockTimeMs + evm.lag * evm.interval),
    };
  };
  /** The payer, checked in the network's form, and the flags every transfer takes. */
  const extras = (network: Readonly<Network>, body: { from?: string; fake_token?: boolean; failed?: boolean }) => ({
    from: body.from === undefined ? undefined : addressOn(network, 'from', body.from),
    fake: body.fake_token === true,
    failed: body.failed === true,
  });

  app.post('/_dev/merchant', async (c) => {
    const body = await readJson(c.req.raw, MerchantBody);
    const problem = passwordProblem(body.password);
    if (problem) throw new AppError('validation_error', 'The request is not valid', [{ path: 'password', message: problem }]);
    const now = deps.clock.now();
    const merchant = await createConfirmedMerchant(deps.db, { email: body.email, name: body.name }, body.password, now);
    if (!merchant)
      throw new AppError('validation_error', 'The request is not valid', [{ path: 'email', message: 'an account with this email already exists' }]);
    const { key, secret } = await insertKey(deps.db, merchant.id, { name: 'dev', scopes: SCOPES, expiresInDays: null }, now);
    deps.log.info({ merchant_id: merchant.id, key_id: key.id }, 'dev: merchant and API key created');
    return c.json({ merchant: { id: merchant.id, email: merchant.email, name: merchant.name }, api_key: secret, scopes: key.scopes }, 201);
  });

  app.post('/_dev/pay', async (c) => {
    const body = await readJson(c.req.raw, PayBody);
    const invoice = await findInvoiceAnyMerchant(deps.db, body.invoice_id);
    if (!invoice) throw new AppError('not_found', `No invoice ${body.invoice_id} on this dev instance`);
    // Its stored options, by position as the API lists them, never recomputed from the invoice row
    // (which, once another option paid, holds that option's values).
    const options = invoiceOptions(invoice);
    const own = Math.max(
      0,
      options.findIndex((o) => o.status === 'paid'),
    );
    const target = pickTarget(payTargets(options), body, own);
    const network = simulatedNetwork(deps.config, simulated, target.network.id);
    if (body.late && (network.family === 'solana' || network.family === 'ton')) refuse('late', `a late payment is not simulated on ${network.id}`);
    // Late: in the first block after the invoice's window, whenever that is (now if it has passed).
    const at = body.late ? Math.max(deps.clock.now(), invoice.expiresAt + 1) : undefined;
    const raw = body.amount === undefined ? exactRaw(target) : rawAmount(target.token, body.amount);
    const reference = optionReference(network, invoice.id, target.position);
    const result = await inject({ network, token: target.token, to: target.address, raw, ...extras(network, body), at, reference });
    deps.log.info({ invoice_id: invoice.id, network: network.id, tx_hash: result.tx_id, block: result.block_number }, 'dev: simulated payment');
    const answer = { invoice_id: invoice.id, payable_amount: formatAmount(target.payable), expires_at: iso(invoice.expiresAt), ...result };
    // The simulated chain never seals a block ahead of the clock, so a late payment to a pending
    // invoice waits for its expiry: say exactly when it will show, instead of appearing to do nothing.
    if (at === undefined) return c.json(answer, 200);
    const note =
      'solidified_at' in result ? lateNote(result.solidified_at, deps.clock.now()) : lateEvmNote(result.block_timestamp, result.finalized_at, deps.clock.now());
    return c.json({ ...answer, note }, 200);
  });

  app.post('/_dev/transfer', async (c) => {
    const body = await readJson(c.req.raw, TransferBody);
    const network = simulatedNetwork(deps.config, simulated, body.network);
    const token = tokenOn(network, body.token);
    const to = addressOn(network, 'to', body.to);
    const result = await inject({ network, token, to, raw: rawAmount(token, body.amount), ...extras(network, body) });
    deps.log.info({ network: network.id, tx_hash: result.tx_id, block: result.block_number }, 'dev: simulated transfer');
    return c.json(result, 200);
  });
}

/** How long until a time, in words a developer reading a terminal can act on. */
function inWords(time: string, now: number): string {
  const minutes = Math.max(0, Math.ceil((Date.parse(time) - now) / 60_000));
  return minutes <= 1 ? 'within a minute' : `in about ${minutes} minutes`;
}

/** When a late payment becomes visible on tron-devnet. */
function lateNote(solidifiedAt: string, now: number): string {
  return `late payment: the gateway sees it at ${solidifiedAt} (${inWords(solidifiedAt, now)}), once its block, just after the invoice's expiry, is solidified; create the invoice with "expires_in_minutes": 1 to see it sooner`;
}

/** When a late payment becomes visible on an EVM devnet: seen with its block, recorded once that is final. */
function lateEvmNote(blockAt: string, finalAt: string, now: number): string {
  return `late payment: its block, just after the invoice's expiry, comes at ${blockAt} (${inWords(blockAt, now)}) and is final at ${finalAt}, when the gateway records it as late; create the invoice with "expires_in_minutes": 1 to see it sooner`;
}
