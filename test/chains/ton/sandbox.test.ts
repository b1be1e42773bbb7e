/**
 * The TON readers on transactions the TVM really executed: @ton/sandbox runs a minimal TEP-74 jetton
 * (jetton-contract.ts: USDT's wallet data layout, its code installed as a library cell as USDT's is),
 * and sandbox-index.ts serves the transactions in toncenter's and tonapi's shapes. Proven here: the
 * wallets the contract deploys are where the readers derive them; a payment with a comment is read
 * alike by both; a transfer above the balance aborts at the sender; an `internal_transfer` forged to
 * the merchant's wallet by someone who is no jetton wallet aborts there (707); a receipt whose
 * notification cannot be paid aborts and bounces back (the sender's record still says "not aborted");
 * a look-alike jetton with the same code under another master reaches another wallet.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Blockchain, internal, type BlockchainTransaction, type SandboxContract, type TreasuryContract } from '@ton/sandbox';
import { Address, beginCell, contractAddress, toNano, type Cell } from '@ton/core';
import { compareReads } from '../../../src/chains/agreement.js';
import { NETWORKS, type Network } from '../../../src/chains/networks.js';
import { jettonWalletAddress } from '../../../src/chains/ton/jetton.js';
import { TonHttpClient } from '../../../src/chains/ton/rpc.js';
import { TonapiReader } from '../../../src/chains/ton/tonapi.js';
import { ToncenterReader } from '../../../src/chains/ton/toncenter.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { jettonCode, type JettonCode } from './jetton-contract.js';
import { serveSandbox, type Placed } from './sandbox-index.js';

let chain: Blockchain;
let code: JettonCode;
let admin: SandboxContract<TreasuryContract>;
let payer: SandboxContract<TreasuryContract>;
let merchant: SandboxContract<TreasuryContract>;
let attacker: SandboxContract<TreasuryContract>;
let master: Address;
let lookalike: Address;
const placed: Placed[] = [];
let mc = 2000;
let server: Awaited<ReturnType<typeof serveSandbox>>;
let network: Network;

/** Records a sandbox result's transactions, one masterchain block each, as one trace. */
function place(result: { transactions: BlockchainTransaction[] }, traceId: string) {
  for (const tx of result.transactions) {
    if (tx.inMessage?.info.type !== 'internal') continue;
    const account = tx.inMessage.info.dest;
    placed.push({ tx, account, mc: ++mc, traceId, master: walletMasters.get(account.toRawString()) });
  }
}
const walletMasters = new Map<string, Address>();

async function deployMinter(seed: number): Promise<Address> {
  const data = beginCell().storeAddress(admin.address).storeRef(code.walletLibrary).storeUint(seed, 8).endCell();
  const init = { code: code.minter, data };
  const address = contractAddress(0, init);
  await chain.sendMessage(internal({ from: admin.address, to: address, value: toNano('1'), stateInit: init, body: beginCell().endCell() }));
  return address;
}

async function wallet(of: Address, owner: Address): Promise<Address> {
  const a = Address.parseRaw(await jettonWalletAddress(of.toRawString(), owner.toRawString(), code.walletCodeHash));
  walletMasters.set(a.toRawString(), of);
  return a;
}

async function mint(of: Address, to: Address, amount: bigint) {
  await wallet(of, to);
  return chain.sendMessage(
    internal({ from: admin.address, to: of, value: toNano('0.5'), body: beginCell().storeUint(21, 32).storeAddress(to).storeCoins(amount).endCell() }),
  );
}

function transferBody(amount: bigint, to: Address, options: { comment?: string; forwardTon?: bigint } = {}): Cell {
  const b = beginCell()
    .storeUint(0x0f8a7ea5, 32)
    .storeUint(7, 64)
    .storeCoins(amount)
    .storeAddress(to)
    .storeAddress(payer.address)
    .storeBit(0)
    .storeCoins(options.forwardTon ?? toNano('0.01'));
  if (options.comment === undefined) b.storeBit(0);
  else b.storeBit(1).storeRef(beginCell().storeUint(0, 32).storeStringTail(options.comment).endCell());
  return b.endCell();
}

