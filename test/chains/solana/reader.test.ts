/**
 * The Solana reader against loopback JSON-RPC providers serving a history the real SPL Token program
 * made (litesvm, svm.ts): slot windows read per watched account with paging and `until`, heads
 * checked, and hostile providers, each switched on alone: a failed transaction shown as a payment,
 * another mint shown into the account, a payment shown to the owner's address instead of its token
 * account, an omitted payment (caught by comparing with a second provider), a lying commitment, a
 * transaction withheld, and 429 with Retry-After. Each guard's test fails with the guard taken out.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { address, type Address, type KeyPairSigner } from '@solana/kit';
import * as token from '@solana-program/token';
import { compareReads } from '../../../src/chains/agreement.js';
import { ReadRefused } from '../../../src/chains/evm/reader.js';
import { EvmRpcClient, RpcError } from '../../../src/chains/evm/rpc.js';
import { NETWORKS } from '../../../src/chains/networks.js';
import { SolanaReader, watchedAccounts } from '../../../src/chains/solana/reader.js';
import { SolanaRpc } from '../../../src/chains/solana/rpc.js';
import type { SolanaTransfer } from '../../../src/chains/solana/transaction.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { startSolanaRpc, type Call, type SolanaRpcServer } from './solana-rpc.js';
import { SvmChain, USDC, USDT } from './svm.js';

const network = NETWORKS['solana-devnet'];
let chain: SvmChain;
let honest: SolanaRpcServer;
let liar: SolanaRpcServer;
let merchant: KeyPairSigner;
let merchantUsdt: Address;
let from: bigint;
let to: bigint;
const sigs: Record<string, string> = {};

before(async () => {
  chain = await SvmChain.start();
  const alice = await chain.wallet();
  const bob = await chain.wallet();
  merchant = await chain.wallet();
  const other = await chain.wallet();
  const aliceUsdt = await chain.fund(alice.address, USDT, 1_000_000_000n);
  const aliceUsdc = await chain.fund(alice.address, USDC, 1_000_000_000n);
  const aliceFake = await chain.fund(alice.address, chain.lookalike, 1_000_000_000n);
  const bobUsdt = await chain.fund(bob.address, USDT, 1_000_000_000n);
  merchantUsdt = await chain.ata(merchant.address, USDT);
  const merchantUsdc = await chain.ata(merchant.address, USDC);
  const merchantFake = await chain.ata(merchant.address, chain.lookalike);
  const otherUsdt = await chain.ata(other.address, USDT);
  chain.slot += 10n;
  from = chain.slot;
  const pay = async (name: string, payer: KeyPairSigner, source: Address, mint: string, ata: Address, owner: Address, amount: bigint) => {
    const entry = await chain.send(
      [
        token.getCreateAssociatedTokenIdempotentInstruction({ payer, ata, owner, mint: address(mint) }),
        token.getTransferCheckedInstruction({ source, mint: address(mint), destination: ata, authority: payer, amount, decimals: 6 }),
      ],
      payer,
    );
    sigs[name] = entry.signature;
    chain.slot += 3n;
  };
  await pay('p1', alice, aliceUsdt, USDT, merchantUsdt, merchant.address, 10_000_000n);
  await pay('p2', bob, bobUsdt, USDT, merchantUsdt, merchant.address, 20_000_000n);
  await pay('failed', alice, aliceUsdt, USDT, merchantUsdt, merchant.address, 5_000_000_000n);
  await pay('p3', alice, aliceUsdc, USDC, merchantUsdc, merchant.address, 30_000_000n);
  await pay('fake', alice, aliceFake, chain.lookalike, merchantFake, merchant.address, 10_000_000n);
  await pay('p4', bob, bobUsdt, USDT, merchantUsdt, merchant.address, 40_000_000n);
  await pay('other', bob, bobUsdt, USDT, otherUsdt, other.address, 50_000_000n);
  to = chain.slot;
  chain.ledger.advance(to + 40n, 32n);
  honest = await startSolanaRpc(chain.ledger);
  liar = await startSolanaRpc(chain.ledger);
});
after(async () => {
  await honest?.close();
  await liar?.close();
});
beforeEach(() => liar.set({}));

function reader(server: SolanaRpcServer, options: { pageSize?: number; waits?: number[] } = {}): SolanaReader {
  const clock = new ManualClock();
  const client = new EvmRpcClient({
    url: server.url,
    name: server === honest ? 'honest' : 'liar',
    clock,
    sleep: async (ms) => {
      options.waits?.push(ms);
      clock.advance(ms);
    },
  });
  return new SolanaReader({ network, rpc: new SolanaRpc(client), pageSize: options.pageSize });
}

function read(r: SolanaReader, owners: readonly string[] = [merchant.address], window = { from, to }) {
  return r.readTransfers({ ...window, recipients: owners, finalAtOrBelow: window.to });
}

const HONEST = [10_000_000n, 20_000_000n, 30_000_000n, 40_000_000n];
const raws = (r: { transfers: readonly unknown[] }) => (r.transfers as SolanaTransfer[]).map((t) => t.raw);

/** Rewrites the jsonParsed transaction of one signature. */
function rewriteTx(signature: string, edit: (tx: any) => void) {
  return (call: Call, result: any) => {
    if (call.method === 'getTransaction' && call.params[0] === signature && result) edit(result);
    return result;
  };
}

