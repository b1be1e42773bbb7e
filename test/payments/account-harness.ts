/**
 * The Solana and TON watchers under test: the real server on a real migrated database whose
 * configuration enables `solana-devnet` or `ton-devnet` (beside the TRON devnet) with loopback
 * providers in the real answer shapes (test/chains/solana/solana-rpc.ts, test/chains/ton/index-server.ts),
 * and a pass that moves the app's clock and runs the network's watcher once.
 */
import type { AccountWatch } from '../../src/chains/account-watch.js';
import { findToken, NETWORKS, type NetworkId } from '../../src/chains/networks.js';
import { SECOND } from '../../src/lib/clock.js';
import type { Invoice } from '../../src/invoices/invoice.model.js';
import { runAccountOnce } from '../../src/payments/watch/account-watcher.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { insertInvoice, newMerchantId } from '../helpers/chain-fixtures.js';

export interface AccountHarness {
  t: TestApp;
  w: AccountWatch;
  pass(ms?: number): Promise<void>;
  invoice(address: string, amount: bigint, options?: { symbol?: 'USDT' | 'USDC'; merchantId?: string }): Promise<Invoice>;
  close(): Promise<void>;
}

export async function startAccountHarness(
  id: 'solana-devnet' | 'ton-devnet',
  providers: Array<{ url: string; kind?: 'toncenter' | 'tonapi' }>,
  now: number,
): Promise<AccountHarness> {
  const family = id.startsWith('solana') ? 'solana' : 'ton';
  const entries = providers.map((p) => ({ url: p.url, requests_per_second: 0, timeout_seconds: 5, ...(p.kind ? { kind: p.kind } : {}) }));
  const t = await startTestApp({
    now,
    config: { tron: { network: 'devnet', api_url: 'http://127.0.0.1:9' }, [family]: { networks: [{ id, providers: entries }] } },
  });
  const w = t.deps.accounts.get(id as NetworkId)!;
  return {
    t,
    w,
    async pass(ms = 10 * SECOND) {
      t.clock.advance(ms);
      await runAccountOnce(t.deps, w);
    },
    async invoice(address, amount, o = {}) {
      const symbol = o.symbol ?? 'USDT';
      const token = findToken(NETWORKS[id], symbol)!;
      const createdAt = t.clock.now();
      return insertInvoice(t, {
        address,
        amount,
        merchantId: o.merchantId ?? (await newMerchantId(t)),
        network: id,
        token: symbol,
        tokenContract: token.contract,
        createdAt,
        expiresAt: createdAt + 3_600_000,
      });
    },
    close: () => t.close(),
  };
}