async function send(of: Address, amount: bigint, to: Address, options: { comment?: string; forwardTon?: bigint } = {}) {
  await wallet(of, to);
  return chain.sendMessage(
    internal({ from: payer.address, to: await wallet(of, payer.address), value: toNano('0.2'), body: transferBody(amount, to, options) }),
  );
}

/** Why a read dropped the transactions of these results (the window also holds the earlier tests'). */
const fresh = (read: { dropped: Array<{ reason: string; txHash?: string }> }, ...results: Array<{ transactions: BlockchainTransaction[] }>) => {
  const hashes = new Set(results.flatMap((r) => r.transactions.map((t) => t.hash().toString('hex'))));
  return read.dropped.filter((d) => d.txHash !== undefined && hashes.has(d.txHash)).map((d) => d.reason);
};
const onlyAt = (result: { transactions: any[] }, account: Address) => result.transactions.filter((t) => t.inMessage?.info.dest?.equals?.(account));

function readers() {
  const clock = new ManualClock();
  const client = (url: string) => new TonHttpClient({ url, clock, sleep: async (ms) => clock.advance(ms), requestsPerSecond: 1000 });
  return {
    toncenter: new ToncenterReader({ network, client: client(server.toncenterUrl), walletCodeHash: code.walletCodeHash }),
    tonapi: new TonapiReader({ network, client: client(server.tonapiUrl), walletCodeHash: code.walletCodeHash }),
  };
}

async function readBoth(from: bigint) {
  const { toncenter, tonapi } = readers();
  const head = (await toncenter.finalHead()).number;
  await tonapi.finalHead();
  const range = { from, to: head, recipients: [merchant.address.toString()], finalAtOrBelow: head };
  return { tc: await toncenter.readTransfers(range), ta: await tonapi.readTransfers(range), head };
}

before(async () => {
  code = await jettonCode();
  chain = await Blockchain.create();
  chain.libs = code.libs;
  admin = await chain.treasury('admin');
  payer = await chain.treasury('payer');
  merchant = await chain.treasury('merchant');
  attacker = await chain.treasury('attacker');
  master = await deployMinter(1);
  lookalike = await deployMinter(2);
  const mainnet = NETWORKS['ton-mainnet'];
  network = { ...mainnet, tokens: [{ ...mainnet.tokens[0]!, contract: master.toRawString() }] };
  server = await serveSandbox(
    () => placed,
    () => mc,
  );
  const minted = await mint(master, payer.address, 100_000_000n);
  place(minted, Buffer.alloc(32, 1).toString('base64'));
  const mintedLookalike = await mint(lookalike, payer.address, 100_000_000n);
  place(mintedLookalike, Buffer.alloc(32, 2).toString('base64'));
});
after(() => server?.close());

test('the contract deploys each jetton wallet where the readers derive it (library-cell code, USDT data layout)', async () => {
  const payerWallet = await wallet(master, payer.address);
  const deployed = placed.filter((p) => p.account.equals(payerWallet));
  assert.equal(deployed.length, 1, 'the mint reached the derived address');
  const d = deployed[0]!.tx.description as any;
  assert.equal(d.aborted, false);
  assert.notEqual((await wallet(lookalike, payer.address)).toRawString(), payerWallet.toRawString());
});

