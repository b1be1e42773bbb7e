/**
 * Invoices on several networks: a test instance that watches BNB Smart Chain, Ethereum and Base
 * beside its TRON mainnet (real networks, as the TRON one is), a merchant with a TRON wallet and an
 * EVM wallet, and payments handed to the invoices feature as a watcher hands them
 * (applyChainPayment inside one write transaction).
 */
import assert from 'node:assert/strict';
import { writeTransaction } from '../../src/db/database.js';
import { applyChainPayment, type ChainPayment } from '../../src/invoices/invoice-payments.js';
import { networkOf, recordTransfers } from '../../src/payments/record.js';
import { findNetwork, findToken, type NetworkId, type TokenSymbol } from '../../src/chains/networks.js';
import { registerWallet } from '../../src/wallets/wallets.repo.js';
import type { Micros } from '../../src/lib/amounts.js';
import { startTestApp, type ConfigOverrides, type TestApp } from './app.js';
import { documentValidator, type DocumentValidator } from './openapi-validator.js';
import { ADDRESSES, micro, shop, type Shop } from './shop.js';

export const EVM_NETWORKS = ['bsc-mainnet', 'ethereum-mainnet', 'base-mainnet'] as const;

/** EIP-55 addresses no test sends from (their checksums are checked by the registry's codec). */
export const EVM_ADDRESSES = [
  '0x8ba1f109551bD432803012645Ac136ddd64DBA72',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0x52908400098527886E0F7030069857D2E4169EE7',
];

export function multichainConfig(extra: ConfigOverrides = {}): ConfigOverrides {
  return {
    server: { public_url: 'https://pay.example.com' },
    rate_limits: { invoices_per_merchant: 0 },
    evm: { networks: EVM_NETWORKS.map((id) => ({ id, providers: [{ url: `https://${id}.rpc.example` }] })) },
    ...extra,
  };
}

export async function startMultichainApp(extra: ConfigOverrides = {}): Promise<{ t: TestApp; validator: DocumentValidator }> {
  const t = await startTestApp({ config: multichainConfig(extra) });
  const doc = (await t.client().get('/openapi.json')).body;
  return { t, validator: documentValidator(doc) };
}

export interface MultichainShop extends Shop {
  /** A wallet on one EVM address receiving on bsc-mainnet, ethereum-mainnet and base-mainnet. */
  evmWalletId: string;
  evmAddress: string;
}

/** A merchant with a TRON wallet (through the API) and an EVM wallet on every EVM network of the instance. */
export async function multichainShop(t: TestApp, tronAddress: string = ADDRESSES[0], evmAddress: string = EVM_ADDRESSES[0]!): Promise<MultichainShop> {
  const s = await shop(t, tronAddress);
  const { wallet } = await registerWallet(t.deps.db, [...EVM_NETWORKS], s.merchant.id, 'EVM', evmAddress, t.clock.now());
  return { ...s, evmWalletId: wallet.id, evmAddress };
}

export function contractOf(network: NetworkId, token: TokenSymbol): string {
  return findToken(findNetwork(network)!, token)!.contract;
}

let txCounter = 0;

/** A transaction hash of 64 hex digits, new each call. */
export function nextTxHash(): string {
  txCounter += 1;
  return txCounter.toString(16).padStart(64, 'c');
}

/**
 * A verified transfer of `amount` (six decimals) on `network`'s `token` to `to`, applied in one write
 * transaction as the watcher applies it; the block time is now unless given.
 */
export async function applyPayment(
  t: TestApp,
  input: { network: NetworkId; token: TokenSymbol; to: string; amount: string; blockTimestamp?: number; txHash?: string; tokenContract?: string },
): Promise<{ kind: string; invoiceId: string | null; txHash: string }> {
  const txHash = input.txHash ?? nextTxHash();
  const blockTimestamp = input.blockTimestamp ?? t.clock.now();
  const payment: ChainPayment = {
    network: input.network,
    tokenContract: input.tokenContract ?? contractOf(input.network, input.token),
    to: input.to,
    amount: micro(input.amount) as Micros,
    txHash,
    blockTimestamp,
    transaction: {
      tx_hash: txHash,
      log_index: 0,
      from: input.network.startsWith('tron') ? ADDRESSES[3] : EVM_ADDRESSES[2],
      to: input.to,
      amount: input.amount,
      token_contract: input.tokenContract ?? contractOf(input.network, input.token),
      block_number: 100,
      block_timestamp: new Date(blockTimestamp).toISOString(),
    },
  };
  const result = await writeTransaction(t.deps.db, (trx, tx) => applyChainPayment(t.deps, trx, tx, payment, t.clock.now()));
  return { ...result, txHash };
}

/** The answer matches its operation's schema in the served document. */
export function assertDocumented(validator: DocumentValidator, method: string, path: string, res: { status: number; body: unknown }): void {
  assert.deepEqual(validator.response(method, path, res.status, res.body, 'application/json'), [], `${method} ${path} ${res.status}`);
}

let finalCounter = 0;
/**
 * A final verified transfer of `amount` micro-units on `network`, recorded as its watcher records it
 * (recordTransfers); its hash, 0x and 64 hex digits unless given (a TRON id has no 0x).
 */
export async function recordFinal(
  t: TestApp,
  network: NetworkId,
  token: TokenSymbol,
  to: string,
  amount: bigint,
  opts: { txHash?: string; from?: string } = {},
): Promise<string> {
  finalCounter += 1;
  const txHash = opts.txHash ?? `0x${finalCounter.toString(16).padStart(64, 'a')}`;
  const pinned = findToken(findNetwork(network)!, token)!;
  await recordTransfers(t.deps, networkOf(network), {
    transfers: [
      {
        network,
        token,
        contract: pinned.contract,
        from: opts.from ?? EVM_ADDRESSES[2]!,
        to,
        raw: amount * 10n ** BigInt(pinned.decimals - 6),
        amount: { exact: true, micros: amount as Micros },
        txHash,
        logIndex: 0,
        blockNumber: 100n,
        blockHash: `0x${'b'.repeat(64)}`,
        blockTimeMs: t.clock.now(),
        finality: 'final',
      },
    ],
  });
  return txHash;
}
