/**
 * The EVM watcher under test: a real node (anvil, as an `{chain}-devnet` twin with its pinned test
 * tokens), one or more hostile proxies in front of it as the configured providers, and the real
 * server on a real migrated database whose configuration enables the network through
 * [[evm.networks]] (beside the TRON devnet: both are test networks). The app's ManualClock starts at
 * the node's latest block time, so invoice windows and block times agree.
 */
import type { EvmWatch } from '../../src/chains/evm/watch.js';
import { findToken, NETWORKS, type EvmNetworkId, type NetworkId } from '../../src/chains/networks.js';
import { SECOND } from '../../src/lib/clock.js';
import { runEvmOnce } from '../../src/payments/evm/evm-watcher.js';
import { registerWallet } from '../../src/wallets/wallets.repo.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { insertInvoice, newMerchantId } from '../helpers/chain-fixtures.js';
import type { Invoice } from '../../src/invoices/invoice.model.js';
import { startDevChain, type DevChain } from '../chains/evm/devchain.js';
import { startHostileRpc, type HostileRpc } from '../chains/evm/hostile-rpc.js';

export interface EvmHarness {
  t: TestApp;
  chain: DevChain;
  /** The configured providers, in order: proxies in front of the one node. */
  providers: HostileRpc[];
  w: EvmWatch;
  /** Moves the app's clock on and runs the watcher until it has nothing more to do now. */
  pass(ms?: number): Promise<void>;
  /** A wallet at `address` receiving on `networks` (default: the harness network), of a new merchant or of `merchantId`; the merchant's id. */
  wallet(address: string, networks?: NetworkId[], merchantId?: string): Promise<string>;
  /** An open invoice of `amount` micro-units in `symbol` on the harness network (or `network`). */
  invoice(
    merchantId: string,
    address: string,
    amount: bigint,
    options?: { symbol?: 'USDT' | 'USDC'; network?: NetworkId; expiresInMs?: number },
  ): Promise<Invoice>;
  contract(symbol: 'USDT' | 'USDC'): string;
  close(): Promise<void>;
}

export async function startEvmHarness(
  id: EvmNetworkId,
  options: { providers?: number; finality?: string | number; also?: EvmNetworkId[]; config?: Record<string, unknown> } = {},
): Promise<EvmHarness> {
  const chain = await startDevChain(id);
  const providers: HostileRpc[] = [];
  for (let i = 0; i < (options.providers ?? 1); i++) providers.push(await startHostileRpc(chain.anvil.url));
  const latest = await chain.anvil.rpc('eth_getBlockByNumber', ['latest', false]);
  const now = Number(BigInt(latest.timestamp)) * 1000;
  const provider = (url: string) => ({ url, requests_per_second: 0, timeout_seconds: 5 });
  const networks = [
    { id, providers: providers.map((p) => provider(p.url)), finality: options.finality ?? 'finalized' },
    // Other networks enabled beside it (their watchers are not run here): an address may receive there too.
    ...(options.also ?? []).map((other) => ({ id: other, providers: [provider('http://127.0.0.1:9')] })),
  ];
  const t = await startTestApp({ now, config: { ...options.config, tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' }, evm: { networks } } });
  const w = t.deps.evm.get(id)!;
  return {
    t,
    chain,
    providers,
    w,
    async pass(ms = 5 * SECOND) {
      t.clock.advance(ms);
      while (await runEvmOnce(t.deps, w));
    },
    async wallet(address, networks = [id], merchantId) {
      const owner = merchantId ?? (await newMerchantId(t));
      await registerWallet(t.deps.db, networks, owner, 'Main', address, t.clock.now());
      return owner;
    },
    async invoice(merchantId, address, amount, o = {}) {
      const network = o.network ?? id;
      const symbol = o.symbol ?? 'USDT';
      const token = findToken(NETWORKS[network], symbol)!;
      const createdAt = t.clock.now();
      return insertInvoice(t, {
        address,
        amount,
        merchantId,
        network,
        token: symbol,
        tokenContract: token.contract,
        createdAt,
        expiresAt: createdAt + (o.expiresInMs ?? 3_600_000),
      });
    },
    contract: (symbol) => findToken(chain.network, symbol)!.contract,
    async close() {
      await t.close();
      for (const p of providers) await p.close();
      await chain.close();
    },
  };
}