test('a payment with a comment: both indexes read the receipt at the merchant’s wallet, with the amount and comment', async () => {
  const result = await send(master, 12_500_000n, merchant.address, { comment: 'inv_7' });
  place(result, Buffer.alloc(32, 3).toString('base64'));
  const receipt = onlyAt(result, await wallet(master, merchant.address));
  assert.equal(receipt.length, 1);
  const { tc, ta } = await readBoth(2000n);
  assert.equal(tc.complete, true);
  assert.deepEqual(
    tc.transfers.map((t) => [t.from, t.to, t.raw, t.reference, t.txHash]),
    [[payer.address.toRawString(), merchant.address.toRawString(), 12_500_000n, 'inv_7', receipt[0].hash().toString('hex')]],
  );
  const cmp = compareReads([
    { provider: 'toncenter', transfers: tc.transfers },
    { provider: 'tonapi', transfers: ta.transfers },
  ]);
  assert.equal(cmp.agreed.length, 1);
  assert.deepEqual(cmp.disagreements, []);
});

test('a transfer above the balance aborts at the sender (706); an internal_transfer forged to the merchant’s wallet aborts there (707)', async () => {
  const from = BigInt(mc + 1);
  const over = await send(master, 999_000_000n, merchant.address);
  place(over, Buffer.alloc(32, 4).toString('base64'));
  const payerWallet = await wallet(master, payer.address);
  assert.equal((onlyAt(over, payerWallet)[0].description as any).computePhase.exitCode, 706);
  const merchantWallet = await wallet(master, merchant.address);
  const forged = await chain.sendMessage(
    internal({
      from: attacker.address,
      to: merchantWallet,
      value: toNano('0.1'),
      body: beginCell()
        .storeUint(0x178d4519, 32)
        .storeUint(0, 64)
        .storeCoins(50_000_000n)
        .storeAddress(attacker.address)
        .storeAddress(attacker.address)
        .storeCoins(0)
        .storeBit(0)
        .endCell(),
    }),
  );
  place(forged, Buffer.alloc(32, 5).toString('base64'));
  assert.equal((onlyAt(forged, merchantWallet)[0].description as any).computePhase.exitCode, 707);
  const { tc, ta } = await readBoth(from);
  assert.deepEqual(tc.transfers, []);
  assert.deepEqual(ta.transfers, []);
  assert.deepEqual(fresh(tc, over, forged), ['aborted']);
  assert.deepEqual(fresh(ta, over, forged), ['aborted'], 'the forged receipt, aborted by the wallet itself');
});

test('a receipt that cannot pay its notification aborts and bounces back, though the sender’s record says not aborted', async () => {
  const from = BigInt(mc + 1);
  const bounced = await send(master, 5_000_000n, merchant.address, { forwardTon: toNano('5') });
  place(bounced, Buffer.alloc(32, 6).toString('base64'));
  const merchantWallet = await wallet(master, merchant.address);
  const receipt = onlyAt(bounced, merchantWallet)[0];
  assert.equal((receipt.description as any).aborted, true);
  const payerWallet = await wallet(master, payer.address);
  assert.equal((onlyAt(bounced, payerWallet)[0].description as any).aborted, false, "the sender's transaction, which toncenter's record describes, succeeded");
  assert.ok(
    onlyAt(bounced, payerWallet).some((t) => t.inMessage.info.bounced),
    'the internal_transfer came back',
  );
  const { tc, ta } = await readBoth(from);
  assert.deepEqual(tc.transfers, []);
  assert.deepEqual(ta.transfers, []);
  assert.deepEqual(fresh(tc, bounced), ['aborted']);
  assert.deepEqual(fresh(ta, bounced), ['aborted']);
  const balance = await chain.runGetMethod(payerWallet, 'get_wallet_data');
  assert.equal(balance.stackReader.readBigNumber(), 100_000_000n - 12_500_000n, 'the bounce restored the payer’s balance');
});

test('a look-alike jetton with the same code under another master goes to another wallet and is no payment', async () => {
  const from = BigInt(mc + 1);
  const fake = await send(lookalike, 12_500_000n, merchant.address, { comment: 'inv_7' });
  place(fake, Buffer.alloc(32, 7).toString('base64'));
  const { tc, ta } = await readBoth(from);
  assert.deepEqual(tc.transfers, []);
  assert.deepEqual(ta.transfers, []);
  assert.deepEqual(fresh(tc, fake), ['other_contract']);
});
