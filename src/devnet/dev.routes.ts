/**
 * The control routes of `gatewayd dev` (under /_dev/, outside the API and its OpenAPI document;
 * they exist only in a process started by `gatewayd dev`). They let a shell script or a test,
 * from another process, do what a wallet would do on the simulated chain:
 *   POST /_dev/merchant {email, name?, password}         a confirmed account and an API key
 *   POST /_dev/pay {invoice_id, amount?, late?, from?, fake_token?, failed?}
 *   POST /_dev/transfer {to, amount, from?, fake_token?, failed?}
 * A payment is only a transaction put into a block of the simulated node: the gateway then finds
 * it through its real watcher and verifier, exactly as on a real chain (or, for a fake token or a
 * failed transaction, rightly does not).
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
import { formatAmount, parseAmount, type Micros, micros } from '../lib/amounts.js';
import { iso } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { isValidTronAddress } from '../lib/tron.js';
import { FAKE_USDT_CONTRACTS, type SimulatedTron, type SimTransfer } from './tron-node.js';

/** Any amount a wallet could send, as a decimal string (0 included: zero-value transfers are spam that exists). */
const AMOUNT_RE = /^(0|[1-9][0-9]{0,17})(\.[0-9]{1,6})?$/;
const amount = z.string().regex(AMOUNT_RE, 'expected a decimal string with at most 6 fractional digits, e.g. "12.5"');
const address = z.string().refine(isValidTronAddress, 'expected a TRON address (T..., valid checksum)');

const transferOptions = {
  from: address.optional(),
  /** The transfer is emitted by a token that calls itself USDT but is not the network's USDT. */
  fake_token: z.boolean().optional(),
  /** The transaction fails (out of energy): it is in a block, but moves nothing. */
  failed: z.boolean().optional(),
};

const MerchantBody = z.strictObject({ email: emailField(), name: z.string().min(1).max(100).optional(), password: z.string() });
const PayBody = z.strictObject({ invoice_id: z.string().min(1).max(100), amount: amount.optional(), late: z.boolean().optional(), ...transferOptions });
const TransferBody = z.strictObject({ to: address, amount, ...transferOptions });

export interface DevChain {
  node: SimulatedTron;
  /** Blocks between a block and its solidification, and the block interval: when a payment can be seen. */
  solidityLag: number;
  blockIntervalMs: number;
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
  const inject = (t: SimTransfer & { amount: Micros }) => {
    const r = chain.node.transfer(t);
    return {
      tx_id: r.txId,
      to: t.to,
      amount: formatAmount(t.amount),
      token_contract: t.contract ?? deps.config.network.usdtContract,
      result: t.result ?? 'SUCCESS',
      block_number: r.blockNumber,
      block_timestamp: iso(r.blockTimestamp),
      // When the solidity node serves the block: from then on the watcher can see it.
      solidified_at: iso(r.blockTimestamp + chain.solidityLag * chain.blockIntervalMs),
    };
  };
  const tokenOf = (fake: boolean | undefined) => (fake ? FAKE_USDT_CONTRACTS[0] : undefined);
  const resultOf = (failed: boolean | undefined): SimTransfer['result'] => (failed ? 'FAILED' : 'SUCCESS');

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
    const micro = body.amount === undefined ? invoice.payableAmount : parseDecimal(body.amount);
    // Late: in the first block after the invoice's window, whenever that is (now if it has passed).
    const at = body.late ? Math.max(deps.clock.now(), invoice.expiresAt + 1) : undefined;
    const result = inject({ to: invoice.walletAddress, amount: micro, from: body.from, contract: tokenOf(body.fake_token), result: resultOf(body.failed), at });
    deps.log.info({ invoice_id: invoice.id, tx_hash: result.tx_id, block: result.block_number }, 'dev: simulated payment');
    const answer = { invoice_id: invoice.id, payable_amount: formatAmount(invoice.payableAmount), expires_at: iso(invoice.expiresAt), ...result };
    // The simulated chain never seals a block ahead of the clock, so a late payment to a pending
    // invoice waits for its expiry: say exactly when it will show, instead of appearing to do nothing.
    return c.json(at === undefined ? answer : { ...answer, note: lateNote(answer.solidified_at, deps.clock.now()) }, 200);
  });

  app.post('/_dev/transfer', async (c) => {
    const body = await readJson(c.req.raw, TransferBody);
    const result = inject({
      to: body.to,
      amount: parseDecimal(body.amount),
      from: body.from,
      contract: tokenOf(body.fake_token),
      result: resultOf(body.failed),
    });
    deps.log.info({ tx_hash: result.tx_id, block: result.block_number }, 'dev: simulated transfer');
    return c.json(result, 200);
  });
}

/** When a late payment becomes visible, in words a developer reading a terminal can act on. */
function lateNote(solidifiedAt: string, now: number): string {
  const minutes = Math.max(0, Math.ceil((Date.parse(solidifiedAt) - now) / 60_000));
  const when = minutes <= 1 ? 'within a minute' : `in about ${minutes} minutes`;
  return `late payment: the gateway sees it at ${solidifiedAt} (${when}), once its block, just after the invoice's expiry, is solidified; create the invoice with "expires_in_minutes": 1 to see it sooner`;
}

/** Micro-units of a validated decimal string (up to 18 integer digits, beyond parseAmount's invoice range). */
function parseDecimal(text: string): Micros {
  const [whole, frac = ''] = text.split('.');
  return micros(BigInt(whole!) * 1_000_000n + (parseAmount(`0.${frac.padEnd(6, '0')}`) ?? 0n));
}
