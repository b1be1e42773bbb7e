/**
 * The networks and tokens a new invoice offers, and an exact amount for each (docs/payments.md,
 * "Invoices with several options"): each option is checked against this instance's networks, given
 * the wallet that receives there, and allocated its own unique payable amount on its own (network,
 * token contract, address), inside the creation's transaction. Compiled queries only: this runs in
 * a group-commit unit (src/db/compiled.ts).
 */
import type { Tx } from '../db/database.js';
import { findNetwork, findToken, type Network, type NetworkId, type Token } from '../chains/networks.js';
import type { Micros } from '../lib/amounts.js';
import { AppError } from '../lib/errors.js';
import { addressHasOtherOwner, newestWalletOnLookup, type Wallet } from '../wallets/wallets.repo.js';
import { chooseAmount, claimCursor, holdsPoolShare, type Allocation, type AmountTarget, type ClaimedCursor } from './allocation.repo.js';
import { defaultToken, networkTokens, type OptionChoice } from './invoice-options.schemas.js';
import type { CreateInvoiceBody } from './invoices.schemas.js';
import type { CoreDeps } from '../core/core-deps.js';

type Deps = Pick<CoreDeps, 'config' | 'clock'>;

type OptionDeps = Pick<Deps, 'config' | 'clock'>;

/** One option of a new invoice: its network, its token and the wallet that receives it. */
export interface PlannedOption {
  network: Readonly<Network>;
  token: Readonly<Token>;
  wallet: Wallet;
  target: AmountTarget;
}

export type AllocatedOption = PlannedOption & { allocation: Exclude<Allocation, { kind: 'exhausted' }> };

function refuse(path: string, message: string): AppError {
  return new AppError('validation_error', 'The request is not valid', [{ path, message }]);
}

/**
 * The options of the request in order (option 0 first): those it names, or the wallet's first
 * network with `token` or its default. Each network must be enabled here and have the token; each
 * option is received by `wallet` when it receives on that network, else by the merchant's newest
 * wallet that does; none is 400 naming the network.
 */
export async function planOptions(
  tx: Tx,
  deps: OptionDeps,
  merchantId: string,
  request: { body: CreateInvoiceBody; sent: { network?: string; options?: unknown[] } },
  wallet: Wallet,
  walletNetworks: readonly string[],
): Promise<PlannedOption[]> {
  const { body, sent } = request;
  const enabled = deps.config.networks.map((n) => n.id);
  const own = wallet.network as NetworkId;
  const choices: OptionChoice[] = body.options ?? [{ network: own, token: body.token ?? (findNetwork(own) ? defaultToken(own) : 'USDT') }];
  // Where a refusal points: the field the client sent (the wallet when it named no network).
  const at = (i: number, field: 'network' | 'token') =>
    sent.options !== undefined ? `options.${i}.${field}` : field === 'token' ? 'token' : sent.network !== undefined ? 'network' : 'wallet_id';
  const planned: PlannedOption[] = [];
  for (const [i, choice] of choices.entries()) {
    const network = findNetwork(choice.network);
    if (!network || !enabled.includes(network.id)) {
      const whose = at(i, 'network') === 'wallet_id' ? " (the wallet's first network, used when the request names none)" : '';
      throw refuse(at(i, 'network'), `${choice.network}${whose} is not enabled on this instance; use one of ${enabled.join(', ')}`);
    }
    const token = findToken(network, choice.token);
    if (!token) {
      const whose = sent.options === undefined && sent.network === undefined ? "the wallet's first network: " : '';
      throw refuse(at(i, 'token'), `${whose}${networkTokens(network.id)}, not ${choice.token}`);
    }
    const receiver = walletNetworks.includes(network.id) ? wallet : await newestWalletOnLookup(merchantId, network.id).on(tx);
    if (!receiver) {
      throw refuse(at(i, 'network'), `none of your wallets receives on ${network.id} (${network.label}); add one, or add ${network.id} to a wallet's networks`);
    }
    planned.push({ network, token, wallet: receiver, target: { network: network.id, tokenContract: token.contract, address: receiver.address } });
  }
  return planned;
}

/**
 * An exact amount for every option, each on its own pool. Exhausted on option 0: returned, so the
 * caller commits what allocation learnt and answers 409 (as for a single option). Exhausted on a
 * later one: thrown, so the amounts already chosen for the earlier options roll back with it.
 */
export async function allocateOptions(
  tx: Tx,
  deps: OptionDeps,
  merchantId: string,
  planned: readonly PlannedOption[],
  base: Micros,
  maxAdjustment: Micros,
): Promise<AllocatedOption[] | { exhausted: true }> {
  const now = deps.clock.now();
  const allocated: AllocatedOption[] = [];
  for (const [i, option] of planned.entries()) {
    const cursor = await claimCursor(tx, option.target, base);
    await checkPoolShare(tx, deps, cursor, maxAdjustment, merchantId);
    const allocation = await chooseAmount(tx, cursor, maxAdjustment, now);
    if (allocation.kind === 'exhausted') {
      if (i === 0) return { exhausted: true };
      throw new AppError(
        'amount_pool_exhausted',
        `Every payable amount for this price on the address of option ${i} (${option.network.id} ${option.token.symbol}) is reserved (90 days); use another price, wallet or option`,
      );
    }
    allocated.push({ ...option, allocation });
  }
  return allocated;
}

/**
 * On an address another account registered too, one account may hold at most
 * `invoices.shared_pool_max_percent` of one price's amount pool (docs/security.md, Sharing a
 * receiving address): past it, 409 amount_pool_exhausted for that account only. An address with
 * one registrant keeps its whole pool.
 */
async function checkPoolShare(tx: Tx, deps: OptionDeps, cursor: ClaimedCursor, maxAdjustment: Micros, merchantId: string): Promise<void> {
  const percent = BigInt(deps.config.invoices.shared_pool_max_percent);
  if (percent >= 100n) return;
  const cap = (maxAdjustment * percent) / 100n;
  const shared = () => addressHasOtherOwner(tx, cursor.key.network, cursor.key.address, merchantId);
  if (!(await holdsPoolShare(tx, cursor, { maxAdjustment, cap: cap > 0n ? cap : 1n }, merchantId, shared, deps.clock.now()))) return;
  throw new AppError(
    'amount_pool_exhausted',
    `Another account also registered this address, and this account already holds ${percent}% of this price's payable amounts there (reserved 90 days); use another price or an address of your own`,
  );
}