test("a window's transfers into the owner's USDT and USDC accounts, with the block's hash and time, and nothing of the look-alike, the failed one or another merchant", async () => {
  const r = await read(reader(honest));
  assert.equal(r.complete, true);
  assert.deepEqual(raws(r), HONEST);
  const p1 = r.transfers[0] as SolanaTransfer;
  const block = chain.ledger.block(p1.blockNumber)!;
  assert.deepEqual(
    [p1.txHash, p1.token, p1.to, p1.tokenAccount, p1.blockHash, p1.blockTimeMs, p1.finality],
    [sigs.p1, 'USDT', merchant.address, merchantUsdt, block.blockhash, block.blockTime * 1000, 'final'],
  );
  assert.equal((r.transfers[2] as SolanaTransfer).token, 'USDC');
  assert.deepEqual(
    r.dropped.map((d) => [d.reason, d.txHash]),
    [['failed', sigs.failed]],
  );
  const narrow = await read(reader(honest), [merchant.address], { from: p1.blockNumber + 1n, to });
  assert.deepEqual(raws(narrow), HONEST.slice(1), 'a slot below the window is not read');
});

test('pages are followed with before, and the next window stops at the last signature read (until), so a poll of an idle account costs one small answer', async () => {
  const r = reader(honest, { pageSize: 2 });
  const start = honest.calls.length;
  assert.deepEqual(raws(await read(r)), HONEST);
  const lists = honest.calls.slice(start).filter((c) => c.method === 'getSignaturesForAddress');
  assert.ok(
    lists.some((c) => c.params[1].before !== undefined),
    'paged with before',
  );
  assert.ok(lists.every((c) => c.params[1].commitment === 'finalized' && c.params[1].minContextSlot === Number(to)));
  const next = honest.calls.length;
  const later = await read(r, [merchant.address], { from: to + 1n, to: to + 8n });
  assert.deepEqual(later.transfers, []);
  const calls = honest.calls.slice(next);
  assert.deepEqual(
    calls.map((c) => c.method),
    ['getSignaturesForAddress', 'getSignaturesForAddress'],
    'one list per watched account (USDT and USDC), no transaction, no block',
  );
  assert.ok(
    calls.every((c) => typeof c.params[1].until === 'string'),
    'until the last signature read',
  );
});

