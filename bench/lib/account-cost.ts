/**
 * The Solana and TON watchers' cost (`npm run bench:chain solana ton`): requests (HTTP) and calls
 * (JSON-RPC methods, a batch counts each; TON: one per HTTP request) a day PER provider, idle (the
 * accounts registered, no invoice open: the 10-minute sweep only) and busy (an invoice open on every
 * watched account all the hour, in USDT: a read of those token accounts every 10 s poll, and the sweep), for 1, 100 and
 * 1 000 watched accounts, two providers. Loopback providers in the real answer shapes
 * (test/chains/solana/solana-rpc.ts, test/chains/ton/index-server.ts) with no payments in the hour;
 * the chain moves 25 slots (or masterchain blocks) every 10 s. One simulated hour, scaled to a day.
 * Printed, never asserted.
 */
import { createHash, randomBytes } from 'node:crypto';
import { generateKeyPairSigner } from '@solana/kit';
import { NETWORKS } from '../../src/chains/networks.js';
import { SOLANA_GENESIS_HASHES } from '../../src/chains/solana/reader.js';
import { newId } from '../../src/lib/ids.js';
import { HOUR, SECOND } from '../../src/lib/clock.js';
import { Ledger } from '../../test/chains/solana/ledger.js';
import { startSolanaRpc } from '../../test/chains/solana/solana-rpc.js';
import { startIndexServer, TonChainModel } from '../../test/chains/ton/index-server.js';
import { newMerchantId } from '../../test/helpers/chain-fixtures.js';
import { startAccountHarness, type AccountHarness } from '../../test/payments/account-harness.js';

const POLL = 10 * SECOND;

/** Registers `addresses` as one merchant's wallets receiving on the network, and (busy) an open invoice on each. */
async function watch(h: AccountHarness, network: 'solana-devnet' | 'ton-devnet', addresses: string[], busy: boolean): Promise<void> {
  const merchantId = await newMerchantId(h.t);
  for (const [i, address] of addresses.entries()) {
    if (busy) {
      await h.invoice(address, 1_000_001n + BigInt(i), { merchantId });
      continue;
    }
    const id = newId('wal');
    await h.t.deps.db.insertInto('wallets').values({ id, merchant_id: merchantId, label: 'Main', address, network, created_at: h.t.clock.now() }).execute();
    await h.t.deps.db.insertInto('wallet_networks').values({ wallet_id: id, network, address }).execute();
  }
}

async function solana(accounts: number, busy: boolean): Promise<string> {
  const ledger = new Ledger(SOLANA_GENESIS_HASHES['solana-devnet']);
  ledger.advance(10_000n, 32n);
  const servers = [await startSolanaRpc(ledger), await startSolanaRpc(ledger)];
  const h = await startAccountHarness(
    'solana-devnet',
    servers.map((s) => ({ url: s.url })),
    ledger.blockTime(ledger.finalized) * 1000,
  );
  try {
    const owners = await Promise.all(Array.from({ length: accounts }, async () => (await generateKeyPairSigner()).address as string));
    await watch(h, 'solana-devnet', owners, busy);
    await h.pass(0);
    const before = servers.map((s) => ({ calls: s.calls.length, requests: s.requests.length }));
    for (let i = 0; i < HOUR / POLL; i++) {
      ledger.advance(ledger.confirmed + 25n, 32n);
      await h.pass(POLL);
    }
    const perDay = servers.map((s, i) => `${(s.requests.length - before[i]!.requests) * 24} / ${(s.calls.length - before[i]!.calls) * 24}`);
    // Idle, the sweep reads every pinned token's account of an owner; busy, the poll reads the USDT account each invoice asks.
    return `solana-devnet | ${busy ? 'busy' : 'idle'} | ${accounts} | ${busy ? `${accounts} polled, ${accounts * NETWORKS['solana-devnet'].tokens.length} swept` : accounts * NETWORKS['solana-devnet'].tokens.length} | ${perDay.join(' ; ')}`;
  } finally {
    await h.close();
    for (const s of servers) await s.close();
  }
}

async function ton(accounts: number, busy: boolean): Promise<string> {
  const network = NETWORKS['ton-devnet'];
  const model = new TonChainModel(network.tokens[0]!.contract);
  model.globalId = network.chainId!;
  // toncenter documents at most 1,000 owner_address values a jetton/transfers request; the stand-in takes
  // that many, in a URL as long as they make (about 62 KB), rather than Node's 16 KiB header default.
  const server = await startIndexServer(model, { toncenter: { maxOwners: 1000 } }, { maxHeaderSize: 128 * 1024 });
  const h = await startAccountHarness(
    'ton-devnet',
    [
      { url: server.toncenterUrl, kind: 'toncenter' },
      { url: server.tonapiUrl, kind: 'tonapi' },
    ],
    (1_780_000_000 + model.head) * 1000,
  );
  try {
    const owners = Array.from({ length: accounts }, () => `0:${createHash('sha256').update(randomBytes(16)).digest('hex')}`);
    await watch(h, 'ton-devnet', owners, busy);
    await h.pass(0);
    const before = { ...server.counts };
    for (let i = 0; i < HOUR / POLL; i++) {
      model.head += 25;
      await h.pass(POLL);
    }
    return `ton-devnet | ${busy ? 'busy' : 'idle'} | ${accounts} | ${accounts} | toncenter ${(server.counts.toncenter - before.toncenter) * 24} ; tonapi ${(server.counts.tonapi - before.tonapi) * 24}`;
  } finally {
    await h.close();
    await server.close();
  }
}

export async function accountCosts(families: { solana: boolean; ton: boolean }): Promise<void> {
  console.log('\n6. Solana and TON watchers, a day per provider (simulated hour of 10 s polls, scaled to a day; two providers)');
  console.log('network | shape | watched owners | token accounts read | per provider: requests / calls (TON: requests)');
  for (const busy of [false, true]) {
    for (const accounts of [1, 100, 1000]) {
      if (families.solana) console.log(await solana(accounts, busy));
      if (families.ton) console.log(await ton(accounts, busy));
    }
  }
}