test('heads: finalized is read with confirmed and believed only if it trails it, and never goes back', async () => {
  const r = reader(honest);
  const head = await r.finalHead();
  assert.equal(head.number, chain.ledger.finalized);
  assert.equal(head.hash, chain.ledger.block(head.number)!.blockhash);
  await r.checkNetwork();
  liar.set({ result: (c, res) => (c.method === 'getSlot' ? Number(chain.ledger.confirmed) : res) });
  await assert.rejects(reader(liar).finalHead(), (e: unknown) => e instanceof ReadRefused && e.reason === 'implausible_head' && /trail|behind/.test(e.message));
  liar.set({});
  const l = reader(liar);
  await l.finalHead();
  liar.set({ result: (c, res) => (c.method === 'getSlot' && c.params[0].commitment === 'finalized' ? res - 5 : res) });
  await assert.rejects(l.finalHead(), /went back/);
  liar.set({ result: (c, res) => (c.method === 'getGenesisHash' ? '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d' : res) });
  await assert.rejects(reader(liar).checkNetwork(), (e: unknown) => e instanceof ReadRefused && e.reason === 'wrong_chain');
});

/** A provider that lists the failed transfer as a success and hides its error (and edits it further). */
function showFailedAsPaid(edit: (tx: any) => void = () => {}) {
  return {
    result: (c: Call, res: any) => {
      if (c.method === 'getSignaturesForAddress') return res.map((e: any) => ({ ...e, err: null }));
      return rewriteTx(sigs.failed!, (tx) => {
        tx.meta.err = null;
        tx.meta.status = { Ok: null };
        edit(tx);
      })(c, res);
    },
  };
}

test('a failed transaction shown as a successful payment (its error hidden) is refused by the balances; one with forged balances too is caught by the second provider', async () => {
  liar.set(showFailedAsPaid());
  const hidden = await read(reader(liar));
  assert.deepEqual(raws(hidden), HONEST);
  assert.deepEqual(
    hidden.dropped.map((d) => [d.reason, d.txHash]),
    [['balance_mismatch', sigs.failed]],
  );
  liar.set(
    showFailedAsPaid((tx) => {
      const keys = tx.transaction.message.accountKeys.map((k: any) => k.pubkey);
      const post = tx.meta.postTokenBalances.find((b: any) => keys[b.accountIndex] === merchantUsdt);
      post.uiTokenAmount.amount = String(BigInt(post.uiTokenAmount.amount) + 5_000_000_000n);
    }),
  );
  const forged = await read(reader(liar));
  assert.deepEqual(raws(forged), [10_000_000n, 20_000_000n, 5_000_000_000n, 30_000_000n, 40_000_000n]);
  const { agreed, disagreements } = compareReads([
    { provider: 'honest', transfers: (await read(reader(honest))).transfers },
    { provider: 'liar', transfers: forged.transfers },
  ]);
  assert.deepEqual(
    agreed.map((t) => t.raw),
    HONEST,
  );
  assert.deepEqual(
    disagreements.map((d) => d.versions.map((v) => v.transfer?.raw)),
    [[undefined, 5_000_000_000n]],
  );
});

test("another mint shown moving into the merchant's USDT account is not the token", async () => {
  liar.set({
    result: (c, res) => {
      if (c.method === 'getSignaturesForAddress' && c.params[0] === merchantUsdt && c.params[1].before === undefined) {
        const fake = chain.ledger.transactions.get(sigs.fake!)!;
        return [
          ...res,
          { signature: fake.signature, slot: Number(fake.slot), err: null, memo: null, blockTime: fake.blockTime, confirmationStatus: 'finalized' },
        ].sort((a, b) => b.slot - a.slot);
      }
      return rewriteTx(sigs.fake!, (tx) => {
        const keys = tx.transaction.message.accountKeys;
        const ix = tx.transaction.message.instructions.find((i: any) => i.parsed?.type === 'transferChecked');
        const fakeAta = ix.parsed.info.destination;
        ix.parsed.info.destination = merchantUsdt;
        // The merchant's USDT account is shown as the receiver everywhere: key and balances.
        keys.forEach((k: any) => k.pubkey === fakeAta && (k.pubkey = merchantUsdt));
      })(c, res);
    },
  });
  const r = await read(reader(liar));
  assert.deepEqual(raws(r), HONEST);
  assert.ok(r.dropped.some((d) => d.reason === 'other_contract' && d.txHash === sigs.fake));
});

test("a payment shown to the owner's address instead of its token account pays nothing, and the omission is caught by comparing providers", async () => {
  liar.set({
    result: rewriteTx(sigs.p2!, (tx) => {
      const ix = tx.transaction.message.instructions.find((i: any) => i.parsed?.type === 'transferChecked');
      ix.parsed.info.destination = merchant.address;
    }),
  });
  const r = await read(reader(liar));
  assert.deepEqual(raws(r), [10_000_000n, 30_000_000n, 40_000_000n]);
  assert.ok(r.dropped.some((d) => d.reason === 'not_watched' && d.txHash === sigs.p2));
  const { disagreements } = compareReads([
    { provider: 'honest', transfers: (await read(reader(honest))).transfers },
    { provider: 'liar', transfers: r.transfers },
  ]);
  assert.deepEqual(
    disagreements.map((d) => [d.versions[0]!.transfer?.txHash, d.versions[1]!.transfer]),
    [[sigs.p2, undefined]],
  );
});

test('an omitted signature is a disagreement between two providers, never a silent gap', async () => {
  liar.set({ result: (c, res) => (c.method === 'getSignaturesForAddress' ? res.filter((e: any) => e.signature !== sigs.p4) : res) });
  const r = await read(reader(liar));
  assert.equal(r.complete, true, 'one provider alone cannot tell');
  const { agreed, disagreements } = compareReads([
    { provider: 'honest', transfers: (await read(reader(honest))).transfers },
    { provider: 'liar', transfers: r.transfers },
  ]);
  assert.deepEqual(
    agreed.map((t) => t.raw),
    HONEST.slice(0, 3),
  );
  assert.equal(disagreements.length, 1);
  assert.equal(disagreements[0]!.versions[1]!.transfer, undefined);
});

test('a lying commitment: a signature listed as only confirmed, or a node behind the window, holds the window open', async () => {
  liar.set({
    result: (c, res) =>
      c.method === 'getSignaturesForAddress' ? res.map((e: any) => (e.signature === sigs.p2 ? { ...e, confirmationStatus: 'confirmed' } : e)) : res,
  });
  const r = await read(reader(liar));
  assert.equal(r.complete, false);
  assert.deepEqual(raws(r), [10_000_000n, 30_000_000n, 40_000_000n]);
  assert.ok(r.dropped.some((d) => d.reason === 'not_final' && d.txHash === sigs.p2));
  // A node whose finalized slot is behind the window's end refuses (minContextSlot) instead of answering short.
  await assert.rejects(
    read(reader(honest), [merchant.address], { from, to: chain.ledger.finalized + 1n }),
    (e: unknown) => e instanceof RpcError && e.code === -32016,
  );
});

test('a transaction the provider lists but does not give holds the window open, and the next read does not skip it', async () => {
  liar.set({ result: (c, res) => (c.method === 'getTransaction' && c.params[0] === sigs.p3 ? null : res) });
  const r = reader(liar);
  const first = await read(r);
  assert.equal(first.complete, false);
  assert.ok(first.dropped.some((d) => d.reason === 'unavailable' && d.txHash === sigs.p3));
  liar.set({});
  assert.deepEqual(raws(await read(r)), HONEST, 'the window read again has it');
});

test('429 with Retry-After pauses the provider for that long, then the read goes on', async () => {
  const waits: number[] = [];
  liar.set({ rateLimit: { times: 1, retryAfter: '3' } });
  assert.deepEqual(raws(await read(reader(liar, { waits }))), HONEST);
  assert.deepEqual(waits, [3000]);
});

test('the requests of one poll: one per watched account (batched), one per new transaction, one per paying slot, however many invoices share the account', async () => {
  const r = reader(honest);
  const owners = [merchant.address, ...(await Promise.all([1, 2, 3].map(async () => (await chain.wallet()).address)))];
  await read(r, owners);
  const calls = honest.calls.length;
  const requests = honest.requests.length;
  const idle = await read(r, owners, { from: to + 1n, to: to + 8n });
  assert.deepEqual(idle.transfers, []);
  assert.equal(honest.calls.length - calls, watchedAccounts(network, owners).length, '8 accounts: 8 calls');
  assert.equal(honest.requests.length - requests, 1, 'in one batch');
});
